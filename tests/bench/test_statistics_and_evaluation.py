"""bench.statistics_and_evaluation's measurements on a real run's artifacts (tabular_run: taxi
CSV with a slice feature): TFX's Evaluator with TFMA's metrics, the project's derived ones and
the NumPy ceiling find the same accuracy; every measurement runs; the summary's ratios."""

import os

import pytest

from bench import statistics_and_evaluation as bench
from contracts import evaluation


@pytest.fixture(scope='module')
def measured(tabular_run, tmp_path_factory):
  code, _, output, _ = tabular_run
  assert code == 0
  root = os.path.join(output, 'pipeline_root')
  examples = bench._single(os.path.join(root, 'CsvExampleGen', 'examples'))
  model = bench._single(os.path.join(root, 'Trainer', 'model'))
  folder = tmp_path_factory.mktemp('measured')
  return {
    kind: bench.measure_one(kind, examples, model, str(folder / kind))
    for kind in bench.STATISTICS + bench.EVALUATION
  }


def test_stock_project_and_ceiling_evaluations_find_the_same_accuracy(measured):
  ceiling = measured['evaluation_ceiling']
  assert ceiling['examples'] > 100
  assert 0 < ceiling['accuracy'] < 1
  for kind in ('evaluation_stock', 'evaluation_project'):
    assert measured[kind]['sparse_categorical_accuracy'] == pytest.approx(
      ceiling['accuracy'], abs=1e-6
    ), kind
  assert measured['evaluation_project'][evaluation.EXAMPLE_COUNT_KEY] == ceiling['examples']


def test_every_measurement_is_timed(measured):
  assert all(found['seconds'] > 0 for found in measured.values())


def test_summary_gives_the_ratio_of_medians_and_its_range_across_rounds():
  runs = {
    'a': [{'seconds': s, 'peak_mb': 10.0} for s in (4.0, 6.0, 5.0)],
    'b': [{'seconds': s, 'peak_mb': m} for s, m in ((1.0, 20.0), (2.0, 30.0), (2.5, 25.0))],
  }
  found = bench.summary(runs, 'a', 'b')
  assert found['speedup'] == pytest.approx(5.0 / 2.0)
  assert found['speedup_range'] == pytest.approx([4.0 / 2.5, 6.0 / 1.0])
  assert found['peak_mb'] == {'a': 10.0, 'b': 30.0}
