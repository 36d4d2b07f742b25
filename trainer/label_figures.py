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

from typing import Optional

import numpy as np

from contracts import evaluation

FENCE = 3.0  # Tukey's far-out fences: Q1 - FENCE·IQR, Q3 + FENCE·IQR
MEAN_SHIFT = 0.5  # the rows beyond move the mean by more than this share of the IQR
NORMAL_IQR = 1.349  # a normal distribution's IQR in deviations


def tail(labels: np.ndarray) -> Optional[dict]:
  """{'iqr', 'rows', 'of', 'low', 'high', 'mean', 'mean_without', 'median'} of a heavy tail (rows:
  those beyond the fences [low, high]); None when the tail is not heavy."""
  q1, median, q3 = np.percentile(labels, [25, 50, 75])
  spread = q3 - q1
  if not spread > 0:
    return None
  low, high = q1 - FENCE * spread, q3 + FENCE * spread
  inside = (labels >= low) & (labels <= high)
  beyond = int(labels.size - inside.sum())
  if not beyond:
    return None
  mean, mean_without = float(labels.mean()), float(labels[inside].mean())
  if abs(mean - mean_without) <= MEAN_SHIFT * spread:
    return None
  return {
    'iqr': float(spread),
    'rows': beyond,
    'of': int(labels.size),
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


def standardization(figures: dict) -> tuple:
  """(center, scale) the Trainer standardizes the label with (of `of`'s figures): the mean and
  deviation; a heavy tail's median and IQR / 1.349."""
  tail = figures.get('label_tail')
  if tail:
    return tail['median'], tail['iqr'] / NORMAL_IQR
  return figures['label_mean'], figures['label_std']
