"""Each CSV column's type as TFX's CsvExampleGen infers it, over Arrow tables of strings (no TFX
here).

CsvExampleGen infers each column's type over the whole split (tfx_bsl's ColumnTypeInferrer):

  column_types()  each column's type over a range: INT when every non-empty cell is a Python int
                  within int64, else FLOAT when every one is a Python float, else STRING;
                  UNKNOWN when all are empty. Cells of the common forms are judged by pyarrow
                  regexes, the others one by one with Python's int() / float(), as
                  CsvExampleGen does;
  text_census()   a STRING column's cells counted as numbers written as text
                  (contracts/text_numbers.census: `$13.08`, `8.91%`, `unknown`);
  numbers_from_text()  over a split's ranges, merged (merge_types), the STRING columns read as
                  numbers (NUMBER_TEXT);
  types_json()    the types as the artifact records them;
  unread_numbers() / add_unread() / looks_numeric()  the STRING columns whose cells are mostly
                  numbers no rule reads (text_numbers.unread), named in the summary.
"""

import enum
from typing import Dict, List, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from contracts import text_numbers

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
  filled = non_empty(cells)
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


def non_empty(cells: pa.Array) -> pa.Array:
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


def types_json(types: Sequence[ColumnType], names: Sequence[str]) -> Dict[str, str]:
  """{column: 'INT' | 'FLOAT' | 'STRING' | 'UNKNOWN'} for the artifact's record of them (a
  NUMBER_TEXT column is written as FLOAT)."""
  return {
    name: ColumnType.FLOAT.name if kind == ColumnType.NUMBER_TEXT else ColumnType(kind).name
    for name, kind in zip(names, types)
  }


def unread_numbers(table: pa.Table, types: Sequence[ColumnType], ignored=()) -> Dict[str, list]:
  """{column: [cells that look like numbers, cells, shown]} (text_numbers.unread) of the STRING
  columns not `ignored` (the label, the ids) whose cells are mostly numbers."""
  found = {}
  for name, kind in zip(table.column_names, types):
    if kind == ColumnType.STRING and name not in ignored:
      numeric, cells, shown = text_numbers.unread(table.column(name).combine_chunks())
      if numeric:
        found[name] = [numeric, cells, shown]
  return found


def add_unread(total: Dict[str, list], found: Dict[str, list]) -> None:
  """unread_numbers() of one range added to `total` (cells shown: the first distinct ones)."""
  for name, (numeric, cells, shown) in found.items():
    into = total.setdefault(name, [0, 0, []])
    into[0], into[1] = into[0] + numeric, into[1] + cells
    into[2] += [cell for cell in shown if cell not in into[2]][
      : max(0, text_numbers.SHOWN - len(into[2]))
    ]


def looks_numeric(total: Dict[str, list]) -> Dict[str, list]:
  """{column: cells shown} of the columns whose cells, over all ranges, are mostly numbers."""
  return {
    name: shown for name, (numeric, cells, shown) in sorted(total.items()) if 2 * numeric > cells
  }
