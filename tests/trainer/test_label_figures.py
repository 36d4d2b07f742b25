"""trainer/label_figures.py: the train split's label figures, and the heavy tail named."""

import numpy as np
import pytest

from contracts import evaluation
from trainer import label_figures


def _durations(rng, rows: int, outliers: int) -> np.ndarray:
  return np.concatenate([rng.gamma(2.0, 300.0, rows - outliers), rng.uniform(1e6, 3e6, outliers)])


def test_the_figures_are_the_train_labels_mean_median_range_and_mape_floor():
  labels = np.array([-4.0, 1.0, 2.0, 3.0, 100.0])
  found = label_figures.of(labels)
  assert found['label_mean'] == pytest.approx(20.4) and found['label_std'] == labels.std()
  assert (found['label_median'], found['label_min'], found['label_max']) == (2.0, -4.0, 100.0)
  assert found['label_mape_floor'] == pytest.approx(evaluation.MAPE_FLOOR * 3.0)  # median |label|


def test_a_few_huge_durations_make_a_heavy_tail_and_ordinary_labels_do_not():
  rng = np.random.default_rng(1)
  tail = label_figures.of(_durations(rng, 3000, 6))['label_tail']
  assert tail['of'] == 3000 and tail['rows'] >= 6  # the 6, and a long trip or two beyond
  assert tail['mean'] > 5 * tail['mean_without'] and tail['low'] < tail['median'] < tail['high']
  for ordinary in (
    rng.normal(50.0, 10.0, 100_000),
    rng.lognormal(3.0, 1.0, 100_000),  # prices: a long tail that hardly moves the mean
    rng.exponential(20.0, 100_000),
    rng.gamma(2.0, 300.0, 3000),
  ):
    assert 'label_tail' not in label_figures.of(ordinary)
  mostly_zero = np.concatenate([np.zeros(900), rng.uniform(1, 1e6, 100)])  # an IQR of 0
  assert label_figures.tail(mostly_zero) is None


def test_a_heavy_tailed_label_is_standardized_by_its_median_and_iqr():
  rng = np.random.default_rng(4)
  heavy = label_figures.of(_durations(rng, 3000, 6))
  center, scale = label_figures.standardization(heavy)
  assert center == heavy['label_median'] and scale == heavy['label_tail']['iqr'] / 1.349
  assert scale < heavy['label_std'] / 50  # the deviation the outliers inflate
  plain = label_figures.of(rng.normal(600.0, 200.0, 3000))
  assert label_figures.standardization(plain) == (plain['label_mean'], plain['label_std'])
