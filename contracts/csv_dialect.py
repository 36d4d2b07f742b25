"""The CSV dialect the readers of a CSV file share (`predict`, `monitor`, and `run`: its first
look, the Arrow CSV ExampleGen, the label-gap lines, the text ExampleGen): UTF-8, a byte-order
mark (Excel's "CSV UTF-8") left out; `,`, `;` or tab as the delimiter, the one the header line
holds most of outside quotes (Excel's exports use `;` in some locales, with decimal commas:
`12,5`); CRLF or LF line ends; a newline inside a quoted cell kept in the cell; blank lines
skipped; spaces around header names left out (`a, b, target` names `b` and `target`).
"""

import csv
from typing import Iterable, Iterator, List, NamedTuple, Tuple

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


def names(cells: List[str]) -> List[str]:
  """A header row's cells as column names: spaces around each left out (`a, b` names `b`)."""
  return [cell.strip() for cell in cells]


def decimal_point(cell: str) -> str:
  """A cell of a file whose numbers may use a decimal comma (Dialect.decimal_comma) as Python's
  float() reads its number: a cell with one comma and no point has its comma a point (`12,5` is
  `12.5`, as text_numbers.parse reads it); any other cell as it is."""
  return cell.replace(',', '.') if cell.count(',') == 1 and '.' not in cell else cell


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
