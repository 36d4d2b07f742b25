"""`bench.engines --quick` (tiny sizes, one round, on the local Flink cluster): every engine's runs
and cost lines are there and follow from each other, Flink ran at the parallelism asked for, the
ratios and verdicts follow from the lines (no speed asserted); and, without a cluster, the cost
lines of several rounds made here."""

import pytest

from bench import engines
from tests.support import bench_runs

pytestmark = pytest.mark.xdist_group('engines')
# Fresh pipeline processes on every engine; the Flink cluster of engines.flink (started when it is
# not running, and then stopped again), shared with the other Flink tests one at a time.
on_flink = pytest.mark.slow


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  return bench_runs.figures(engines.main, tmp_path_factory.mktemp('bench'), '--quick')


@on_flink
def test_every_engine_ran_every_size_of_its_kinds(figures):
  assert figures['failures'] == []
  assert figures['rounds'] == 1
  assert figures['sizes'] == {kind: list(n) for kind, n in engines.QUICK_SIZES.items()}
  assert figures['engines_by_kind'] == {'csv': list(engines.ENGINES)}  # --quick: the CSV only
  for kind, by_engine in figures['runs'].items():
    assert list(by_engine) == figures['engines_by_kind'][kind]
    for by_size in by_engine.values():
      assert sorted(int(n) for n in by_size) == figures['sizes'][kind]
      for runs in by_size.values():
        (run,) = runs
        components = run['components']
        assert set(components) == {'ExampleGen', 'StatisticsGen', engines.BOTH}
        assert components[engines.BOTH] == pytest.approx(
          components['ExampleGen'] + components['StatisticsGen']
        )
        assert 0 < components['ExampleGen'] and 0 < components['StatisticsGen']
        assert components[engines.BOTH] < run['wall_s']
        assert run['example_gen'] == ('CsvExampleGen' if kind == 'csv' else 'ImageExampleGen')


@on_flink
def test_statistics_ran_on_beam_on_the_engine_asked_for(figures):
  for kind, by_engine in figures['runs'].items():
    for engine, by_size in by_engine.items():
      runner = 'FlinkRunner' if engine.startswith('flink') else 'DirectRunner'
      for (run,) in by_size.values():
        assert run['computed_by'] == [runner], (kind, engine)


@on_flink
def test_flink_jobs_finished_at_the_parallelism_asked_for(figures):
  for kind, by_engine in figures['runs'].items():
    for engine in ('flink_p1', 'flink_p2'):
      for (run,) in by_engine[engine].values():
        jobs = run['flink_jobs']
        assert len(jobs) >= 2, (kind, engine)  # ExampleGen's job and StatisticsGen's
        assert {job['state'] for job in jobs} == {'FINISHED'}
        assert {job['parallelism'] for job in jobs} == {int(engine[-1])}
        assert len({job['name'] for job in jobs}) == 1  # the run's own name


@on_flink
def test_each_cost_line_goes_through_its_two_sizes(figures):
  for kind, by_engine in figures['cost'].items():
    small, full = figures['sizes'][kind]
    for engine, model in by_engine.items():
      assert set(model) == {'ExampleGen', 'StatisticsGen', engines.BOTH}
      for component, line in model.items():
        for n in (small, full):
          (run,) = figures['runs'][kind][engine][str(n)]
          seconds = run['components'][component]
          assert line['mean_s'][str(n)] == pytest.approx(seconds)
          assert line['fixed_s'] + line['marginal_us'] * n / 1e6 == pytest.approx(seconds)
        assert line['max_residual_s'] == pytest.approx(0, abs=1e-6)
        assert line['per_s'] == pytest.approx(full / line['mean_s'][str(full)])
        (one_round,) = line['rounds']  # one round: its own line is the line
        assert one_round['marginal_us'] == pytest.approx(line['marginal_us'])
        if line['marginal_us'] > 0:
          assert line['marginal_per_s'] == pytest.approx(1e6 / line['marginal_us'])


@on_flink
def test_ratios_follow_from_the_lines_and_targets_from_the_ratios(figures):
  cost = figures['cost']
  both = engines.BOTH
  assert set(figures['ratios']) == set(engines.RATIOS)
  for name, (kind, top, bottom, what) in engines.RATIOS.items():
    ratio = figures['ratios'][name]
    if kind not in cost:  # a kind --quick leaves out
      assert ratio is None, name
      continue
    a, b = cost[kind][top][both], cost[kind][bottom][both]
    full = str(figures['sizes'][kind][1])
    expected = {
      'marginal_speed': b['marginal_us'] / a['marginal_us'],
      'marginal_cost': a['marginal_us'] / b['marginal_us'],
      'speed_full': b['mean_s'][full] / a['mean_s'][full],
    }[what]
    assert ratio['value'] == pytest.approx(expected), name
    assert ratio['rounds'] == pytest.approx([expected, expected]), name  # one round
    assert ratio['of'] == [top, bottom] and ratio['what'] == what
  assert set(figures['targets']) == set(engines.TARGETS)
  for name, verdict in figures['targets'].items():
    sign, target = engines.TARGETS[name]
    value = figures['ratios'][name]['value']
    assert verdict['value'] == value and verdict['target'] == target
    kind, top, bottom, _ = engines.RATIOS[name]
    if all(cost[kind][engine][both]['marginal_us'] > 0 for engine in (top, bottom)):
      assert verdict['met'] == (value >= target if sign == '>=' else value <= target)
    else:  # tiny sizes: noise can give a marginal cost below zero, and no verdict
      assert verdict['met'] is None
  scaling = figures['targets']['flink_p2_over_p1_csv']
  ceiling = figures['ratios'][engines.CEILING]['value']
  assert scaling['ceiling'] == ceiling
  assert scaling['target_above_ceiling'] == (ceiling < scaling['target'])
  assert scaling['share_of_ceiling'] == pytest.approx(scaling['value'] / ceiling)


@on_flink
def test_the_report_prints_every_engine_and_target(figures, capsys):
  engines.report(figures)
  out = capsys.readouterr().out
  for engine in engines.ENGINES:
    assert engine in out
  for name in engines.TARGETS:
    assert f'target {name}' in out
  assert 'measured ceiling' in out


def _run(fixed: dict, marginal_us: dict, n: int, noise: float) -> dict:
  seconds = {c: fixed[c] + marginal_us[c] * n / 1e6 + noise for c in fixed}
  return {'components': dict(seconds, **{engines.BOTH: sum(seconds.values())})}


def test_cost_lines_from_rounds_made_here():
  """Without a cluster: three rounds at two sizes, one round failed at one size."""
  fixed = {'ExampleGen': 4.0, 'StatisticsGen': 6.0}
  marginal_us = {'ExampleGen': 30.0, 'StatisticsGen': 50.0}
  sizes, noises = (1_000, 10_000), {1_000: (0.2, -0.1, 0.0), 10_000: (-0.3, 0.1, 0.0)}
  runs = {n: [_run(fixed, marginal_us, n, noise) for noise in noises[n]] for n in sizes}
  runs[10_000][2] = {'failed': True, 'error': 'stopped'}
  model = engines.cost(runs, sizes)
  for component in ('ExampleGen', 'StatisticsGen', engines.BOTH):
    line = model[component]
    ok = {n: [r['components'][component] for r in runs[n] if not r.get('failed')] for n in sizes}
    means = {n: sum(s) / len(s) for n, s in ok.items()}
    assert line['mean_s'] == pytest.approx({str(n): means[n] for n in sizes})
    for n in sizes:  # two sizes: the least-squares line goes through each size's mean
      assert line['fixed_s'] + line['marginal_us'] * n / 1e6 == pytest.approx(means[n])
    assert line['per_s'] == pytest.approx(10_000 / means[10_000])
    for r in range(2):
      small, full = (runs[n][r]['components'][component] for n in sizes)
      assert line['rounds'][r]['marginal_us'] == pytest.approx((full - small) / 9_000 * 1e6)
    assert line['rounds'][2] is None
  runs[10_000] = [{'failed': True, 'error': 'stopped'}] * 3
  assert engines.cost(runs, sizes) == dict.fromkeys(('ExampleGen', 'StatisticsGen', engines.BOTH))
