"""What counts as a row without a label, for the command line's first look at a CSV and for the
ExampleGens that read every row (components/label_gaps.py); when integer labels look like a
number to regress rather than classes (the command line's first rows, the Trainer's all rows);
that a float label trains only as two classes on a threshold the user names; and the one line
that says each."""

from typing import Dict, List, Tuple

# Cells pandas and spreadsheets write for 'no value', compared stripped and lower-cased: the one
# list every reader of a label uses (the command line's first rows, every ExampleGen).
MISSING_WORDS = ('', 'nan', 'na', 'n/a', 'null', 'none', '?', '-')
_SPACES = ' \t\n\v\f\r'  # what TensorFlow's tf.strings.strip takes off, too
SHOWN_ROWS = 5  # rows named in a refusal
# Integer labels look like a number to regress, not classes, from this many distinct values on,
# when most of them are held by fewer than MIN_CLASS_ROWS rows: a class needs 2 to train on and
# 1 to evaluate. (Diabetes progress as integers: 214 values in 442 rows, 84 in one row, 152 in
# at most two; 30 classes of 15 rows each: none.)
MIN_REGRESSION_VALUES = 20
MIN_CLASS_ROWS = 3


def is_missing(value) -> bool:
  """An empty cell, or one of MISSING_WORDS (str or bytes; None too)."""
  if isinstance(value, bytes):
    value = value.decode('utf-8', 'replace')
  return (value or '').strip().lower() in MISSING_WORDS


def missing_message(label: str, missing: int, rows: int, where: str, shown: str = '') -> str:
  """The refusal: '--label target: 4 of 1,000 rows of x.csv have no value (lines 302, 402, …);
  …'; shown: the first of those rows, as the reader can name them."""
  return (
    f'--label {label}: {missing:,} of {rows:,} rows of {where} have no value'
    + (f' ({shown})' if shown else '')
    + '; fill them in, drop those rows, or say what they mean with --label-default'
  )


def first_rows(names: list, missing: int, separator: str = ', ') -> str:
  """The first SHOWN_ROWS of `names` joined, with '…' when `missing` rows are more."""
  shown = list(names)[:SHOWN_ROWS]
  return separator.join(shown) + (f'{separator}…' if missing > len(shown) else '')


def looks_regressed(counts: Dict[int, int]) -> bool:
  """Whether integer label values (value → rows) look like a quantity rather than classes:
  MIN_REGRESSION_VALUES distinct values or more, most of them in fewer than MIN_CLASS_ROWS rows."""
  rare = sum(1 for rows in counts.values() if rows < MIN_CLASS_ROWS)
  return len(counts) >= MIN_REGRESSION_VALUES and 2 * rare > len(counts)


def regression_message(label: str, counts: Dict[int, int], where: str) -> str:
  """The refusal for looks_regressed counts (where: 'the 442 train and eval examples'), with the
  median as a threshold to start from."""
  rows = sum(counts.values())
  rare = sum(1 for n in counts.values() if n < MIN_CLASS_ROWS)
  median, seen = min(counts), 0
  for value in sorted(counts):
    seen += counts[value]
    if 2 * seen >= rows:
      median = value
      break
  return (
    f'--label {label}: {len(counts)} distinct integer values in {where}, '
    f'{rare} of them in fewer than {MIN_CLASS_ROWS} rows: a number to regress, not classes; '
    f'train a two-class model on ({label} > T) with --label-threshold T (the median: {median})'
  )


def float_label_message(label: str, where: str, median=None) -> str:
  """The refusal of a float label without --label-threshold: classes only, on a threshold the
  user names (no threshold is guessed), the median as one to start from when known."""
  return (
    f'--label {label}: numbers, not all integers, in {where}: this pipeline trains classes, and '
    f'regression is not built yet; train two classes on ({label} > T) with --label-threshold T'
    + ('' if median is None else f' (the median: {median:g})')
  )


def threshold_line(label: str, threshold) -> str:
  """What the model learns, said at the start and in the summary: 'tips > 0 as two classes'
  when a threshold turns the label's numbers into classes, else 'tips as classes'."""
  if threshold is None:
    return f'{label} as classes'
  return f'{label} > {threshold:g} as two classes (--label-threshold {threshold:g})'


def spelling_key(name: str) -> str:
  """What tells two class names apart: neither case nor surrounding spaces do ('Yes ' is 'yes';
  trainer/tabular_input.py compares labels the same way in TensorFlow)."""
  return name.strip(_SPACES).lower()


def one_spelling(counts: Dict[str, int]) -> Tuple[List[str], Dict[str, Dict[str, int]]]:
  """(the class names, sorted: of the spellings that differ only in case or surrounding spaces,
  the one most rows hold; {name: {spelling: rows}} for the names read from more than one)."""
  groups: Dict[str, Dict[str, int]] = {}
  for spelling, rows in counts.items():
    groups.setdefault(spelling_key(spelling), {})[spelling] = rows
  names, merged = [], {}
  for spellings in groups.values():
    name = min(spellings, key=lambda s: (-spellings[s], s))
    names.append(name)
    if len(spellings) > 1:
      merged[name] = dict(sorted(spellings.items(), key=lambda item: (-item[1], item[0])))
  return sorted(names), dict(sorted(merged.items()))


def spellings_line(merged: Dict[str, Dict[str, int]]) -> str:
  """ "'yes' from 'yes' (412), 'Yes' (33), ' yes' (2); 'no' from …": one_spelling's merges."""
  return '; '.join(
    f'{name!r} from ' + ', '.join(f'{s!r} ({rows:,})' for s, rows in spellings.items())
    for name, spellings in merged.items()
  )
