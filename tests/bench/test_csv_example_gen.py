"""`bench.csv_example_gen --quick` (2,000 to 10,000 rows): the figures are complete and follow from
each other (no speed test)."""

import json

import pytest

from bench import csv_example_gen

pytestmark = pytest.mark.slow  # Beam runs in fresh processes (make test-fast leaves them out)


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  path = tmp_path_factory.mktemp('bench') / 'figures.json'
  csv_example_gen.main(['--quick', '--json', str(path)])
  with open(path) as f:
    return json.load(f)


def test_the_issue_s_figures_are_there(figures):
  assert figures['rows'] == [2_000, 2_500, 10_000]
  assert set(figures['csv_200k']) == {'stock_seconds', 'project_seconds', 'ceiling_seconds'}
  assert set(figures['csv_1m']) == {
    'project_rows_per_s_per_core',
    'ceiling_rows_per_s',
    'peak_mb_250k',
    'peak_mb_1m',
  }
  assert all(value > 0 for value in [*figures['csv_200k'].values(), *figures['csv_1m'].values()])
  assert all(mb > 100 for mb in figures['peak_mb'].values())  # TensorFlow alone is more


def test_ratios_follow_from_the_figures_and_targets_from_the_ratios(figures):
  c200, c1m, ratios = figures['csv_200k'], figures['csv_1m'], figures['ratios']
  assert ratios['stock_over_project_200k'] == pytest.approx(
    c200['stock_seconds'] / c200['project_seconds']
  )
  assert ratios['per_core_over_ceiling_1m'] == pytest.approx(
    c1m['project_rows_per_s_per_core'] / c1m['ceiling_rows_per_s']
  )
  assert ratios['memory_1m_over_250k'] == pytest.approx(c1m['peak_mb_1m'] / c1m['peak_mb_250k'])
  for name, target in figures['targets'].items():
    met = (
      ratios[name] <= target['target']
      if name.startswith('memory')
      else ratios[name] >= target['target']
    )
    assert target['met'] == met, name
