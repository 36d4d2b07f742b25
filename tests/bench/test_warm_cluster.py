"""`bench.warm_cluster --quick` on the local Flink cluster: the default run on both runners and
the CSV at two tiny sizes are there, the ratio, cost lines and verdicts follow from the runs (no
speed asserted)."""

import json
import statistics

import pytest

from bench import warm_cluster

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('flink')]


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  path = tmp_path_factory.mktemp('bench') / 'warm_cluster.json'
  warm_cluster.main(['--quick', '--json', str(path)])
  with open(path) as f:
    return json.load(f)


def test_every_run_ended_and_every_beam_component_was_timed(figures):
  for runner, runs in figures['default_runs'].items():
    assert [run.get('failed') for run in runs] == [None], (runner, runs)
    assert {'StatisticsGen', 'Evaluator'} <= set(figures['default_components'][runner])
    assert any(c.endswith('ExampleGen') for c in figures['default_components'][runner])
  for size in figures['sizes']:
    assert [run.get('failed') for run in figures['csv_runs'][str(size)]] == [None]


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


def test_each_cost_line_goes_through_its_two_sizes(figures):
  small, full = figures['sizes']
  for component, line in figures['csv_cost'].items():
    seconds = {
      n: statistics.mean(run['components'][component] for run in figures['csv_runs'][str(n)])
      for n in (small, full)
    }
    for n in (small, full):
      assert line['fixed_s'] + line['marginal_us'] * n / 1e6 == pytest.approx(seconds[n], abs=1e-6)
