"""A column that leaks the label: each model column alone, as a one-feature rule learned on a
train sample and scored on an eval sample. A rule that is right for nearly every eval row means
the column is the label under another name (`B`/`M` for 1/0), a function of it (`3 × label + 1`)
or its threshold: a model would learn that column and nothing else, score 1.0 and be pushed.

The rule: the label held by most train rows of the same value (a value train lacks: the most
common label, for categories; the rows of the nearest values, for numbers), which catches copies,
affine maps and thresholds alike without a model, and scores a real column near what a model of
that column alone would. Classes: right for 99 % of eval rows or more, the column is the label.

For a number to regress, the rule predicts the mean label of the same rows, and its score is the
R² on the eval sample. No fixed R² tells a copy from a strong real column: the √n rows' mean
loses some variance even for the label itself (a log-normal price's own score on 4,096 rows:
0.98; a uniform one's: 0.9999), while a real column can reach 0.99 (a synthetic price's square
feet). So a column is the label when it scores within LEAK_MARGIN of the label's own score
through the same rule (label_score): a copy, an affine or any monotone map of it (`exp(label)`:
the rule reads ranks) scores exactly that, the label plus noise of 0.05 % of its variance
0.0002–0.0012 below it, a column of R² 0.99 0.005–0.012 below it (measured on 100 to 4,096 rows
of uniform, log-normal and integer labels).
"""

from typing import Dict, Sequence

import numpy as np

from contracts.errors import UnusableData

LEAK_SCORE = 0.99  # eval accuracy of the one-feature rule from which a column leaks a class
LEAK_MARGIN = 0.002  # regression: R² below the label's own score from which a column is not it
# Fewer eval rows: scores are recorded, no column is judged (on 64 rows a strong real column, a
# flower's petal length for its species, was right for every one by chance).
MIN_EVAL_ROWS = 100
SHOWN = 20  # columns, best first, that training.json and the report keep


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


def label_score(train_labels, eval_labels) -> float:
  """The R² of the label itself as a number column (regression_score): the most a column can
  score, short of 1 by what the rule's √n-row mean loses."""
  return regression_score(train_labels, train_labels, eval_labels, eval_labels, exact=False)


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
  """{column: its one-feature rule's eval accuracy (regression: R²)}, best first (the SHOWN
  best); `categorical`: the columns whose values are compared exactly."""
  if not len(train_labels) or not len(eval_labels):
    return {}
  score = regression_score if regression else rule_score
  scores = {
    name: round(
      score(train[name], train_labels, evaluation[name], eval_labels, name in categorical), 4
    )
    for name in sorted(train)
  }
  return dict(sorted(scores.items(), key=lambda item: -item[1])[:SHOWN])


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
  eval_labels = np.asarray(eval_labels)
  if len(eval_labels) < MIN_EVAL_ROWS:
    return
  if regression:
    itself = round(label_score(train_labels, eval_labels), 4)
    least, majority = itself - LEAK_MARGIN, 0.0
  else:
    least = LEAK_SCORE
    majority = np.unique(eval_labels, return_counts=True)[1].max() / len(eval_labels)
  if majority >= LEAK_SCORE:
    return
  for name, score in scores.items():
    if score >= least and name not in allowed:
      gives = (
        f"explains {score:.2%} of the label's variance (R²) on {len(eval_labels)} eval rows "
        f'(the mean label of the train rows of the nearest values), as much as the label '
        f'itself through the same rule ({itself:.2%})'
        if regression
        else f'gives the label for {score:.1%} of {len(eval_labels)} eval rows (a one-feature '
        f'rule learned on train; the most common class alone: {majority:.1%})'
      )
      raise UnusableData(
        f"--label {label}: column '{name}' alone {gives}: the label under another name, or "
        f'computed from it? Drop the column, or keep it with --allow-feature {name}'
      )
