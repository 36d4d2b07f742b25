"""CSV rows → tf.Examples with Arrow, the same tf.Examples as TFX's CsvExampleGen (no TFX here).

CsvExampleGen (tfx 1.16) reads each file line by line in Python, joins lines while their quote
count is odd, parses every line with the csv module, infers each column's type over the whole
split (tfx_bsl's ColumnTypeInferrer) and builds a tf.train.Example per row in Python: 37-43 s
for 200,000 rows x 11 numeric columns on this machine. What must be done is 1.5 s on one core:
pyarrow's CSV reader 0.11 s, tfx-bsl's C++ RecordBatchToExamples 1.10 s, the TFRecord write
0.28 s. This module does that work in byte ranges of a file, so that a range's memory does not
grow with the file and ranges run in parallel:

  ranges()        cut a file after its header at row ends (a newline after an even number of
                  quotes, CsvExampleGen's own rule), RANGE_BYTES apart;
  read_range()    one range as a table of strings (pyarrow, every column a string);
  column_types()  each column's type as tfx_bsl infers it: INT when every non-empty cell is a
                  Python int within int64, else FLOAT when every one is a Python float, else
                  STRING; UNKNOWN when all are empty. Cells of the common forms are judged by
                  pyarrow regexes, the others one by one with Python's int() / float(), as
                  CsvExampleGen does; a STRING column's cells counted as numbers written as
                  text (contracts/text_numbers.census: `$13.08`, `8.91%`, `unknown`);
  numbers_from_text()  over a split's ranges, the STRING columns read as numbers (NUMBER_TEXT);
  to_examples()   the range's columns as Arrow lists of one value (none for an empty cell,
                  and, unlike CsvExampleGen, none for inf or nan in a FLOAT column: counted;
                  a NUMBER_TEXT column's numbers as floats, its other cells none: counted;
                  no feature kind at all for an UNKNOWN column, as CsvExampleGen's
                  tf.train.Feature()) encoded by RecordBatchToExamples.
"""

import csv
import enum
import io
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from contracts import csv_dialect, text_numbers

RANGE_BYTES = 8 << 20  # ~100,000 numeric rows: 0.5-0.6 s of work, ~150 MB at its peak
QUOTE, NEWLINE = ord('"'), ord('\n')
_INT64 = np.iinfo(np.int64)

# A cell of digits with an optional sign is a Python int (in int64 below 19 characters); pyarrow's
# string-to-number casts accept a subset of what Python's int() / float() read ('+5' and ' 5'
# they refuse), with the same values. A refused cast costs ~90 ms on 200,000 cells: tried once.
_INTEGER = r'^[+-]?[0-9]+$'
_SHORT = 18  # characters: '-' and 17 digits, or 18 digits, always within int64


class ColumnType(enum.IntEnum):
  """tfx_bsl's csv_decoder.ColumnType order: a column takes the highest type of its cells."""

  UNKNOWN = -1
  INT = 0
  FLOAT = 1
  STRING = 2
  # a STRING column of numbers written as text, read as FLOAT: decided over a split's ranges
  # (numbers_from_text), never a cell's or a range's type
  NUMBER_TEXT = 3


class CsvError(ValueError):
  """The file cannot be read as CsvExampleGen would read it (one line: file, row, what)."""


def header(path_or_line) -> List[str]:
  """Column names: the first line split at commas, each stripped (csv_dialect.names)."""
  return csv_dialect.names(path_or_line.strip().split(','))


def row_count(stream) -> int:
  """The rows after the header line of a binary CSV stream, blank lines skipped (CsvExampleGen's
  records), read by pyarrow in blocks with only the first column converted."""
  names = header(stream.readline().decode('utf-8', 'replace'))
  try:
    reader = pa_csv.open_csv(
      stream,
      read_options=pa_csv.ReadOptions(column_names=names),
      parse_options=pa_csv.ParseOptions(newlines_in_values=True),
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


def read_range(data: bytes, names: Sequence[str], where: str, first_row: int) -> pa.Table:
  """One range's rows, every column a string; empty cells '' (blank lines skipped, as
  CsvExampleGen does). `where` and `first_row` name the file and its row in errors."""
  try:
    return pa_csv.read_csv(
      io.BytesIO(data),
      read_options=pa_csv.ReadOptions(column_names=list(names), use_threads=True),
      parse_options=pa_csv.ParseOptions(newlines_in_values=True),
      convert_options=pa_csv.ConvertOptions(
        column_types={name: pa.string() for name in names},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
      ),
    )
  except pa.ArrowInvalid as e:
    raise CsvError(_explained(data, len(names), where, first_row, e)) from None


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


def _explained(data: bytes, columns: int, where: str, first_row: int, error: Exception) -> str:
  """A one-line reason for a range pyarrow refused: not UTF-8, or a row of another width."""
  try:
    text = data.decode('utf-8')
  except UnicodeDecodeError as e:
    row = first_row + data[: e.start].count(b'\n')
    return (
      f'{where}: not UTF-8 (byte 0x{data[e.start]:02x} on line {row}); CsvExampleGen reads '
      'UTF-8: save the file as UTF-8 CSV'
    )
  for number, cells in enumerate(csv.reader(io.StringIO(text, newline='')), start=first_row):
    if cells and len(cells) != columns:
      return f'{where}: line {number} {csv_dialect.width_problem(len(cells), columns)}'
  return f'{where}: {str(error).splitlines()[0]}'


def column_types(table: pa.Table) -> List[ColumnType]:
  """Each column's type over this table's cells, as tfx_bsl's ColumnTypeInferrer infers it."""
  return [_column_type(column.combine_chunks()) for column in table.columns]


def text_census(table: pa.Table, types: Sequence[ColumnType]) -> Dict[str, list]:
  """{column: text_numbers.Census as a list} of the STRING columns whose cells may be numbers
  written as text (those of words are left out)."""
  found = {}
  for name, kind in zip(table.column_names, types):
    if kind == ColumnType.STRING:
      counts = text_numbers.census(table.column(name).combine_chunks())
      if 2 * counts.odd <= counts.numbers + counts.odd:
        found[name] = list(counts)
  return found


def numbers_from_text(
  typings: Sequence[Sequence[ColumnType]],
  censuses: Sequence[Dict[str, list]],
  names: Sequence[str],
  label: str,
) -> List[ColumnType]:
  """A split's column types from its ranges' (merge_types), the STRING columns read as numbers
  NUMBER_TEXT: those that each range where they are STRING has a census of (text_census), whose
  counts over the ranges are text_numbers.readable (the label's strictly: numbers only)."""
  merged = merge_types(typings)
  for i, name in enumerate(names):
    if merged[i] != ColumnType.STRING:
      continue
    ranges = [c for t, c in zip(typings, censuses) if t[i] == ColumnType.STRING]
    if not all(name in c for c in ranges):
      continue
    total = sum((text_numbers.Census(*c[name]) for c in ranges), text_numbers.Census(0, 0, 0, 0))
    if text_numbers.readable(total, strict=name == label):
      merged[i] = ColumnType.NUMBER_TEXT
  return merged


def _column_type(cells: pa.Array) -> ColumnType:
  """INT when every cell is an integer (one regex), else FLOAT when pyarrow reads every cell as
  a number (one cast); cells either leaves open go to Python one by one: integers above 18
  characters (beyond int64: STRING) and, when the cast fails, every cell that is no integer."""
  filled = _filled(cells)
  if not len(filled):
    return ColumnType.UNKNOWN
  integers = pc.match_substring_regex(filled, _INTEGER)
  asked = pc.greater(pc.binary_length(filled), _SHORT)
  if pc.all(integers).as_py():
    found = ColumnType.INT
  else:
    try:
      filled.cast(pa.float64())
      found = ColumnType.FLOAT
    except pa.ArrowInvalid:
      found = ColumnType.INT if pc.any(integers).as_py() else ColumnType.UNKNOWN
      asked = pc.or_(asked, pc.invert(integers))
  if pc.any(asked).as_py():
    for value in filled.filter(asked).cast(pa.binary()).to_pylist():
      found = max(found, infer_value_type(value))
      if found == ColumnType.STRING:
        break
  return found


def all_filled(cells) -> bool:
  """Whether no cell is empty."""
  return not len(cells) or bool(pc.min(pc.binary_length(cells)).as_py())


def _filled(cells: pa.Array) -> pa.Array:
  """The non-empty cells."""
  lengths = pc.binary_length(cells)
  return cells if pc.min(lengths).as_py() else cells.filter(pc.greater(lengths, 0))


def infer_value_type(value: bytes) -> ColumnType:
  """tfx_bsl's _InferValueType for one non-empty cell."""
  try:
    return ColumnType.INT if _INT64.min <= int(value) <= _INT64.max else ColumnType.STRING
  except ValueError:
    try:
      float(value)
    except ValueError:
      return ColumnType.STRING
    return ColumnType.FLOAT


def merge_types(typings: Sequence[Sequence[ColumnType]]) -> List[ColumnType]:
  """Column types of several ranges of one split: the highest of each column."""
  return [ColumnType(max(column)) for column in zip(*typings)]


def to_record_batch(
  table: pa.Table,
  types: Sequence[ColumnType],
  non_finite: Optional[list] = None,
  from_text: Optional[Dict[str, list]] = None,
) -> pa.RecordBatch:
  """The table's columns as the lists RecordBatchToExamples encodes: one value per cell, none
  for an empty cell or an inf / nan one in a FLOAT column (no number to learn from: they made
  every prediction NaN; each such cell's count appended to `non_finite`), a null list (a
  feature without a kind) in an UNKNOWN column; a NUMBER_TEXT column's cells read by
  text_numbers.read_array, none where no number ({column: [placeholders, others]} added to
  `from_text`)."""
  found = [] if non_finite is None else non_finite
  texts = {} if from_text is None else from_text
  lists = [
    _as_list(column.combine_chunks(), kind, found, texts.setdefault(name, [0, 0]))
    if kind == ColumnType.NUMBER_TEXT
    else _as_list(column.combine_chunks(), kind, found)
    for name, column, kind in zip(table.column_names, table.columns, types)
  ]
  return pa.RecordBatch.from_arrays(lists, table.column_names)


def _as_list(
  cells: pa.Array, kind: ColumnType, non_finite: list, from_text: Optional[list] = None
) -> pa.Array:
  if kind == ColumnType.UNKNOWN:
    return pa.nulls(len(cells), pa.large_list(pa.int64()))
  if kind == ColumnType.NUMBER_TEXT:
    read, placeholders, odd = text_numbers.read_array(cells)
    from_text[0] += placeholders
    from_text[1] += odd
    present = pc.is_valid(read).to_numpy(zero_copy_only=False)
    return _one_per_cell(len(cells), *_finite(read.drop_null(), present, len(cells), non_finite))
  filled = _filled(cells)
  values = _values(filled, kind)
  present = None  # per cell: whether it holds a value (None: every cell does)
  if len(filled) != len(cells):
    present = pc.greater(pc.binary_length(cells), 0).to_numpy(zero_copy_only=False)
  if kind == ColumnType.FLOAT:
    values, present = _finite(values, present, len(cells), non_finite)
  return _one_per_cell(len(cells), values, present)


def _finite(values: pa.Array, present, cells: int, non_finite: list):
  """(values, present) without the inf and nan values (their count appended to non_finite)."""
  finite = pc.is_finite(values)
  if pc.all(finite).as_py():  # a numeric scan: costs nothing when all are numbers
    return values, present
  kept = finite.to_numpy(zero_copy_only=False)
  non_finite.append(int(len(kept) - kept.sum()))
  present = np.ones(cells, bool) if present is None else present.copy()
  present[np.flatnonzero(present)[~kept]] = False
  return values.filter(finite), present


def _one_per_cell(cells: int, values: pa.Array, present) -> pa.Array:
  """Lists of one value per cell where `present` (None: every cell), of none elsewhere."""
  if present is None:
    offsets = np.arange(cells + 1, dtype=np.int64)
  else:
    offsets = np.zeros(cells + 1, dtype=np.int64)
    np.cumsum(present, out=offsets[1:])
  if values.type == pa.float64():
    values = values.cast(pa.float32(), safe=False)
  return pa.LargeListArray.from_arrays(pa.array(offsets), values)


def _values(filled: pa.Array, kind: ColumnType) -> pa.Array:
  """Non-empty cells as the column's values (float: to a double, then float32, as Python's
  float() and the proto's FloatList do); by pyarrow's cast, or where it refuses a cell that
  Python reads ('+5', ' 5', '1_000'), by Python."""
  if kind == ColumnType.STRING:
    return filled.cast(pa.binary())
  try:
    parsed = filled.cast(pa.int64() if kind == ColumnType.INT else pa.float64())
  except pa.ArrowInvalid:
    read = int if kind == ColumnType.INT else float
    parsed = pa.array(
      [read(value) for value in filled.cast(pa.binary()).to_pylist()],
      pa.int64() if kind == ColumnType.INT else pa.float64(),
    )
  return parsed if kind == ColumnType.INT else parsed.cast(pa.float32(), safe=False)


def to_examples(
  table: pa.Table,
  types: Sequence[ColumnType],
  non_finite: Optional[list] = None,
  from_text: Optional[Dict[str, list]] = None,
) -> List[bytes]:
  """Serialized tf.Examples of the table's rows, in order (tfx-bsl's C++ encoder); inf and nan
  cells of FLOAT columns left out and counted into `non_finite`, the cells of NUMBER_TEXT
  columns that are no number into `from_text` (to_record_batch)."""
  from tfx_bsl.coders import example_coder

  if not table.num_rows:
    return []
  return example_coder.RecordBatchToExamples(to_record_batch(table, types, non_finite, from_text))


_PRIME = np.uint64(0x100000001B3)  # FNV's 64-bit prime: odd, so invertible modulo 2**64
_PRIME_INVERSE = np.uint64(pow(0x100000001B3, -1, 1 << 64))


def row_hashes(table: pa.Table) -> np.ndarray:
  """A 64-bit hash of each row's cells (uint64), the same on every machine, run and range cut:
  per cell a polynomial hash of its bytes, from prefix sums (vectorized), mixed column by column
  and finished with splitmix64's mixer. Equal rows hash equal (and so share a split). Each cell's
  hash is mixed before it joins the row's: with the cells' own polynomial, ('10.0', 'w6') and
  ('20.0', 'w5') summed to the same hash."""
  hashes = np.zeros(table.num_rows, dtype=np.uint64)
  with np.errstate(over='ignore'):
    for column in table.columns:
      cells = column.combine_chunks().cast(pa.binary())
      hashes = hashes * _PRIME + _mixed(_cell_hashes(cells)) + np.uint64(1)
    return _mixed(hashes)


def _mixed(hashes: np.ndarray) -> np.ndarray:
  """splitmix64's finalizer, element-wise (a new array)."""
  with np.errstate(over='ignore'):
    hashes = hashes ^ (hashes >> np.uint64(30))
    hashes *= np.uint64(0xBF58476D1CE4E5B9)
    hashes ^= hashes >> np.uint64(27)
    hashes *= np.uint64(0x94D049BB133111EB)
    hashes ^= hashes >> np.uint64(31)
  return hashes


def _cell_hashes(cells: pa.Array) -> np.ndarray:
  """sum over a cell's bytes b_k of (b_k + 1) * PRIME**k, k counted from the cell's start."""
  offsets = np.frombuffer(cells.buffers()[1], dtype=np.int32)[
    cells.offset : cells.offset + len(cells) + 1
  ]
  data = np.frombuffer(cells.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
  offsets = offsets - offsets[0]
  starts, ends = offsets[:-1], offsets[1:]
  prefix = np.zeros(len(data) + 1, dtype=np.uint64)
  np.cumsum((data.astype(np.uint64) + np.uint64(1)) * _powers(_PRIME, len(data)), out=prefix[1:])
  return (prefix[ends] - prefix[starts]) * _powers(_PRIME_INVERSE, len(data) + 1)[starts]


def _powers(base: np.uint64, count: int) -> np.ndarray:
  """base**0 .. base**(count - 1) modulo 2**64."""
  powers = np.full(count, base, dtype=np.uint64)
  powers[:1] = 1
  return np.cumprod(powers, out=powers)


def types_json(types: Sequence[ColumnType], names: Sequence[str]) -> Dict[str, str]:
  """{column: 'INT' | 'FLOAT' | 'STRING' | 'UNKNOWN'} for the artifact's record of them (a
  NUMBER_TEXT column is written as FLOAT)."""
  return {
    name: ColumnType.FLOAT.name if kind == ColumnType.NUMBER_TEXT else ColumnType(kind).name
    for name, kind in zip(names, types)
  }
