"""`bench.pipeline_scaling --quick` (two small sizes of each kind, bench.csv_example_gen's CSV
figures at a hundredth): the figures are complete and follow from each other (no speed test)."""

import pytest

from bench import pipeline_scaling
from tests.support import bench_runs

pytestmark = pytest.mark.slow  # pipeline runs and Beam in fresh processes


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  folder = tmp_path_factory.mktemp('bench')
  chart = folder / 'chart.png'
  return bench_runs.figures(pipeline_scaling.main, folder, '--quick', '--chart', str(chart)), chart


def test_every_run_has_its_components_seconds_and_each_kind_its_cost_line(figures):
  figures, _ = figures
  assert (
    set(figures['runs']) == set(figures['cost']) == {'images_project', 'csv_project', 'csv_stock'}
  )
  for name, runs in figures['runs'].items():
    assert len(runs) >= 2, name
    for run in runs.values():
      components = run['components']
      assert {'StatisticsGen', 'SchemaGen', 'Trainer', 'Evaluator', 'Pusher'} <= set(components)
      assert ('ImageExampleGen' if name.startswith('images') else 'CsvExampleGen') in components
      assert all(0 < s < run['wall_s'] for s in components.values()), run
    assert set(figures['cost'][name]) == set(next(iter(runs.values()))['components']) | {'wall'}
    for line in figures['cost'][name].values():
      assert set(line) == {'fixed_s', 'marginal_us', 'max_residual_s'}


def test_each_cost_line_is_the_least_squares_line_through_its_runs(figures):
  figures, _ = figures
  for name, runs in figures['runs'].items():
    sizes = sorted(int(n) for n in runs)
    assert len(sizes) == 2, name  # --quick: two points, and the line goes through both
    line = figures['cost'][name]['Trainer']
    for n in sizes:
      predicted = line['fixed_s'] + line['marginal_us'] * n / 1e6
      assert predicted == pytest.approx(runs[str(n)]['components']['Trainer'], abs=1e-6)
    assert line['max_residual_s'] == pytest.approx(0, abs=1e-6)  # through both points


def test_the_small_csv_ratio_is_the_runs_wall_times(figures):
  figures, _ = figures
  compared = figures['small_csv_over_digits_sizes']
  rows = figures['sizes']['csv']
  assert compared['csv_rows'] == min(rows, key=lambda n: abs(n - pipeline_scaling.SMALL_CSV_ROWS))
  assert compared['images'] == figures['sizes']['images'][0]
  csv_run = figures['runs']['csv_project'][str(compared['csv_rows'])]
  digits_run = figures['runs']['images_project'][str(compared['images'])]
  assert figures['small_csv_over_digits'] == pytest.approx(csv_run['wall_s'] / digits_run['wall_s'])
  ratio = figures['small_csv_over_digits']  # --quick: one pair, so its spread is that ratio
  assert figures['small_csv_over_digits_rounds'] == pytest.approx([ratio, ratio])


def test_the_csv_example_gen_figures_are_there(figures):
  figures, _ = figures
  assert set(figures['csv_200k']) == {'stock_seconds', 'project_seconds', 'ceiling_seconds'}
  assert set(figures['csv_1m']) == {
    'project_rows_per_s_per_core',
    'ceiling_rows_per_s',
    'peak_mb_250k',
    'peak_mb_1m',
  }
  assert all(value > 0 for value in [*figures['csv_200k'].values(), *figures['csv_1m'].values()])
  part = figures['csv_example_gen']
  assert part['rows'] == [2_000, 2_500, 10_000]
  assert all(mb > 100 for mb in part['peak_mb'].values())  # TensorFlow alone is more


def test_csv_ratios_follow_from_the_figures_and_targets_from_the_ratios(figures):
  figures, _ = figures
  c200, c1m, part = figures['csv_200k'], figures['csv_1m'], figures['csv_example_gen']
  ratios = part['ratios']
  assert ratios['stock_over_project_200k'] == pytest.approx(
    c200['stock_seconds'] / c200['project_seconds']
  )
  assert ratios['per_core_over_ceiling_1m'] == pytest.approx(
    c1m['project_rows_per_s_per_core'] / c1m['ceiling_rows_per_s']
  )
  assert ratios['memory_1m_over_250k'] == pytest.approx(c1m['peak_mb_1m'] / c1m['peak_mb_250k'])
  for name, target in part['targets'].items():
    met = (
      ratios[name] <= target['target']
      if name.startswith('memory')
      else ratios[name] >= target['target']
    )
    assert target['met'] == met, name


def test_the_chart_is_drawn(figures):
  _, chart = figures
  import PIL.Image

  with PIL.Image.open(chart) as image:
    assert image.size[0] > 1000 and image.size[1] > 300  # three panels side by side
    assert len(image.getcolors(1 << 16) or range(300)) > 20  # lines and text, not blank
