"""CSV files read with Arrow in byte ranges, as TFX's CsvExampleGen reads them (no TFX here).

CsvExampleGen (tfx 1.16) reads each file line by line in Python, joins lines while their quote
count is odd and parses every line with the csv module. Here pyarrow reads a file in byte ranges,
so that a range's memory does not grow with the file and ranges run in parallel:

  ranges()        cut a file after its header at row ends (a newline after an even number of
                  quotes, CsvExampleGen's own rule), RANGE_BYTES apart;
  read_range()    one range as a table of strings (pyarrow, every column a string), in the
                  file's dialect (contracts/csv_dialect.py: `,` `;` or tab; the header line,
                  byte-order mark and all, is left to the caller);
  without_header_rows()  the rows that repeat the header left out;
  decimal_points()  a `;`/tab file's cells as its numbers mean them (`12,5` as `12.5`): the
                  cells types are inferred from (type_inference.py);
  row_count()     a file's rows, for TFX's own reader's progress.
"""

import csv
import io
from typing import List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from contracts import csv_dialect, text_numbers

RANGE_BYTES = 8 << 20  # ~100,000 numeric rows: 0.5-0.6 s of work, ~150 MB at its peak
QUOTE, NEWLINE = ord('"'), ord('\n')


class CsvError(ValueError):
  """The file cannot be read as CsvExampleGen would read it (one line: file, row, what)."""


def row_count(stream) -> int:
  """The rows after the header line of a binary CSV stream, blank lines skipped (CsvExampleGen's
  records), read by pyarrow in blocks with only the first column converted."""
  dialect, names = csv_dialect.header(stream.readline())
  try:
    reader = pa_csv.open_csv(
      stream,
      read_options=pa_csv.ReadOptions(column_names=names),
      parse_options=_parse_options(dialect),
      convert_options=pa_csv.ConvertOptions(
        include_columns=names[:1], column_types={names[0]: pa.string()}
      ),
    )
    return sum(batch.num_rows for batch in reader)
  except pa.ArrowInvalid as e:
    raise CsvError(str(e).splitlines()[0]) from None


def ranges(data, start: int, range_bytes: int = 0) -> List[Tuple[int, int, int]]:
  """(begin, end, line number of begin) of byte ranges of data[start:] (bytes or an mmap) that
  end at row ends, about range_bytes (default RANGE_BYTES) each."""
  range_bytes = range_bytes or RANGE_BYTES
  array = np.frombuffer(data, dtype=np.uint8)
  cuts, begin, quotes = [], start, 0
  while len(data) - begin > range_bytes:
    target = begin + range_bytes
    quotes += int(np.count_nonzero(array[begin:target] == QUOTE))
    end = _row_end(array, target, quotes)
    if end is None:
      break
    quotes += int(np.count_nonzero(array[target:end] == QUOTE))
    cuts.append((begin, end))
    begin = end
  if begin < len(data):
    cuts.append((begin, len(data)))
  lines = 1 + int(np.count_nonzero(array[:start] == NEWLINE))
  numbered = []
  for begin, end in cuts:
    numbered.append((begin, end, lines))
    lines += int(np.count_nonzero(array[begin:end] == NEWLINE))
  return numbered


def _row_end(array: np.ndarray, target: int, quotes_before: int) -> Optional[int]:
  """The offset just past the first newline at or after target outside quotes (None: none)."""
  window = 1 << 16
  position, parity = target, quotes_before % 2
  while position < len(array):
    chunk = array[position : position + window]
    inside = (np.cumsum(chunk == QUOTE) + parity) % 2  # quote parity after each byte
    ends = np.flatnonzero((chunk == NEWLINE) & (inside == 0))
    if len(ends):
      return position + int(ends[0]) + 1
    parity = int(inside[-1])
    position += window
  return None


def _parse_options(dialect: csv_dialect.Dialect) -> pa_csv.ParseOptions:
  return pa_csv.ParseOptions(delimiter=dialect.delimiter, newlines_in_values=True)


def read_range(
  data: bytes,
  names: Sequence[str],
  where: str,
  first_row: int,
  dialect: csv_dialect.Dialect = csv_dialect.Dialect(),
) -> pa.Table:
  """One range's rows of a file of `dialect` (contracts/csv_dialect.py), every column a string;
  empty cells '' (blank lines skipped, as CsvExampleGen does). `where` and `first_row` name the
  file and its row in errors."""
  try:
    return pa_csv.read_csv(
      io.BytesIO(data),
      read_options=pa_csv.ReadOptions(column_names=list(names), use_threads=True),
      parse_options=_parse_options(dialect),
      convert_options=pa_csv.ConvertOptions(
        column_types={name: pa.string() for name in names},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
      ),
    )
  except pa.ArrowInvalid as e:
    raise CsvError(_explained(data, len(names), where, first_row, e, dialect.delimiter)) from None


def decimal_points(table: pa.Table) -> pa.Table:
  """The table's cells as a file of decimal commas (csv_dialect.Dialect.decimal_comma) means
  their numbers: text_numbers.with_decimal_point's rule, vectorised (a cell with one comma and no
  point has its comma a point; points grouping thousands before the comma are left out). Its
  column types and numbers are read from these cells; a STRING column keeps the cells as
  written."""
  columns = []
  for column in table.columns:
    cells = column.combine_chunks()
    one_comma = pc.equal(pc.count_substring(cells, ','), 1)
    comma = pc.and_(one_comma, pc.invert(pc.match_substring(cells, '.')))
    grouped = pc.and_(one_comma, pc.match_substring_regex(cells, text_numbers.DOTTED_THOUSANDS))
    if not (pc.any(comma).as_py() or pc.any(grouped).as_py()):
      columns.append(cells)
      continue
    dotted = pc.replace_substring(cells, ',', '.', max_replacements=1)
    ungrouped = pc.replace_substring(pc.replace_substring(cells, '.', ''), ',', '.')
    columns.append(pc.if_else(comma, dotted, pc.if_else(grouped, ungrouped, cells)))
  return pa.Table.from_arrays(columns, table.column_names)


def without_header_rows(table: pa.Table) -> Tuple[pa.Table, int]:
  """(the table without the rows that repeat its header, how many there were): files
  concatenated with `cat`, or exports appended to, hold the header again mid-file; read as data,
  it turns every column into strings and the label's name into a class. The columnar form of
  csv_dialect.repeats_header."""
  repeats = None
  for name in table.column_names:
    same = pc.equal(pc.utf8_trim_whitespace(table.column(name)), name.strip())
    repeats = same if repeats is None else pc.and_(repeats, same)
  count = (pc.sum(repeats).as_py() or 0) if repeats is not None else 0
  return (table.filter(pc.invert(repeats)) if count else table), count


def _explained(
  data: bytes, columns: int, where: str, first_row: int, error: Exception, delimiter: str = ','
) -> str:
  """A one-line reason for a range pyarrow refused: not UTF-8, or a row of another width."""
  try:
    text = data.decode('utf-8')
  except UnicodeDecodeError as e:
    row = first_row + data[: e.start].count(b'\n')
    return (
      f'{where}: not UTF-8 (byte 0x{data[e.start]:02x} on line {row}); CsvExampleGen reads '
      'UTF-8: save the file as UTF-8 CSV'
    )
  rows = csv.reader(io.StringIO(text, newline=''), delimiter=delimiter)
  for number, cells in enumerate(rows, start=first_row):
    if cells and len(cells) != columns:
      return f'{where}: line {number} {csv_dialect.width_problem(len(cells), columns)}'
  return f'{where}: {str(error).splitlines()[0]}'
