"""Dates and times written in a CSV column: the one rule that recognises them, shared by `run`'s
first look (cli/inputs/csv_input.py), the CSV ExampleGen (a date column is never an id), the
Trainer (trainer/date_features.py computes the same features with TensorFlow ops, in training and
inside the serving signatures) and the tests (docs/data.md, Dates and times).

Forms, a whole cell each (surrounding spaces aside):
  ISO          2024-03-05, 2024-03-23T14:19:54[.fff][Z|+01:00|-0800], 2024-03-23 14:19[:54]
  slash        05/03/2024 or 3/5/2024 [14:19[:54]]: day/month or month/day, decided by the
               column's cells (a first field above 12: dmy; a second: mdy), else by --date-order
  dotted       05.03.2024 [14:19[:54]]: day.month.year
A column is read as dates when at least MIN_SHARE of its non-empty cells are of one form; its
other cells (and impossible dates: 2023-02-29) are missing. The calendar features are those of
the clock as written (a time zone changes no hour); the time itself (`days`: days since
1970-01-01, a fraction for the time of day) is UTC when a zone is written, else as written.
"""

import dataclasses
import datetime
import re
from typing import Dict, Iterable, Optional

YMD, DMY, MDY = 'ymd', 'dmy', 'mdy'
ORDERS = (DMY, MDY)  # --date-order's choices (ISO is always ymd)
ISO, SLASH, DOTTED = 'iso', 'slash', 'dotted'
MIN_SHARE = 0.9  # of a column's non-empty cells in one form: a date column
# Features of each date column, fed to the model as numbers named '<column>.<feature>'; a column
# without a time in any cell seen has no hour nor seconds_of_day (always 0).
FEATURES = ('year', 'month', 'day_of_year', 'day_of_week', 'hour', 'seconds_of_day', 'days')
DATE_ONLY = ('year', 'month', 'day_of_year', 'day_of_week', 'days')

# The time after a date: HH:MM[:SS[.fff]] and a zone (Z, ±HH:MM, ±HHMM). Its groups: hour,
# minute, seconds with their fraction, zone.
TIME = r'(?:[T ](\d{2}):(\d{2})(?::(\d{2}(?:\.\d{1,9})?))?(Z|[+-]\d{2}:?\d{2})?)?'
# Each form as RE2 and Python's re both read it: three date groups, then TIME's four.
PATTERNS = {
  ISO: r'(\d{4})-(\d{2})-(\d{2})' + TIME,
  SLASH: r'(\d{1,2})/(\d{1,2})/(\d{4})' + TIME,
  DOTTED: r'(\d{1,2})\.(\d{1,2})\.(\d{4})' + TIME,
}
SHOWN = {  # a form in its order, as the summary names it
  (ISO, YMD): 'ISO',
  (SLASH, DMY): 'DD/MM/YYYY',
  (SLASH, MDY): 'MM/DD/YYYY',
  (DOTTED, DMY): 'DD.MM.YYYY',
}
_COMPILED = {form: re.compile(pattern) for form, pattern in PATTERNS.items()}
_EPOCH = datetime.date(1970, 1, 1)


@dataclasses.dataclass(frozen=True)
class DateColumn:
  """A column read as dates: its form, the order of its fields ('' : a slash form no cell
  decides), whether a cell holds a time, its earliest and latest dates as ISO, and its non-empty
  cells that are no date of the form."""

  form: str
  order: str
  timed: bool
  first: str
  last: str
  unreadable: int

  def features(self):
    return FEATURES if self.timed else DATE_ONLY


def order_of(form: str, order: str = '') -> str:
  """The order of a form's fields: ISO ymd, dotted dmy, slash `order` (the column's)."""
  return {ISO: YMD, DOTTED: DMY}.get(form, order)


def _fields(match, order: str) -> tuple:
  first, second, third = (int(match.group(i)) for i in (1, 2, 3))
  return {YMD: (first, second, third), DMY: (third, second, first), MDY: (third, first, second)}[
    order
  ]


def parse(cell: str, form: str, order: str) -> Optional[dict]:
  """The features of one cell of `form` in `order` ({FEATURES: float}), None when it is no
  date of the form (an impossible one included)."""
  match = _COMPILED[form].fullmatch(cell.strip())
  if match is None or order_of(form, order) not in (YMD, DMY, MDY):
    return None
  year, month, day = _fields(match, order_of(form, order))
  hour, minute = int(match.group(4) or 0), int(match.group(5) or 0)
  seconds = float(match.group(6) or 0)
  try:
    date = datetime.date(year, month, day)
  except ValueError:
    return None
  if hour > 23 or minute > 59 or seconds >= 60:
    return None
  zone = match.group(7) or ''
  offset = 0.0
  if zone not in ('', 'Z'):
    digits = zone[1:].replace(':', '')
    offset = (int(digits[:2]) * 60 + int(digits[2:])) * (-1 if zone[0] == '-' else 1)
  of_day = hour * 3600 + minute * 60 + seconds
  days = (date - _EPOCH).days + of_day / 86400 - offset / 1440
  return {
    'year': float(year),
    'month': float(month),
    'day_of_year': float(date.timetuple().tm_yday),
    'day_of_week': float(date.weekday()),  # Monday 0
    'hour': float(hour),
    'seconds_of_day': of_day,
    'days': days,
  }


def column(cells: Iterable[str], order: str = '') -> Optional[DateColumn]:
  """The column as dates by the one rule, or None: at least MIN_SHARE of its non-empty cells of
  one form; a slash form's order from its cells (no cell decides: `order`, --date-order; cells
  deciding both ways: no dates)."""
  filled = [c.strip() for c in cells if c and c.strip()]
  if not filled:
    return None
  matches = {
    form: [m for m in map(pattern.fullmatch, filled) if m] for form, pattern in _COMPILED.items()
  }
  form = max(matches, key=lambda f: len(matches[f]))
  found = matches[form]
  if len(found) < MIN_SHARE * len(filled):
    return None
  if form == SLASH:
    day_first = any(int(m.group(1)) > 12 for m in found)
    month_first = any(int(m.group(2)) > 12 for m in found)
    if day_first and month_first:
      return None
    order = DMY if day_first else MDY if month_first else order
  if not order_of(form, order):
    return DateColumn(form, '', any(m.group(4) for m in found), '', '', 0)
  read = [parse(c, form, order) for c in filled]
  dates = sorted(
    datetime.date(int(r['year']), 1, 1) + datetime.timedelta(days=r['day_of_year'] - 1)
    for r in read
    if r
  )
  return DateColumn(
    form,
    order_of(form, order),
    any(m.group(4) for m in found),
    dates[0].isoformat() if dates else '',
    dates[-1].isoformat() if dates else '',
    sum(r is None for r in read),
  )


def ambiguous_line(name: str, cells: Iterable[str], where: str) -> str:
  """The one line that asks for the order of a slash column no cell decides."""
  example = next((c.strip() for c in cells if c and c.strip()), '')
  return (
    f"column '{name}' in {where}: dates such as '{example}' may be day/month or month/day (no "
    'field above 12): give --date-order dmy or --date-order mdy'
  )


def columns(rows: Dict[str, list], order: str = '') -> Dict[str, DateColumn]:
  """{column: DateColumn} of the columns of `rows` ({column: cells}) read as dates."""
  found = {name: column(cells, order) for name, cells in rows.items()}
  return {name: read for name, read in found.items() if read is not None}


def line(found: Dict[str, DateColumn]) -> str:
  """The summary's words: "'date' (ISO, 2024-03-05 … 2025-12-30), 'ts' (…) read as dates → year,
  …"."""
  names = ', '.join(
    f"'{name}' ({SHOWN[read.form, read.order]}, {read.first} … {read.last}"
    + (f', {read.unreadable:,} sampled cells no date: missing' if read.unreadable else '')
    + ')'
    for name, read in sorted(found.items())
  )
  timed = sorted(name for name, read in found.items() if read.timed)
  only = ''
  if timed and len(timed) < len(found):  # a date alone has no time of day
    only = f' (hour, seconds_of_day: {", ".join(repr(name) for name in timed)} only)'
  return f'{names} read as dates → {", ".join(FEATURES if timed else DATE_ONLY)}{only}'
