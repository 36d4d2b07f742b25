"""What counts as a row without a label, for the command line's first look at a CSV and for the
ExampleGens that read every row (components/label_gaps.py); when integer labels look like a
number to regress rather than classes; the task (classes or a number) decided by one rule
(numeric_task: the command line's first rows, the Trainer's every row); and the one line that
says each."""

import re
from typing import Dict, List, Tuple
import unicodedata

from contracts import text_numbers
from contracts.text_numbers import MISSING_WORDS  # what a label cell without a value is

# Every Unicode space (White_Space: the no-break U+00A0 spreadsheets paste, the narrow no-break
# U+202F, the thin U+2009, the ideographic U+3000, …); a regex RE2 (TensorFlow) and Python read
# alike: a run of them is one ' ' in a label's spelling, none at its ends.
SPACES = '[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+'
_SPACES = re.compile(SPACES)
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
    f'regress it with --task regression, or train two classes on ({label} > T) with '
    f'--label-threshold T (the median: {int(median) if float(median).is_integer() else median})'
  )


def float_label_message(label: str, where: str, median=None) -> str:
  """The refusal of a float label as classes: a number regresses (--task regression), or makes
  two classes on a threshold the user names (no threshold is guessed), the median as one to
  start from when known."""
  return (
    f'--label {label}: numbers, not all integers, in {where}: regress them with --task '
    f'regression, or train two classes on ({label} > T) with --label-threshold T'
    + ('' if median is None else f' (the median: {median:g})')
  )


def decide_task(
  label: str, values: List[str], where: str, threshold, asked: str
) -> Tuple[str, str]:
  """(the task, why) for a label column's first `values` (cells, missing ones left out; where:
  'the first 200 rows of x.csv'): --label-threshold makes two classes; `asked`
  ('auto', 'classification', 'regression': --task) decides, else the values do: numbers, not
  all integers, or integers that look_regressed, are a number to regress. Raises ValueError (the
  one line) for what cannot be: --task regression with a threshold or on a label that is not a
  number, cells that are not numbers among numbers (a constant is the Trainer's to find: the
  first rows of a file sorted by its label are)."""
  numbers = [_number(v) for v in values]
  text = [v for v, n in zip(values, numbers) if n is None]
  if threshold is not None:
    if asked == 'regression':
      raise ValueError(
        f'--task regression with --label-threshold {threshold:g}: a threshold makes two '
        'classes; give one or the other'
      )
    return 'classification', f'--label-threshold {threshold:g}'
  if asked == 'classification':
    if values and not text and any(not n.is_integer() for n in numbers):
      median = sorted(numbers)[len(numbers) // 2]
      raise ValueError(float_label_message(label, where, median))
    return 'classification', '--task classification'
  if asked == 'regression' or (values and len(text) <= len(values) // 10 < len(values)):
    if asked == 'regression' and len(text) == len(values):
      raise ValueError(
        f'--task regression: label {label!r} holds no numbers in {where} '
        f'({", ".join(repr(v) for v in text[:SHOWN_ROWS])}): regression needs a number per row'
      )
    if text:  # '12,5', 'abc' among numbers ('$13.08' is one: contracts/text_numbers.py)
      raise ValueError(
        f'--label {label}: {len(text)} of {len(values)} values in {where} are not numbers '
        f'({first_rows([repr(v) for v in text], len(text))}) among numbers: write them as '
        'numbers (a dot for decimals), or drop those rows'
      )
    if asked == 'regression':
      return 'regression', '--task regression'
  if values and not text:
    counts: Dict[float, int] = {}
    for cell, number in zip(values, numbers):  # `3` an int, `3.0` a float: as a reader types them
      key = int(number) if number.is_integer() and cell.strip().lstrip('+-').isdigit() else number
      counts[key] = counts.get(key, 0) + 1
    return numeric_task(label, counts, where)
  return 'classification', f'{label} holds class ids or names'


def numeric_task(label: str, counts: Dict[float, int], where: str) -> Tuple[str, str]:
  """(the task, why) of a numeric label from {value: rows}, the one rule of `--task auto` (the
  command line's first rows, the Trainer's every row): numbers, not all integers, regress;
  integers (`3` or `3.0` alike) regress when they looks_regressed, else they are class ids."""
  if any(not float(value).is_integer() for value in counts):
    return 'regression', f'{label} holds numbers, not all integers'
  if looks_regressed(counts):
    return (
      'regression',
      f'{label} holds {len(counts)} distinct integers in {where}, most in fewer than '
      f'{MIN_CLASS_ROWS} rows: a quantity',
    )
  if regress_hint(label, counts):
    return 'classification', f'{label} holds class ids; {regress_hint(label, counts)}'

  if any(isinstance(value, float) for value in counts) and len(counts) > 1:
    shown = ', '.join(f'{value:.1f}' for value in sorted(counts)[:SHOWN_ROWS])
    return 'classification', f'{label} holds class ids written as decimals ({shown})'
  return 'classification', f'{label} holds class ids or names'


def constant_message(label: str, value: str, where: str) -> str:
  """The refusal of a label of one value, whatever the task: no threshold is offered at it."""
  return (
    f"label '{label}': every one of {where} is {value}: a constant; a classifier needs two "
    'classes or more, and a constant has nothing to regress'
  )


def _number(value: str):
  """The finite number a label cell holds, written as text or not (`$13.08`), else None."""
  try:
    number = text_numbers.parse(value)
  except ValueError:
    return None
  return number if number == number and abs(number) != float('inf') else None


def task_line(label: str, task: str, threshold, why: str = '') -> str:
  """What the model learns and why, said at the start and in the summary, with how to ask for
  the other: 'fare as a number (regression: fare holds numbers, not all integers; …)'."""
  if task == 'regression':
    return (
      f'{label} as a number (regression{": " + why if why else ""}; '
      f'two classes: --label-threshold T)'
    )
  line = threshold_line(label, threshold)
  return line + (f' ({why})' if why and threshold is None else '')


def threshold_line(label: str, threshold) -> str:
  """What the model learns, said at the start and in the summary: 'tips > 0 as two classes'
  when a threshold turns the label's numbers into classes, else 'tips as classes'."""
  if threshold is None:
    return f'{label} as classes'
  return f'{label} > {threshold:g} as two classes (--label-threshold {threshold:g})'


def spelling_key(name: str) -> str:
  """What tells two class names apart: neither case, nor Unicode's compatibility forms (NFKC:
  'ｙｅｓ' is 'yes'), nor spaces do ('Yes ', 'yes\\u00a0' are 'yes'; a run of spaces inside is
  one: folded_key)."""
  return folded_key(unicodedata.normalize('NFKC', name))


def folded_key(name: str) -> str:
  """A name lower-cased, its spaces (SPACES) folded: one ' ' for a run, none at its ends. What
  trainer/tabular_input.py computes in TensorFlow (which has no NFKC: it compares a label with
  every spelling of each class, each folded so)."""
  return _SPACES.sub(' ', name).strip(' ').lower()


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
  """ "'yes' from 'yes' (412), 'Yes' (33), 'yes\\xa0' (2); 'no' from …": one_spelling's merges,
  every spelling listed as Python writes it (repr: a space other than ' ' shows as its escape)."""
  return '; '.join(
    f'{name!r} from ' + ', '.join(f'{s!r} ({rows:,})' for s, rows in spellings.items())
    for name, spellings in merged.items()
  )


def short_classes_message(
  what: str, eval_counts: Dict[str, int], totals: Dict[str, int], minimum: int, hint: str = ''
) -> str:
  """The refusal before training of classes with fewer than `minimum` eval examples
  (--min-eval-class-examples), which the Evaluator would bless no model on ('' for none), with
  advice that works: a class short of `minimum` in all cannot get there at any eval share (add
  examples, drop or merge it, or a lower minimum); else a larger --eval-percent. `what`:
  '--label species' or 'image classes'; hint: regress_hint's, said first."""
  short = sorted((n, name) for name, n in eval_counts.items() if n < minimum)
  if not minimum or not short:
    return ''
  share = sum(eval_counts.values()) / max(sum(totals.values()), 1)
  said = ', '.join(f'{name!r} {n} ({totals.get(name, n)} in all)' for n, name in short[:SHOWN_ROWS])
  more = f' and {len(short) - SHOWN_ROWS} more' if len(short) > SHOWN_ROWS else ''
  tiny = [name for _, name in short if totals.get(name, 0) < minimum]
  lower = min(n for n, _ in short)
  fewer = (
    f'--min-eval-class-examples {lower}' if lower else '--min-eval-class-examples 0 (not checked)'
  )
  if tiny:
    needed = -(-minimum // share) if share else minimum
    advice = (
      f'{tiny[0]!r} holds fewer than {minimum} in all, so no eval share reaches it: add '
      f'examples (about {needed:.0f} in all at this eval share of {share:.0%}), drop or merge '
      f'the class, or {fewer}'
    )
  else:
    advice = f'a larger --eval-percent (this split holds {share:.0%}), or {fewer}'
  return (
    f'{what}: eval examples of {said}{more}; the Evaluator needs {minimum} of each '
    f'(--min-eval-class-examples) and would bless no model: {advice}'
    + (f'; {hint}' if hint else '')
  )


def regress_hint(label: str, counts: Dict[float, int]) -> str:
  """For integer classes of many values (an `age` of 18-90): how to regress them instead, for
  the run's first lines ('' when they are few)."""
  if len(counts) < MIN_REGRESSION_VALUES:
    return ''
  return f'{len(counts)} integer classes; a number to predict? --task regression'
