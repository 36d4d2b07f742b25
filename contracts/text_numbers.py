"""Numbers written as text, one reading for every reader of a CSV: `$13.08`, `8.91%`, `1,234.5`,
`-$2.50`, `$-2.50`, `(3.20)` (an accounting negative: -3.2), `12.5 €`, `−5.2` (U+2212), `1 234.5`,
`1'234.50`, `3.94M`. Currency signs ($ € £ ¥), a percent sign (the number as written: `8.91%` is
8.91), thousands separators (before each group of three digits, one kind in a number: a comma,
a space, a no-break, narrow no-break or thin space, an apostrophe ' or ’: `1,234` and `1 234`
are 1234, `12,5` and `12 5` no number) and one space after a sign are taken off; the minus signs
people's software writes (MINUS_SIGNS: − ‒ – ﹣ －; not the em dash — nor the bar ―, dashes of
prose) read as `-`; a suffix (SUFFIXES: `k`/`K` thousand, `M` million, `B`/`bn` billion: `3.94M`
is 3,940,000; `m` is left unread: milli or million) multiplies; placeholders (`unknown`, `n/a`,
`?`, a lone dash, MISSING_WORDS) are missing.

  parse()       one cell (predict, monitor, the command line's first look at a label);
  census()      a column's cells counted (the Arrow CsvExampleGen decides from the counts);
  read_array()  a column's cells as float64, null where missing (vectorised with pyarrow), and
                the forms its numbers are written in (FORMS, for the summary);
  readable()    whether counts make a column of numbers: some cell needed this reading, and
                at most MAX_ODD_SHARE of the cells that are no placeholder are no number;
  unread()      a text column's first cells that look like numbers no rule here reads
                (`12~5`): the summary names such a column, never silent.
"""

import math
import re
from typing import List, NamedTuple, Tuple

# Cells pandas and spreadsheets write for 'no value', compared stripped and lower-cased: the one
# list every reader of a label uses (contracts/labels.py: the command line's first rows, every
# ExampleGen).
MISSING_WORDS = ('', 'nan', 'na', 'n/a', 'null', 'none', '?', '-')
# In a column of numbers, what people write for 'no value' besides (compared alike).
PLACEHOLDERS = MISSING_WORDS + ('unknown', 'missing', '#n/a', 'n.a.', 'nil', '−', '–', '—')
MAX_ODD_SHARE = 0.02  # of a column's cells that are no placeholder: read as missing, counted
SAMPLE = 1000  # cells looked at first: a column of words is given up on after these

_CURRENCY = '[$€£¥]'
MINUS_SIGNS = '\u2212\u2012\u2013\ufe63\uff0d'  # − ‒ – ﹣ －, read as '-'
_SIGN = f'[+\\-{MINUS_SIGNS}]'
# Thousands separators, one kind in a number, each before a group of three digits.
_GROUPED = '|'.join(
  rf'[0-9]{{1,3}}(?:{sep}[0-9]{{3}})+' for sep in (',', '[ \u00a0\u202f\u2009]', "['\u2019]")
)
_MANTISSA = rf'(?:(?:{_GROUPED}|[0-9]+)(?:\.[0-9]*)?|\.[0-9]+)'
SUFFIXES = {'k': 'e3', 'K': 'e3', 'M': 'e6', 'B': 'e9', 'bn': 'e9'}  # the power each stands for
_SUFFIX = '|'.join(SUFFIXES)
_DIGITS = rf'{_MANTISSA}(?:[eE][+-]?[0-9]+|{_SUFFIX})?'
_AFTER = f' ?(?:%|{_CURRENCY})?'
# RE2 (pyarrow) and Python's re read it alike.
PATTERN = (
  rf'^(?:(?:{_SIGN}?(?:{_CURRENCY} ?)?|{_CURRENCY} ?{_SIGN}){_DIGITS}{_AFTER}'
  rf'|\((?:{_CURRENCY} ?)?{_DIGITS}{_AFTER}\))$'
)
# taken off a matching cell ('(' makes it negative; '+': pyarrow's cast refuses '+5')
_MARKS = "[$€£¥%,()+ \u00a0\u202f\u2009'\u2019]"
_MINUS = f'[{MINUS_SIGNS}]'
_SUFFIXED = f'(?:{_SUFFIX})$'
_PLAIN = '^[+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?$'  # what needed no reading
_NUMBER = re.compile(PATTERN)
_MARK = re.compile(_MARKS)
_MINUS_ASCII = str.maketrans(dict.fromkeys(MINUS_SIGNS, '-'))
_SUFFIX_POWER = re.compile(_SUFFIXED)


def is_placeholder(cell: str) -> bool:
  return cell.strip().lower() in PLACEHOLDERS


# A decimal comma after points that group thousands (`1.234.567,89`, `225.162,43 €`): the way
# numbers are written where the comma is the decimal mark.
DOTTED_THOUSANDS = r'\d{1,3}(?:\.\d{3})+,\d'
_DOTTED_THOUSANDS = re.compile(DOTTED_THOUSANDS)


def with_decimal_point(cell: str) -> str:
  """A cell of a file whose numbers use a decimal comma (csv_dialect.Dialect.decimal_comma) with
  its number's marks as float() and parse() read them: `12,5` (one comma, no point) is `12.5`;
  `225.162,43` (points before groups of three digits, then one comma) is `225162.43`; any other
  cell as it is (`1.234` stays 1.234: a point alone may be a decimal point)."""
  if cell.count(',') != 1:
    return cell
  if '.' not in cell:
    return cell.replace(',', '.')
  if _DOTTED_THOUSANDS.search(cell):
    return cell.replace('.', '').replace(',', '.')
  return cell


def parse(cell: str, decimal_comma: bool = False) -> float:
  """The number a cell holds, as Python's float() reads it or written as text; NaN for an empty
  cell or a placeholder. Raises ValueError for any other cell. `decimal_comma`
  (contracts/csv_dialect.Dialect's, a `;`- or tab-separated file): with_decimal_point's rule."""
  if decimal_comma:
    cell = with_decimal_point(cell)
  try:
    return float(cell)
  except ValueError:
    pass
  cell = cell.strip()
  if cell.lower() in PLACEHOLDERS:
    return math.nan
  if not _NUMBER.match(cell):
    raise ValueError(f'{cell!r} is not a number')
  text = _MARK.sub('', cell).translate(_MINUS_ASCII)
  number = float(_SUFFIX_POWER.sub(lambda m: SUFFIXES[m.group()], text))
  return -number if cell.startswith('(') else number


class Census(NamedTuple):
  """A column's cells that are not empty: numbers (`marked`: of them, written as text), placeholders,
  and the others."""

  numbers: int
  marked: int
  placeholders: int
  odd: int

  def __add__(self, other):
    return Census(*(a + b for a, b in zip(self, other)))


def readable(counts: Census, strict: bool = False) -> bool:
  """Whether a column whose cells are not all Python numbers is read as numbers: some cell is a
  number written as text or a placeholder, and at most MAX_ODD_SHARE of the cells that are no
  placeholder are not numbers (`strict`, the label: none, nor any placeholder)."""
  if not counts.numbers or not (counts.marked or counts.placeholders):
    return False
  if strict:
    return not counts.odd and not counts.placeholders
  return counts.odd <= MAX_ODD_SHARE * (counts.numbers + counts.odd)


def _classes(cells):
  """(trimmed cells, placeholder mask, number mask) of a pyarrow string array."""
  import pyarrow as pa
  import pyarrow.compute as pc

  trimmed = pc.utf8_trim_whitespace(cells)
  missing = pc.is_in(pc.utf8_lower(trimmed), value_set=pa.array(PLACEHOLDERS))
  return trimmed, missing, pc.match_substring_regex(trimmed, PATTERN)


def census(cells) -> Census:
  """The counts of a pyarrow string array's non-empty cells; a column whose first SAMPLE cells are
  mostly no numbers is counted from those alone (never readable)."""
  import pyarrow.compute as pc

  cells = cells.filter(pc.greater(pc.binary_length(cells), 0))
  for part in (cells[:SAMPLE], cells) if len(cells) > SAMPLE else (cells,):
    trimmed, missing, numbers = _classes(part)
    placeholders = pc.sum(missing).as_py() or 0
    number_count = pc.sum(numbers).as_py() or 0
    odd = len(part) - placeholders - number_count
    if 2 * odd > len(part) - placeholders:
      break
  plain = pc.match_substring_regex(trimmed, _PLAIN)
  marked = pc.sum(pc.and_(numbers, pc.invert(plain))).as_py() or 0
  return Census(number_count, marked, placeholders, odd)


# What a column's numbers needed, as the summary names it: the characters of which one in a
# number shows it (PATTERN lets each mean only that; a space may also follow a sign or lead a
# currency sign: a thousands separator where _SPACED finds it). Looked for in the numbers' bytes
# end to end (a pyarrow search per character took ~2 ms on 200,000 cells; a regex ~30).
FORMS = {
  'currency signs': '$€£¥',
  'percent signs': '%',
  'thousands separators': ",\u00a0\u202f\u2009'\u2019",
  'accounting negatives': '(',
  'minus signs −': MINUS_SIGNS,
  'k/M/B suffixes': 'kKMBn',
}
_SPACED = re.compile(rb'[0-9] [0-9]')  # cells trimmed: none starts or ends with a space


def _forms(written) -> List[str]:
  """The FORMS that numbers' cells (a pyarrow string array) are written in."""
  import pyarrow as pa

  if not len(written):
    return []
  wide = pa.types.is_large_string(written.type)
  offsets = memoryview(written.buffers()[1]).cast('q' if wide else 'i')
  text = written.buffers()[2].to_pybytes()
  text = text[offsets[written.offset] : offsets[written.offset + len(written)]]
  found = {name for name, marks in FORMS.items() if any(m.encode() in text for m in marks)}
  if b' ' in text and _SPACED.search(text):
    found.add('thousands separators')
  return [name for name in FORMS if name in found]


class Reading(NamedTuple):
  """read_array's: the cells as float64 (null: no number), the placeholders, the other cells
  that are no number, the FORMS the numbers are written in."""

  values: object
  placeholders: int
  odd: int
  forms: List[str]


def read_array(cells) -> Reading:
  """A pyarrow string array's cells read: null for empty cells, placeholders and cells that are
  no number."""
  import pyarrow as pa
  import pyarrow.compute as pc

  trimmed, missing, numbers = _classes(cells)
  empty = pc.equal(pc.binary_length(trimmed), 0)
  placeholders = (pc.sum(missing).as_py() or 0) - (pc.sum(empty).as_py() or 0)
  odd = len(cells) - (pc.sum(pc.or_(missing, numbers)).as_py() or 0)
  found = _forms(trimmed.filter(numbers))
  text = pc.replace_substring_regex(trimmed, _MARKS, '')
  if 'minus signs −' in found:
    text = pc.replace_substring_regex(text, _MINUS, '-')
  if 'k/M/B suffixes' in found:
    for suffix, power in sorted(SUFFIXES.items(), key=lambda item: -len(item[0])):
      text = pc.replace_substring_regex(text, f'{suffix}$', power)
  values = pc.if_else(numbers, text, pa.scalar(None, pa.string())).cast(pa.float64())
  negative = pc.starts_with(trimmed, '(')
  return Reading(pc.if_else(negative, pc.negate(values), values), placeholders, odd, found)


# A cell that looks like a number: a digit, no letter but one at its end (`12~5`, `3.94m`), at
# least half its characters digits; a date or a time is none (`2024-01-05`, `12:30`).
_LOOKS = r'^[^\p{L}]*[0-9][^\p{L}]*\p{L}?$'
_DATE_OR_TIME = r'^[0-9]{1,4}[-/.][0-9]{1,2}[-/.][0-9]{1,4}|^[0-9]{1,2}:[0-9]{2}'
SHOWN = 3  # cells shown of a column unread()


def unread(cells) -> Tuple[int, int, List[str]]:
  """(of a pyarrow string array's first SAMPLE non-empty cells: those that are numbers or look
  like numbers, those that are no placeholder, up to SHOWN distinct ones that are neither number
  nor placeholder), the counts 0 for a column of mostly other cells: a text column's cells."""
  import pyarrow.compute as pc

  cells = cells.filter(pc.greater(pc.binary_length(cells), 0))[:SAMPLE]
  trimmed, missing, numbers = _classes(cells)
  looks = pc.and_(
    pc.match_substring_regex(trimmed, _LOOKS),
    pc.invert(pc.match_substring_regex(trimmed, _DATE_OR_TIME)),
  )
  digits = pc.multiply(pc.count_substring_regex(trimmed, '[0-9]'), 2)
  looks = pc.and_(looks, pc.greater_equal(digits, pc.utf8_length(trimmed)))
  kept = len(cells) - (pc.sum(missing).as_py() or 0)
  numeric = pc.sum(pc.or_(numbers, looks)).as_py() or 0
  if 2 * numeric <= kept:
    return 0, kept, []
  odd = trimmed.filter(pc.invert(pc.or_(numbers, missing)))
  return numeric, kept, pc.unique(odd)[:SHOWN].to_pylist()
