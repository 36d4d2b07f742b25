"""`bench.module_input`: both accessors read the same batches of both cases; the figures agree
(no speed test)."""

import pytest

from bench import module_input
from tests.support import bench_runs

pytestmark = pytest.mark.slow  # tf.Transform on Beam, in process: over a minute


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  folder = tmp_path_factory.mktemp('bench')
  return bench_runs.figures(
    module_input.main, folder, '--records', '400', '--rounds', '2', '--batch', '20'
  )


def test_every_case_is_read_through_both_accessors(figures):
  assert set(figures['cases']) == set(module_input.CASES)
  assert figures['records'] == 400 and figures['batch'] == 20
  for case in figures['cases'].values():
    assert set(case['examples_per_s']) == set(module_input.ACCESSORS)
    assert all(rate > 0 for rate in case['examples_per_s'].values())


def test_both_accessors_give_the_same_batches_of_transformed_and_raw_examples(figures):
  assert all(case['same_batches'] for case in figures['cases'].values())


def test_the_ratio_is_the_median_of_its_rounds(figures):
  for case in figures['cases'].values():
    rounds = case['ratio_rounds']
    assert len(rounds) == 2
    assert case['ratio'] == pytest.approx(sum(rounds) / 2)
    assert case['ratio_spread'] == pytest.approx([min(rounds), max(rounds)])
