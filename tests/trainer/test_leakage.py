"""trainer/leakage.py: a column that alone gives the label is found and stops training; the
columns a table needs are not."""

import re

import numpy as np
import pytest

from contracts.errors import UnusableData
from trainer import leakage


def _halves(rng, rows: int = 2000):
  label = rng.integers(0, 2, rows)
  noise = rng.normal(size=rows)
  weak = label + rng.normal(scale=1.0, size=rows)  # predictive as a real column: 0.69 at best
  columns = {
    'copy': np.where(label == 1, 7001, 4242),  # 'M'/'B' as hashed ids
    'affine': 3.0 * label + 1.0,
    'threshold': label * 0.5 + rng.uniform(0, 0.5, rows),  # label = threshold > 0.5
    'noise': noise,
    'weak': weak,
  }
  cut = rows // 2
  return (
    {k: v[:cut] for k, v in columns.items()},
    label[:cut],
    {k: v[cut:] for k, v in columns.items()},
    label[cut:],
  )


def test_copies_affine_maps_and_thresholds_of_the_label_score_one_and_real_columns_do_not():
  train, train_labels, evaluation, eval_labels = _halves(np.random.default_rng(0))
  scores = leakage.single_feature_scores(
    train, train_labels, evaluation, eval_labels, categorical=['copy']
  )
  assert all(scores[k] >= leakage.LEAK_SCORE for k in ('affine', 'copy', 'threshold'))
  assert scores['noise'] < 0.56 and 0.6 < scores['weak'] < 0.75
  with pytest.raises(UnusableData) as raised:
    leakage.check(scores, train_labels, eval_labels, 'diagnosis')
  said = str(raised.value)
  assert (
    said.startswith("--label diagnosis: column '") and 'alone gives the label for 100.0%' in said
  )
  assert said.endswith(f'keep it with --allow-feature {said.split(chr(39))[1]}')


def test_a_kept_column_a_constant_label_or_a_sliver_of_eval_rows_stops_nothing():
  train, train_labels, evaluation, eval_labels = _halves(np.random.default_rng(1))
  scores = leakage.single_feature_scores(train, train_labels, evaluation, eval_labels, ['copy'])
  leakage.check(scores, train_labels, eval_labels, 'y', allowed=['copy', 'affine', 'threshold'])
  leakage.check(scores, train_labels, np.ones(200, int), 'y')  # the majority scores as much
  leakage.check(scores, train_labels, eval_labels[: leakage.MIN_EVAL_ROWS - 1], 'y')
  with pytest.raises(UnusableData, match="column 'threshold'"):
    leakage.check(scores, train_labels, eval_labels, 'y', allowed=['copy', 'affine'])


def test_an_unseen_category_takes_the_most_common_label_not_a_neighbour():
  score = leakage.rule_score([1, 1, 5], [0, 0, 1], [2, 5], [0, 1], exact=True)
  assert score == 1.0  # 2 is unseen: the most common label (0), not 1's or 5's neighbour rule
  numbers = [1] * 5 + [5] * 5
  assert leakage.rule_score(numbers, [0] * 5 + [1] * 5, [4.9, 1.2], [1, 0], exact=False) == 1.0


def _regression_halves(label, columns):
  cut = len(label) // 2
  train = {k: v[:cut] for k, v in columns.items()}
  evaluation = {k: v[cut:] for k, v in columns.items()}
  scores = leakage.single_feature_scores(
    train, label[:cut], evaluation, label[cut:], regression=True
  )
  return scores, label[:cut], label[cut:]


def test_a_number_to_regress_leaks_through_its_copy_and_not_through_a_real_column():
  rng = np.random.default_rng(7)
  miles = rng.uniform(0, 20, size=800)
  fare = 3 + 2.5 * miles + rng.normal(0, 4, size=800)
  scores, train_labels, eval_labels = _regression_halves(
    fare, {'miles': miles, 'fare_copy': fare * 1.1}
  )
  assert scores['fare_copy'] > scores['miles'] > 0.5
  with pytest.raises(UnusableData, match=r"column 'fare_copy' alone explains 9\d\.\d\d% of"):
    leakage.check(scores, train_labels, eval_labels, 'fare', regression=True)
  leakage.check(scores, train_labels, eval_labels, 'fare', ['fare_copy'], regression=True)


@pytest.mark.parametrize('price', ['uniform', 'log-normal'])
def test_a_strong_real_column_is_kept_and_copies_or_the_label_with_a_trace_of_noise_are_not(price):
  """R² 0.99 (a synthetic price's square feet) is a real column; the label plus noise of 0.05 %
  of its variance (R² 0.9995), an affine or a monotone map of it are the label."""
  rng = np.random.default_rng(3)
  rows = 4000
  label = rng.uniform(1e5, 9e5, rows) if price == 'uniform' else np.exp(rng.normal(12, 0.6, rows))
  deviation = label.std()
  columns = {
    'sqft': label + rng.normal(0, deviation * np.sqrt(0.01 / 0.99), rows),
    'noisy_copy': label + rng.normal(0, deviation * np.sqrt(0.0005 / 0.9995), rows),
    'affine': 3 * label + 1,
    'exp': np.exp((label - label.mean()) / deviation),
  }
  assert 0.9985 < np.corrcoef(columns['noisy_copy'], label)[0, 1] ** 2 < 0.9998
  assert 0.988 < np.corrcoef(columns['sqft'], label)[0, 1] ** 2 < 0.992
  scores, train_labels, eval_labels = _regression_halves(label, columns)
  for leak in ('affine', 'exp', 'noisy_copy'):
    kept = [k for k in columns if k != leak]
    with pytest.raises(UnusableData, match=f"column '{leak}' alone explains"):
      leakage.check(scores, train_labels, eval_labels, 'price', kept, regression=True)
  leakage.check(scores, train_labels, eval_labels, 'price', ['affine', 'exp', 'noisy_copy'], True)
  assert leakage.label_score(train_labels, eval_labels) > 0.999  # ranks: whatever the spread


def test_a_heavy_tailed_label_scores_its_columns_on_ranks_and_never_gives_a_negative_share():
  """8 of 3,000 deliveries at 5e4–2e5 minutes and no real signal: the issue's run was refused as
  'items alone explains −604213.82 % … as the label itself (−11469508.97 %)'."""
  rng = np.random.default_rng(11)
  minutes = rng.gamma(4.0, 8.0, 3000)
  minutes[rng.choice(3000, 8, replace=False)] = rng.uniform(5e4, 2e5, 8)
  columns = {'items': rng.integers(1, 9, 3000).astype(float), 'copy': minutes * 60}
  scores, train_labels, eval_labels = _regression_halves(minutes, columns)
  assert abs(scores['items']) < 0.05 and scores['copy'] > 0.99
  assert leakage.label_score(train_labels, eval_labels) > 0.999
  leakage.check(scores, train_labels, eval_labels, 'minutes', ['copy'], regression=True)
  with pytest.raises(UnusableData) as raised:
    leakage.check(scores, train_labels, eval_labels, 'minutes', regression=True)
  said = str(raised.value)
  assert "column 'copy' alone explains 100.00% of the variance of the label's ranks" in said
  assert not re.search(r'[−-]\d', said)


def _wine(rng, rows: int = 80):
  cultivar = rng.choice(['barolo', 'grignolino', 'barbera'], rows)
  lot = {'barolo': 'LOT-011', 'grignolino': 'LOT-018', 'barbera': 'LOT-025'}
  return cultivar, np.array([lot[c] for c in cultivar])


def test_a_column_one_to_one_with_the_classes_stops_the_run_at_any_size():
  cultivar, batch_ref = _wine(np.random.default_rng(0))
  assert sorted(leakage.one_to_one(batch_ref, cultivar)) == [
    ('LOT-011', 'barolo'),
    ('LOT-018', 'grignolino'),
    ('LOT-025', 'barbera'),
  ]
  with pytest.raises(UnusableData) as raised:
    leakage.check_one_to_one({'batch_ref': (batch_ref, None)}, cultivar, 'cultivar')
  said = str(raised.value)
  assert said.startswith("--label cultivar: column 'batch_ref' maps one-to-one onto the label's 3")
  assert "in all 80 rows read ('LOT-011' → 'barolo'" in said
  assert said.endswith('--allow-feature batch_ref')
  leakage.check_one_to_one({'batch_ref': (batch_ref, None)}, cultivar, 'cultivar', ['batch_ref'])


def test_columns_that_are_not_one_to_one_with_the_classes_pass():
  rng = np.random.default_rng(1)
  cultivar, batch_ref = _wine(rng)
  shared = batch_ref.copy()
  shared[0] = 'LOT-011' if cultivar[0] != 'barolo' else 'LOT-018'  # one row off: a real column
  ids = np.array([f'row-{i}' for i in range(80)])  # a value a row: an id, not the label
  two_lots = np.where(cultivar == 'barolo', 'LOT-011', 'LOT-099')  # two classes share a lot
  for values in (shared, ids, two_lots):
    assert leakage.one_to_one(values, cultivar) == []
  assert leakage.one_to_one(np.array(['a'] * 9), np.array(['x'] * 9)) == []  # one class
  present = np.array([False] + [True] * 79)  # the row off holds no value: the rest map one-to-one
  assert len(leakage.one_to_one(shared, cultivar, present)) == 3


def test_below_the_eval_rows_judged_near_perfect_columns_are_named_not_silent():
  train, train_labels, evaluation, eval_labels = _halves(np.random.default_rng(2), rows=150)
  scores = leakage.single_feature_scores(train, train_labels, evaluation, eval_labels, ['copy'])
  leakage.check(scores, train_labels, eval_labels, 'y')  # 75 eval rows: not judged
  said = leakage.unjudged(scores, train_labels, eval_labels)
  assert "'affine' 100.0%" in said and 'on 75 eval rows (fewer than 100: not judged)' in said
  assert "'noise'" not in said and "'weak'" not in said
  assert leakage.unjudged(scores, train_labels, eval_labels, ['copy', 'affine', 'threshold']) == ''
  big = leakage.single_feature_scores(*_halves(np.random.default_rng(2)), ['copy'])
  assert leakage.unjudged(big, np.zeros(1000), np.arange(1000) % 2) == ''  # judged by check
