"""A column that leaks the label: each model column alone, as a one-feature rule learned on a
train sample and scored on an eval sample. A rule that is right for nearly every eval row means
the column is the label under another name (`B`/`M` for 1/0), a function of it (`3 × label + 1`)
or its threshold: a model would learn that column and nothing else, score 1.0 and be pushed.

The rule: the label held by most train rows of the same value (a value train lacks: the most
common label, for categories; the rows of the nearest values, for numbers), which catches copies,
affine maps and thresholds alike without a model, and scores a real column near what a model of
that column alone would. Classes: right for 99 % of eval rows or more, the column is the label.

For a number to regress, the rule predicts the mean label rank of the same rows, and its score is
the R² of the label's ranks on the eval sample (ranks over train and eval: a few outliers, 8 of
3,000 deliveries at 5e4–2e5 minutes, made the R² of every column and of the label itself hugely
negative and alike). No fixed score tells a copy from a strong real column, so a column is the
label when it scores within LEAK_MARGIN of the label's own score through the same rule
(label_score, 0.9999 or so): a copy, an affine or any monotone map of it (`exp(label)`) scores
exactly that, the label plus noise of 0.05 % of its variance 0.0005–0.0027 below it, a column of
R² 0.99 (a synthetic price's square feet) 0.0085–0.042 below it (measured on 200 to 8,000 rows
of uniform and log-normal labels, five seeds each).

Whatever the table's size (one_to_one): a column whose values map one-to-one onto the label's
classes in every sampled row of train and eval, each value in MIN_VALUE_ROWS rows or more (lot
numbers, one per cultivar) is the label under another name; on fewer than MIN_EVAL_ROWS eval
rows the other near-perfect columns are named, not judged (unjudged).
"""

from typing import Dict, Sequence

import numpy as np

from contracts.errors import UnusableData

LEAK_SCORE = 0.99  # eval accuracy of the one-feature rule from which a column leaks a class
LEAK_MARGIN = 0.003  # regression: rank R² below the label's own score from which a column is not it
# Fewer eval rows: scores are recorded, no column is judged (on 64 rows a strong real column, a
# flower's petal length for its species, was right for every one by chance).
MIN_EVAL_ROWS = 100
SHOWN = 20  # columns, best first, that training.json and the report keep
MIN_VALUE_ROWS = 3  # one_to_one: rows each value holds, at least (fewer: a row a value is an id)
PAIRS_SHOWN = 3  # value → class pairs a refusal names


def _windows(ordered, evaluation, exact: bool):
  """(start, end) in `ordered` of the train rows each eval value's rule reads: the same value's
  (categories, `exact`), else the nearest value's, or the √n rows around it when it has fewer."""
  count = len(ordered)
  low = np.searchsorted(ordered, evaluation, 'left')
  high = np.searchsorted(ordered, evaluation, 'right')
  if exact:
    return (low, high), high > low
  left, right = np.clip(low - 1, 0, count - 1), np.clip(low, 0, count - 1)
  nearer_left = np.abs(evaluation - ordered[left]) <= np.abs(ordered[right] - evaluation)
  nearest = ordered[np.where(nearer_left, left, right)]
  group = (np.searchsorted(ordered, nearest, 'left'), np.searchsorted(ordered, nearest, 'right'))
  rows = max(1, int(np.sqrt(count)))
  centre = (group[0] + group[1]) // 2
  start = np.clip(centre - rows // 2, 0, max(0, count - rows))
  small = group[1] - group[0] < rows
  return (np.where(small, start, group[0]), np.where(small, start + rows, group[1])), high > low


def regression_score(train, train_labels, evaluation, eval_labels, exact: bool) -> float:
  """Eval R² of 'the mean train label of the rows of the same value' (the windows of
  rule_score; a category train lacks: the train mean)."""
  values, targets = np.asarray(train), np.asarray(train_labels, np.float64)
  evaluation, eval_labels = np.asarray(evaluation), np.asarray(eval_labels, np.float64)
  order = np.argsort(values, kind='stable')
  held = np.concatenate([[0.0], np.cumsum(targets[order])])
  (start, end), _ = _windows(values[order], evaluation, exact)
  rows = np.maximum(end - start, 1)
  predicted = np.where(end > start, (held[end] - held[start]) / rows, targets.mean())
  spread = np.sum((eval_labels - eval_labels.mean()) ** 2)
  return float(1 - np.sum((eval_labels - predicted) ** 2) / spread) if spread > 0 else 0.0


def ranks(train_labels, eval_labels) -> tuple:
  """The labels as their average ranks over train and eval together, in [0, 1] (ties share
  one): what the regression rule scores, so that outliers weigh as much as any row."""
  both = np.concatenate([np.asarray(train_labels, np.float64), np.asarray(eval_labels, np.float64)])
  values, inverse, counts = np.unique(both, return_inverse=True, return_counts=True)
  below = np.cumsum(counts) - counts  # rows below each value
  rank = (below + (counts - 1) / 2.0) / max(len(both) - 1, 1)
  ranked = rank[inverse]
  return ranked[: len(train_labels)], ranked[len(train_labels) :]


def label_score(train_labels, eval_labels) -> float:
  """The R² of the label's ranks through the label itself as a number column
  (regression_score): the most a column can score, short of 1 by what the √n-row mean loses."""
  train_ranks, eval_ranks = ranks(train_labels, eval_labels)
  return regression_score(train_labels, train_ranks, eval_labels, eval_ranks, exact=False)


def rule_score(train, train_labels, evaluation, eval_labels, exact: bool) -> float:
  """Eval accuracy of 'the most common train label among the rows of the same value' (a value
  train lacks: for categories (`exact`), the most common label overall; for numbers, the rows of
  the √n nearest train values)."""
  values, train_labels = np.asarray(train), np.asarray(train_labels)
  evaluation = np.asarray(evaluation)
  labels, label_ids = np.unique(train_labels, return_inverse=True)
  order = np.argsort(values, kind='stable')
  ordered, count = values[order], len(values)
  held = np.zeros((count + 1, len(labels)), dtype=np.int64)  # labels held by the first i rows
  held[1:] = np.cumsum(np.eye(len(labels), dtype=np.int64)[label_ids[order]], axis=0)
  window, found = _windows(ordered, evaluation, exact)
  within = held[window[1]] - held[window[0]]
  predicted = labels[within.argmax(axis=1)]
  if exact:
    predicted = np.where(found, predicted, labels[np.bincount(label_ids).argmax()])
  return float(np.mean(predicted == np.asarray(eval_labels)))


def single_feature_scores(
  train: Dict[str, np.ndarray],
  train_labels,
  evaluation: Dict[str, np.ndarray],
  eval_labels,
  categorical: Sequence[str] = (),
  regression: bool = False,
) -> Dict[str, float]:
  """{column: its one-feature rule's eval accuracy (regression: R² of the label's ranks)}, best
  first (the SHOWN best); `categorical`: the columns whose values are compared exactly."""
  if not len(train_labels) or not len(eval_labels):
    return {}
  score = regression_score if regression else rule_score
  if regression:
    train_labels, eval_labels = ranks(train_labels, eval_labels)
  scores = {
    name: round(
      score(train[name], train_labels, evaluation[name], eval_labels, name in categorical), 4
    )
    for name in sorted(train)
  }
  return dict(sorted(scores.items(), key=lambda item: -item[1])[:SHOWN])


def _bar(train_labels, eval_labels, regression: bool) -> tuple:
  """(the score from which a column is the label, the most common class's share (0 to regress);
  None for a bar no rule can be judged against: the label's own ranks unread by the rule)."""
  if regression:
    itself = round(label_score(train_labels, eval_labels), 4)
    return (itself - LEAK_MARGIN if itself > 0.5 else None), 0.0
  eval_labels = np.asarray(eval_labels)
  if not len(eval_labels):
    return None, 0.0
  return LEAK_SCORE, np.unique(eval_labels, return_counts=True)[1].max() / len(eval_labels)


def _gives(score: float, rows: int, regression: bool, majority: float, itself: float) -> str:
  if regression:
    return (
      f"explains {score:.2%} of the variance of the label's ranks on {rows} eval rows (the mean "
      'rank of the train rows of the nearest values), as much as the label itself through the '
      f'same rule ({itself:.2%})'
    )
  return (
    f'gives the label for {score:.1%} of {rows} eval rows (a one-feature rule learned on train; '
    f'the most common class alone: {majority:.1%})'
  )


def check(
  scores: Dict[str, float],
  train_labels,
  eval_labels,
  label: str,
  allowed: Sequence[str] = (),
  regression: bool = False,
) -> None:
  """Raises UnusableData naming the first column whose rule scores LEAK_SCORE or more (to
  regress: within LEAK_MARGIN of label_score) on enough eval rows, unless the user keeps it
  (`allowed`: --allow-feature) or the label is so constant that every rule scores that much
  (the majority class alone does)."""
  rows = len(eval_labels)
  if rows < MIN_EVAL_ROWS:
    return
  least, majority = _bar(train_labels, eval_labels, regression)
  if least is None or majority >= LEAK_SCORE:
    return
  for name, score in scores.items():
    if score >= least and name not in allowed:
      gives = _gives(score, rows, regression, majority, least + LEAK_MARGIN)
      raise UnusableData(
        f"--label {label}: column '{name}' alone {gives}: the label under another name, or "
        f'computed from it? Drop the column, or keep it with --allow-feature {name}'
      )


def unjudged(
  scores: Dict[str, float], train_labels, eval_labels, allowed=(), regression: bool = False
) -> str:
  """On fewer than MIN_EVAL_ROWS eval rows, where check judges nothing: the columns that would
  have stopped the run, named for the summary ('' for none): "'x' 100.0%, 'y' 99.2% alone on
  77 eval rows: too few to judge; the label under another name?"."""
  rows = len(eval_labels)
  if not rows or rows >= MIN_EVAL_ROWS:
    return ''
  least, majority = _bar(train_labels, eval_labels, regression)
  if least is None or majority >= LEAK_SCORE:
    return ''
  found = [
    (name, score) for name, score in scores.items() if score >= least and name not in allowed
  ]
  if not found:
    return ''
  named = ', '.join(f'{name!r} {score:.1%}' for name, score in found[:PAIRS_SHOWN])
  more = f' and {len(found) - PAIRS_SHOWN} more' if len(found) > PAIRS_SHOWN else ''
  what = "of the label's rank variance" if regression else 'right'
  return (
    f'{named}{more} {what} alone on {rows} eval rows (fewer than {MIN_EVAL_ROWS}: not judged); '
    'the label under another name? Drop it, or keep it with '
    + (f'--allow-feature {found[0][0]}' if len(found) == 1 else '--allow-feature COLUMN')
  )


def one_to_one(values, classes, present=None) -> list:
  """[(value, class), …] when the column's `values` map one-to-one onto the label's `classes`
  (class ids or names) over the rows given (`present`: the rows holding a value), two classes
  or more, each value in MIN_VALUE_ROWS rows or more; [] otherwise."""
  values, classes = np.asarray(values), np.asarray(classes)
  if present is not None:
    values, classes = values[present], classes[present]
  if not len(values):
    return []
  pairs, rows = np.unique(
    np.stack([values.astype(str), classes.astype(str)], 1), axis=0, return_counts=True
  )
  held = len(np.unique(values.astype(str)))
  if (
    len(pairs) != held
    or held != len(np.unique(classes.astype(str)))
    or held < 2
    or rows.min() < MIN_VALUE_ROWS
  ):
    return []
  return [(str(value), str(name)) for value, name in pairs]


def check_one_to_one(columns: Dict[str, tuple], classes, label: str, allowed=()) -> None:
  """Raises UnusableData for the first column (by name) of `columns` ({name: (values, present
  rows)}) one_to_one with `classes`, whatever the number of rows, unless kept (--allow-feature)."""
  for name in sorted(columns):
    if name in allowed:
      continue
    pairs = one_to_one(columns[name][0], classes, columns[name][1])
    if pairs:
      rows = int(np.sum(columns[name][1])) if columns[name][1] is not None else len(classes)
      shown = ', '.join(f'{value!r} → {name_!r}' for value, name_ in pairs[:PAIRS_SHOWN])
      more = ', …' if len(pairs) > PAIRS_SHOWN else ''
      raise UnusableData(
        f"--label {label}: column '{name}' maps one-to-one onto the label's {len(pairs)} "
        f'classes in all {rows:,} rows read ({shown}{more}): the label under another name. '
        f'Drop the column, or keep it with --allow-feature {name}'
      )
