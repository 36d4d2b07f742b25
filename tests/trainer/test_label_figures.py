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


def _split(labels: np.ndarray) -> label_figures.Split:
  """The exact figures of `labels`, as a pass over a split gives them."""

  def beyond(low, high):
    inside = (labels >= low) & (labels <= high)
    return int((~inside).sum()), float(labels[inside].sum())

  return label_figures.Split(
    labels.size, labels.mean(), labels.std(), labels.min(), labels.max(), beyond
  )


def test_a_split_bigger_than_its_sample_has_exact_moments_range_and_tail_rows():
  rng = np.random.default_rng(5)
  labels = _durations(rng, 30_000, 6)
  sample = rng.choice(labels, 2_000, replace=False)
  found, exact = label_figures.of_split(_split(labels), sample), label_figures.of(labels)
  for key in ('label_mean', 'label_std', 'label_min', 'label_max'):
    assert found[key] == pytest.approx(exact[key], rel=1e-12), key
  assert found['label_median'] == pytest.approx(exact['label_median'], rel=0.05)  # sampled
  tail, exact_tail = found['label_tail'], exact['label_tail']
  assert tail['of'] == 30_000 and tail['rows'] >= 6 and tail['mean'] == found['label_mean']
  assert tail['rows'] == pytest.approx(exact_tail['rows'], abs=5)  # fences from the sample
  assert tail['mean_without'] == pytest.approx(exact_tail['mean_without'], rel=0.01)
  plain = rng.normal(50.0, 10.0, 30_000)  # inside the fences: no second pass asked for
  split = _split(plain)._replace(beyond=lambda low, high: pytest.fail('no rows beyond'))
  assert 'label_tail' not in label_figures.of_split(split, plain[:2_000])
  assert label_figures.of_split(_split(labels[:500]), labels[:500]) == label_figures.of(
    labels[:500]
  )
