"""The train split's figures of a regression label (training.json): its mean and deviation (the
label standardized), its median, range and MAPE's floor (what the Evaluator's baselines and
checks take), and whether its tail is heavy.

Heavy tail, decided: Tukey's far-out fences, Q1 - 3·IQR and Q3 + 3·IQR (a normal label has
about 2 rows in a million beyond them); the label is heavy-tailed when some rows lie beyond them
and they move the mean by more than half the IQR (the mean with them against without). A
log-normal price (σ 1) has 3 % of rows beyond the upper fence that move its mean by 0.2 IQR: not
named; 6 trips of 10⁶ seconds among 3,000 of minutes move it by several IQRs: named. An IQR of 0
(over half the labels one value) is not judged.

A heavy-tailed label is standardized robustly (`standardization`): by its median and IQR / 1.349
(a normal label's deviation) rather than its mean and deviation, which the tail inflates until
the bulk spans a few hundredths of a deviation and the model learns nothing of it.
"""

from typing import Callable, NamedTuple, Optional, Tuple

import numpy as np

from contracts import evaluation


class Split(NamedTuple):
  """A split's label read once (of_split): exact figures, and how to count beyond fences."""

  count: int
  mean: float
  std: float
  minimum: float
  maximum: float
  beyond: Callable[[float, float], Tuple[int, float]]  # (low, high) → (rows beyond, sum inside)

  def passes(self, low: float, high: float) -> bool:
    """Whether some row lies beyond [low, high] (its range says so without a pass)."""
    return self.minimum < low or self.maximum > high


FENCE = 3.0  # Tukey's far-out fences: Q1 - FENCE·IQR, Q3 + FENCE·IQR
MEAN_SHIFT = 0.5  # the rows beyond move the mean by more than this share of the IQR
NORMAL_IQR = 1.349  # a normal distribution's IQR in deviations


def tail(labels: np.ndarray, split: Optional[Split] = None) -> Optional[dict]:
  """{'iqr', 'rows', 'of', 'low', 'high', 'mean', 'mean_without', 'median'} of a heavy tail (rows:
  those beyond the fences [low, high]); None when the tail is not heavy. `split`: the whole split
  `labels` is a sample of: the fences from the sample, the rows beyond them and the means exact."""
  q1, median, q3 = np.percentile(labels, [25, 50, 75])
  spread = q3 - q1
  if not spread > 0:
    return None
  low, high = q1 - FENCE * spread, q3 + FENCE * spread
  if split is None:
    inside = (labels >= low) & (labels <= high)
    count, beyond = int(labels.size), int(labels.size - inside.sum())
    mean = float(labels.mean())
    mean_without = float(labels[inside].mean()) if beyond else mean
  else:
    count, mean = split.count, split.mean
    beyond, inside_sum = split.beyond(low, high) if split.passes(low, high) else (0, 0.0)
    mean_without = inside_sum / max(count - beyond, 1)
  if not beyond:
    return None
  if abs(mean - mean_without) <= MEAN_SHIFT * spread:
    return None
  return {
    'iqr': float(spread),
    'rows': beyond,
    'of': count,
    'low': float(low),
    'high': float(high),
    'mean': mean,
    'mean_without': mean_without,
    'median': float(median),
  }


def of(labels: np.ndarray) -> dict:
  """training.json's label figures of the train split's labels (float64, one a row)."""
  labels = np.asarray(labels, np.float64)
  figures = {
    'label_mean': float(labels.mean()),
    'label_std': float(labels.std()),
    'label_median': float(np.median(labels)),
    'label_min': float(labels.min()),
    'label_max': float(labels.max()),
    'label_mape_floor': float(evaluation.MAPE_FLOOR * np.median(np.abs(labels))),
  }
  heavy = tail(labels)
  return dict(figures, label_tail=heavy) if heavy else figures


def of_split(split: Split, sample: np.ndarray) -> dict:
  """`of`'s figures of a split read once without holding it (trainer/module_file.py): its count,
  mean, deviation and range exact; its median and MAPE's floor those of `sample`, a uniform
  sample of its rows; the heavy tail's fences from the sample, its rows and means exact. A split
  no bigger than the sample: `of` itself."""
  sample = np.asarray(sample, np.float64)
  if split.count <= sample.size:
    return of(sample)
  figures = {
    'label_mean': split.mean,
    'label_std': split.std,
    'label_median': float(np.median(sample)),
    'label_min': split.minimum,
    'label_max': split.maximum,
    'label_mape_floor': float(evaluation.MAPE_FLOOR * np.median(np.abs(sample))),
  }
  heavy = tail(sample, split)
  return dict(figures, label_tail=heavy) if heavy else figures


def standardization(figures: dict) -> tuple:
  """(center, scale) the Trainer standardizes the label with (of `of`'s figures): the mean and
  deviation; a heavy tail's median and IQR / 1.349."""
  tail = figures.get('label_tail')
  if tail:
    return tail['median'], tail['iqr'] / NORMAL_IQR
  return figures['label_mean'], figures['label_std']
