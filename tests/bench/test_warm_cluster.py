"""`bench.warm_cluster --quick` on the local Flink cluster: the default run on both runners is
there with its Beam components and Flink jobs, the ratio and verdicts follow from the runs (no
speed asserted; the CSV's cost lines are bench.engines', tested in test_engines.py)."""

import pytest

from bench import warm_cluster
from tests.support import bench_runs

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('flink')]


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  return bench_runs.figures(warm_cluster.main, tmp_path_factory.mktemp('bench'), '--quick')


def test_every_run_ended_and_every_beam_component_was_timed(figures):
  for runner, runs in figures['default_runs'].items():
    assert [run.get('failed') for run in runs] == [None], (runner, runs)
    assert {'StatisticsGen', 'Evaluator'} <= set(figures['default_components'][runner])
    assert any(c.endswith('ExampleGen') for c in figures['default_components'][runner])
  assert [len(run['flink_jobs']) >= 3 for run in figures['default_runs']['flink']] == [True]
  assert figures['csv_cost'] is None and figures['sizes'] == []


def test_ratio_and_verdicts_follow_from_the_runs(figures):
  walls = {r: runs[0]['wall_s'] for r, runs in figures['default_runs'].items()}
  ratio = figures['flink_over_direct']
  assert ratio['value'] == pytest.approx(walls['flink'] / walls['direct'])
  assert ratio['rounds'] == pytest.approx([ratio['value']] * 2)
  worst = max(c['mean_s'] for c in figures['default_components']['flink'].values())
  targets = figures['targets']
  assert targets['component_s']['value'] == pytest.approx(worst)
  assert targets['component_s']['met'] == (worst <= warm_cluster.COMPONENT_TARGET_S)
  assert targets['flink_over_direct']['met'] == (ratio['value'] <= warm_cluster.RATIO_TARGET)
