"""The CSV dialect the readers of a CSV file share (`predict`, `monitor`, and `run`: its first
look, the Arrow CSV ExampleGen, the label-gap lines, the text ExampleGen): UTF-8, a byte-order
mark (Excel's "CSV UTF-8") left out; `,`, `;` or tab as the delimiter, the one the header line
holds most of outside quotes (Excel's exports use `;` in some locales, with decimal commas:
`12,5`, read as 12.5 in a column of numbers: text_numbers.with_decimal_point()); CRLF or LF
line ends; a newline inside a quoted cell kept in the cell; blank lines skipped. header() reads a first line's
dialect and names; rows() a local file's rows, stream_rows() an open stream's (object storage).

What a row is, for every reader (the Arrow CsvExampleGen, `predict`, `monitor`):
  header names       stripped of surrounding spaces (`a, b, target` names `target`): names().
  a repeated header  a row whose cells, stripped, are the header's names (files joined with
                     `cat`, exports appended to) is skipped and counted, never read as data:
                     repeats_header() (the ExampleGen's columnar form: without_header_rows).
  inf and nan        a number column's cell that reads as inf or nan (`inf`, `-inf`, `nan`,
                     `1e999`) is missing, as an empty cell is, and counted: number(); the
                     placeholders (text_numbers.PLACEHOLDERS, the label's MISSING_WORDS among
                     them) are missing, uncounted here.
  a text cell        a text (category) column's cell is its value as written: surrounding spaces,
                     case and placeholders (`NA`, `n/a`, `None`, `?`) kept, a category like any
                     other, as the ExampleGens write it; only an empty cell is missing (`''` in
                     predict_columns, no value in a tf.Example). Placeholders are missing in a
                     number column (above) and in the label (labels.MISSING_WORDS), not here.
  the row's width    a row of more or fewer cells than the header is never read (its cells would
                     land in other columns): `run` and `monitor` stop with one line naming the
                     file and line, `predict`, which answers row by row, lists the row as
                     unreadable with the same words: width_problem().
The counts reach the user: Counts.line() in `predict`'s and `monitor`'s output (the run's summary
has its own `skipped:` and `missing:` lines, from the ExampleGen's counts).
"""

import csv
import math
from typing import Iterable, Iterator, List, NamedTuple, Sequence, Tuple

from contracts import text_numbers

BOM = b'\xef\xbb\xbf'
DELIMITERS = (',', ';', '\t')
NAMES = {',': 'comma', ';': 'semicolon', '\t': 'tab'}


class Dialect(NamedTuple):
  delimiter: str = ','
  bom: bool = False

  @property
  def decimal_comma(self) -> bool:
    """Whether a number cell may write its decimals after a comma (`12,5`): not in a
    comma-separated file, where `1,234` is a thousand and more (contracts/text_numbers.py)."""
    return self.delimiter != ','

  def described(self) -> str:
    """What a reader did that a plain comma-separated file would not need ('' for one): the
    summary's `csv:` line."""
    if self.delimiter == ',' and not self.bom:
      return ''
    parts = [f'{NAMES[self.delimiter]}-separated'] if self.delimiter != ',' else []
    if self.decimal_comma:
      parts.append('decimal commas in number columns read as points (12,5 is 12.5)')
    if self.bom:
      parts.append("a byte-order mark (Excel's CSV UTF-8) left out")
    return ', '.join(parts)


def of_header(line: str, bom: bool = False) -> Dialect:
  """The dialect of a file whose first line (without its line end) is `line`."""
  outside = ''.join(line.split('"')[::2])  # the text outside quoted names
  counts = {d: outside.count(d) for d in DELIMITERS}
  best = max(DELIMITERS, key=lambda d: counts[d])  # a tie goes to the comma
  return Dialect(best if counts[best] else ',', bom)


def sniff(path: str) -> Dialect:
  """The dialect of a local CSV file, from its first line."""
  with open(path, 'rb') as f:
    return header(f.readline())[0]


def header(first: bytes) -> Tuple[Dialect, List[str]]:
  """(the dialect, the column names) of a CSV file's first line (bytes, its line end optional):
  the names split at the delimiter as the csv module splits them, each stripped (names)."""
  line = first.decode('utf-8', 'replace').lstrip('\ufeff').rstrip('\r\n')
  dialect = of_header(line, first.startswith(BOM))
  return dialect, names(next(csv.reader([line], delimiter=dialect.delimiter), []))


def rows(path: str, dialect: Dialect) -> Iterator[Tuple[int, List[str]]]:
  """(the line a row starts on, its cells) of every row of a local CSV file, the header first;
  blank lines skipped. Raises UnicodeDecodeError for a file that is not UTF-8."""
  with open(path, encoding='utf-8-sig', newline='') as f:
    yield from stream_rows(f, dialect)


def stream_rows(stream: Iterable[str], dialect: Dialect) -> Iterator[Tuple[int, List[str]]]:
  """rows() of an open text stream (a GFile on object storage as well), its byte-order mark
  left out of the first cell."""
  reader = csv.reader(stream, delimiter=dialect.delimiter)
  start = 1
  for cells in reader:
    line, start = start, reader.line_num + 1
    if cells:
      if line == 1 and cells[0].startswith('\ufeff'):
        cells[0] = cells[0][1:]
      yield line, cells


def names(cells: Sequence[str]) -> List[str]:
  """A header's column names: its cells stripped of surrounding spaces."""
  return [cell.strip() for cell in cells]


def repeats_header(cells: Sequence[str], header: Sequence[str]) -> bool:
  """Whether a row is the header again: as many cells, each (stripped) its column's name."""
  return len(cells) == len(header) and all(c.strip() == h for c, h in zip(cells, header))


def width_problem(cells: int, columns: int) -> str:
  """'' for a row of as many cells as the header has columns, else why it is not read (to follow
  'FILE: line N ')."""
  return '' if cells == columns else f'has {cells} cells, the header {columns} columns'


class Counts:
  """What the readers of a file skipped or made missing, for the user's line."""

  def __init__(self, repeated_headers: int = 0, non_finite_cells: int = 0):
    self.repeated_headers, self.non_finite_cells = repeated_headers, non_finite_cells

  def line(self) -> str:
    """'2 repeated header line(s) skipped, 3 inf/nan cell(s) read as missing' ('' for none)."""
    parts = []
    if self.repeated_headers:
      parts.append(f'{self.repeated_headers} repeated header line(s) skipped')
    if self.non_finite_cells:
      parts.append(f'{self.non_finite_cells} inf/nan cell(s) read as missing')
    return ', '.join(parts)


def number(cell: str, decimal_comma: bool, counts: Counts) -> float:
  """A number column's cell as training reads it (text_numbers.parse; NaN: missing), a cell that
  reads as inf or nan missing too and counted in `counts.non_finite_cells`. Raises ValueError for a
  cell that is no number."""
  value = text_numbers.parse(cell, decimal_comma)
  if math.isfinite(value):
    return value
  try:
    float(cell)  # `inf`, `nan`, `1e999`; not a placeholder (`NA`, ``), missing uncounted
  except ValueError:
    return value
  counts.non_finite_cells += 1
  return math.nan


def data_rows(
  path: str, dialect: Dialect, counts: Counts
) -> Tuple[List[str], Iterator[Tuple[int, List[str]]]]:
  """(a local CSV file's column names, its data rows as (line, cells)): rows that repeat the
  header skipped, counted in `counts.repeated_headers` as they are met."""
  found = rows(path, dialect)
  header = names(next(found, (0, []))[1])

  def data():
    for line, cells in found:
      if repeats_header(cells, header):
        counts.repeated_headers += 1
      else:
        yield line, cells

  return header, data()
