"""ExampleGen and StatisticsGen on each Beam engine: the DirectRunner in one process and with
worker processes, and the local Flink cluster at parallelism 1 and 2, on the 200k-row CSV and on
10,000 images, in one invocation (issue 42).

  .venv/bin/python -m bench.engines [--quick] [--rounds N] [--json OUT]

Each run is `pipeline.py schema` (ExampleGen, StatisticsGen, SchemaGen: the pipeline's own
components and Beam arguments, nothing else) in a fresh process and a fresh output folder. A
component's seconds are its execution's in ML Metadata (registered to completed, as the
orchestrator sees it: a Flink job's submission, its SDK workers' start-up and the job itself);
SchemaGen (no Beam, ~0.05 s) is left out. Engines (ENGINES):
  direct_in_memory  --beam-mode in_memory: Beam in the run's process;
  direct_workers2   --beam-mode multi_processing --beam-workers 2: a worker process per core;
  direct_workers1   --beam-mode multi_processing --beam-workers 1, on the CSV only: with
                    direct_workers2 on the same work, what a second core gives Beam's Python work
                    on this machine (the ceiling of any engine's 2-over-1 ratio here);
  flink_p1/p2       --beam-runner FlinkRunner --flink-master localhost:8081 --beam-parallelism
                    1 / 2 (`python -m engines.flink up`'s cluster: 2 TaskManagers x 2 slots, its
                    job server and SDK worker pool).
StatisticsGen runs TFX's Beam pipeline on every engine (an explicit --beam-mode turns off its
in-process path); each statistics artifact's `computed_by` property, where the code sets it, is
in the figures. Data: CSV SIZES['csv'] rows (10 floats + a learnable label, ~97 bytes a row,
bench.csv_example_gen.write_csv), images SIZES['images'] 8x8 digit PNGs
(bench.pipeline_scaling.write_images). Per engine and kind, the fixed seconds and the marginal µs
per row / image are the least-squares line through (size, seconds) over every round's runs at
the two sizes (with two sizes: through each size's mean); throughput is the full size over its
mean seconds (end to end) and 1e6 / marginal µs (marginal). Each round runs every engine at every
size, the engines' order reversed every other round; a ratio is also taken round by round (each
round's own two-point lines), its lowest and highest the spread (bench.figures.ratio_rounds).
The cluster is started when it is not running (and then stopped at the end); one it finds running
is left as it is. Each Flink run's jobs carry one name (--job_name), so that their state and
parallelism are read back from the cluster's REST API among other users' jobs. A Flink run whose
TaskManager logs that it still waits for an SDK worker to start (it would wait for ever) is
stopped, its jobs cancelled, and run once more; such attempts are listed ('retried').
On 2 cores each Flink run costs ~1-2 minutes (two jobs, each starting its SDK workers), so the
default invocation (36 runs) takes ~35-40 minutes; --rounds 1 about half.
--quick: 1 round at tiny sizes, the CSV only (the test: figures complete and consistent, no speed
asserted; the images were left out of it to keep CI within its time, issue 50).
"""

import os
import statistics
import tempfile
import time
from typing import Dict, List, Optional, Tuple
import warnings

from bench.engine_runs import (
  BOTH,
  COMPONENTS,
  ENGINES,
  cluster_down_if_ours,
  cluster_started_here,
  cluster_up,
  timed_run,
)

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

CEILING_ONLY = {'direct_workers1': ('csv',)}  # an engine run on these kinds only
KINDS = ('csv', 'images')
SIZES = {'csv': (20_000, 200_000), 'images': (1_000, 10_000)}
QUICK_SIZES = {'csv': (300, 1_200)}  # the test's: the CSV alone (every engine, both sizes)
RUN_TIMEOUT_S = 600  # a run not ended by then is stopped and counted failed (--quick: a half)
UNIT = {'csv': 'row', 'images': 'image'}
# The targets: Flink's parallelism 2 over its parallelism 1 (marginal rows/s, the CSV), at least;
# its marginal µs per row over the DirectRunner's worker processes', at most.
TARGETS = {
  'flink_p2_over_p1_csv': ('>=', 1.6),
  'flink_p2_over_direct_workers2_marginal_csv': ('<=', 2.0),
}
CEILING = 'direct_workers2_over_workers1_csv'  # the ceiling of flink_p2_over_p1_csv here


def engines_for(kind: str) -> List[str]:
  return [e for e in ENGINES if kind in CEILING_ONLY.get(e, KINDS)]


def two_point(small: Tuple[int, float], full: Tuple[int, float]) -> dict:
  """The line through two (size, seconds) points: fixed_s and marginal_us."""
  slope = (full[1] - small[1]) / (full[0] - small[0])
  return {'fixed_s': small[1] - slope * small[0], 'marginal_us': slope * 1e6}


def cost(runs: Dict[int, List[dict]], sizes: Tuple[int, int]) -> dict:
  """Per component (and both): the least-squares line over every successful run, the mean
  seconds at each size, the throughputs, and each round's own two-point line."""
  from bench import pipeline_scaling

  small, full = sizes
  model = {}
  for component in (*COMPONENTS, BOTH):
    points = [
      (n, run['components'][component]) for n in sizes for run in runs[n] if not run.get('failed')
    ]
    if {n for n, _ in points} != set(sizes):
      model[component] = None  # a size with no successful run: no line
      continue
    line = pipeline_scaling.fit(points)
    means = {n: statistics.mean(s for m, s in points if m == n) for n in sizes}
    rounds = [
      two_point(
        (small, runs[small][r]['components'][component]),
        (full, runs[full][r]['components'][component]),
      )
      if not (runs[small][r].get('failed') or runs[full][r].get('failed'))
      else None
      for r in range(len(runs[full]))
    ]
    model[component] = dict(
      line,
      mean_s={str(n): s for n, s in means.items()},
      per_s=full / means[full],  # end to end, the full size
      marginal_per_s=1e6 / line['marginal_us'] if line['marginal_us'] > 0 else None,
      rounds=rounds,
    )
  return model


def _ratio(figures: dict, kind: str, top: str, bottom: str, what: str) -> Optional[dict]:
  """A ratio of two engines' BOTH lines on `kind`, overall and round by round. what:
  'marginal_speed' (bottom's marginal µs over top's: how many times faster top's marginal
  throughput is), 'speed_full' (bottom's mean seconds at the full size over top's) or
  'marginal_cost' (top's marginal µs over bottom's)."""
  from bench import figures as figures_file

  a, b = figures['cost'].get(kind, {}).get(top), figures['cost'].get(kind, {}).get(bottom)
  if not a or not b or not a[BOTH] or not b[BOTH]:
    return None
  a, b = a[BOTH], b[BOTH]
  full = str(figures['sizes'][kind][1])
  pairs = [(x, y) for x, y in zip(a['rounds'], b['rounds']) if x and y]
  if what == 'marginal_speed':
    value = b['marginal_us'] / a['marginal_us']
    terms = ([y['marginal_us'] for x, y in pairs], [x['marginal_us'] for x, y in pairs])
  elif what == 'marginal_cost':
    value = a['marginal_us'] / b['marginal_us']
    terms = ([x['marginal_us'] for x, y in pairs], [y['marginal_us'] for x, y in pairs])
  else:
    value = b['mean_s'][full] / a['mean_s'][full]
    runs_a = figures['runs'][kind][top][full]
    runs_b = figures['runs'][kind][bottom][full]
    ok = [(x, y) for x, y in zip(runs_a, runs_b) if not x.get('failed') and not y.get('failed')]
    terms = ([y['components'][BOTH] for x, y in ok], [x['components'][BOTH] for x, y in ok])
  return {
    'value': value,
    'rounds': figures_file.ratio_rounds(*terms) if terms[0] else None,
    'of': [top, bottom],
    'what': what,
  }


RATIOS = {  # name: (kind, top, bottom, what)
  'flink_p2_over_p1_csv': ('csv', 'flink_p2', 'flink_p1', 'marginal_speed'),
  'flink_p2_over_p1_csv_full': ('csv', 'flink_p2', 'flink_p1', 'speed_full'),
  CEILING: ('csv', 'direct_workers2', 'direct_workers1', 'marginal_speed'),
  'direct_workers2_over_workers1_csv_full': (
    'csv',
    'direct_workers2',
    'direct_workers1',
    'speed_full',
  ),
  'flink_p2_over_direct_workers2_marginal_csv': (
    'csv',
    'flink_p2',
    'direct_workers2',
    'marginal_cost',
  ),
  'flink_p2_over_p1_images': ('images', 'flink_p2', 'flink_p1', 'marginal_speed'),
  'flink_p2_over_direct_workers2_marginal_images': (
    'images',
    'flink_p2',
    'direct_workers2',
    'marginal_cost',
  ),
  'flink_p1_over_direct_in_memory_marginal_csv': (
    'csv',
    'flink_p1',
    'direct_in_memory',
    'marginal_cost',
  ),
}


def _positive(figures: dict, name: str) -> bool:
  """Both engines of a ratio have a marginal cost above zero (at tiny sizes noise can make it
  negative, and a ratio of such lines means nothing)."""
  kind, top, bottom, _ = RATIOS[name]
  if kind not in figures['cost']:
    return False
  lines = [figures['cost'][kind][engine][BOTH] for engine in (top, bottom)]
  return all(line and line['marginal_us'] > 0 for line in lines)


def verdicts(figures: dict) -> dict:
  """Each target: its figure, met or not (None: not measurable), and with the scaling target,
  the measured ceiling (and the figure as a share of it)."""
  ratios = figures['ratios']
  out = {}
  for name, (sign, target) in TARGETS.items():
    ratio = ratios.get(name)
    value = ratio['value'] if ratio else None
    measurable = value is not None and _positive(figures, name)
    met = (value >= target if sign == '>=' else value <= target) if measurable else None
    verdict = {'target': target, 'sign': sign, 'value': value, 'met': met}
    if name == 'flink_p2_over_p1_csv' and ratios.get(CEILING):
      ceiling = ratios[CEILING]['value']
      verdict['ceiling'] = ceiling
      verdict['ceiling_measurable'] = _positive(figures, CEILING)
      verdict['target_above_ceiling'] = ceiling < target
      verdict['share_of_ceiling'] = None if value is None else value / ceiling
    out[name] = verdict
  return out


def _each_run(runs: dict):
  """(kind, engine, size, round, run) of every run in measure's {kind: {engine: {size: [run]}}}."""
  for kind, by_engine in runs.items():
    for engine, by_size in by_engine.items():
      for size, rounds in by_size.items():
        for index, run in enumerate(rounds):
          yield kind, engine, size, index, run


def measure(quick: bool = False, rounds: int = 0) -> dict:
  """Every figure of one invocation."""
  from bench import csv_example_gen, pipeline_scaling

  sizes = QUICK_SIZES if quick else SIZES
  kinds = [kind for kind in KINDS if kind in sizes]
  rounds = rounds or (1 if quick else 2)
  timeout = RUN_TIMEOUT_S / 2 if quick else RUN_TIMEOUT_S
  load_before = os.getloadavg()
  started = time.monotonic()
  runs: Dict[str, Dict[str, Dict[int, List[dict]]]] = {
    kind: {engine: {n: [] for n in sizes[kind]} for engine in engines_for(kind)} for kind in kinds
  }
  cluster_up()
  try:
    with tempfile.TemporaryDirectory() as scratch:
      data = {}
      for kind in kinds:
        for n in sizes[kind]:
          path = os.path.join(scratch, f'{kind}{n}')
          data[(kind, n)] = (
            csv_example_gen.write_csv(path + '.csv', n, learnable=True)
            if kind == 'csv'
            else pipeline_scaling.write_images(path, n)
          )
      # Untimed: the imports' files into the page cache and, on a cluster started here, its JVMs
      # past their first job (--quick: none).
      warm = ['direct_in_memory'] + (['flink_p2'] if cluster_started_here() else [])
      for engine in [] if quick else warm:
        timed_run(
          engine, 'csv', data[('csv', sizes['csv'][0])], os.path.join(scratch, f'warm-{engine}')
        )
      plan = [(kind, n) for kind in kinds for n in sizes[kind]]
      total = rounds * sum(len(engines_for(kind)) for kind, _ in plan)
      done = 0
      for r in range(rounds):
        for kind, n in plan:
          order = engines_for(kind)
          for engine in order if r % 2 == 0 else order[::-1]:
            out = os.path.join(scratch, f'{kind}{n}-{engine}-{r}')
            run = timed_run(engine, kind, data[(kind, n)], out, timeout)
            run['load_1min'] = os.getloadavg()[0]  # the machine is shared: how busy it was
            runs[kind][engine][n].append(run)
            done += 1
            took = (
              f'FAILED: {run["error"]}'
              if run.get('failed')
              else f'ExampleGen {run["components"]["ExampleGen"]:.1f} s, StatisticsGen '
              f'{run["components"]["StatisticsGen"]:.1f} s (by {",".join(run["computed_by"])})'
            )
            print(
              f'[{done}/{total}] round {r + 1} {kind} {n:,} {engine}: {took}, '
              f'{run["wall_s"]:.1f} s wall',
              flush=True,
            )
  finally:
    cluster_down_if_ours()
  figures = {
    'cores': os.cpu_count(),
    'rounds': rounds,
    'sizes': {kind: list(sizes[kind]) for kind in kinds},
    'engines': {engine: list(args) for engine, args in ENGINES.items()},
    'engines_by_kind': {kind: engines_for(kind) for kind in kinds},
    'runs': {
      kind: {e: {str(n): rs for n, rs in by_size.items()} for e, by_size in by_engine.items()}
      for kind, by_engine in runs.items()
    },
    'cost': {
      kind: {e: cost(by_size, sizes[kind]) for e, by_size in by_engine.items()}
      for kind, by_engine in runs.items()
    },
    'failures': [
      {'kind': kind, 'engine': e, 'size': n, 'round': i, 'error': run['error']}
      for kind, e, n, i, run in _each_run(runs)
      if run.get('failed')
    ],
    # Attempts stopped and run again (a TaskManager waiting for an SDK worker that never came).
    'retried': [
      {'kind': kind, 'engine': e, 'size': n, 'round': i, 'error': attempt['error']}
      for kind, e, n, i, run in _each_run(runs)
      for attempt in run.get('failed_attempts', [])
    ],
    'load_average': {'before': list(load_before), 'after': list(os.getloadavg())},
    'wall_s': time.monotonic() - started,
  }
  figures['ratios'] = {name: _ratio(figures, *spec) for name, spec in RATIOS.items()}
  figures['targets'] = verdicts(figures)
  return figures


def _num(value, spec: str) -> str:
  return '–' if value is None else format(value, spec)


def report(figures: dict) -> None:
  """The table per engine, the ratios with their spread, the targets."""
  print(
    f'{figures["cores"]} cores, {figures["rounds"]} round(s), {figures["wall_s"] / 60:.1f} min; '
    f'ExampleGen + StatisticsGen seconds from ML Metadata; fixed s + marginal µs per row / image '
    '(least squares over both sizes, every round)'
  )
  for kind in figures['sizes']:
    small, full = figures['sizes'][kind]
    unit = UNIT[kind]
    print(f'  {kind} ({small:,} and {full:,} {unit}s):')
    print(
      f'    {"engine":17s} {"component":24s} {"fixed s":>8s} {"µs/" + unit:>10s} '
      f'{unit + "s/s @" + format(full, ","):>17s} {"marginal " + unit + "s/s":>18s}  statistics by'
    )
    for engine, model in figures['cost'][kind].items():
      by = sorted(
        {
          b
          for rs in figures['runs'][kind][engine].values()
          for r in rs
          for b in r.get('computed_by', [])
        }
      )
      for component in (*COMPONENTS, BOTH):
        line = model[component]
        if line is None:
          print(f'    {engine:17s} {component:24s} (no line: a size failed every round)')
          continue
        print(
          f'    {engine:17s} {component:24s} {line["fixed_s"]:8.1f} {line["marginal_us"]:10.1f} '
          f'{line["per_s"]:17,.0f} {_num(line["marginal_per_s"], ",.0f"):>18s}'
          + (f'  {", ".join(by) or "(not recorded)"}' if component == BOTH else '')
        )
  print('  ratios (ExampleGen + StatisticsGen; rounds: lowest–highest of the per-round ratio):')
  for name, ratio in figures['ratios'].items():
    if ratio is None:
      print(f'    {name}: – (an engine failed)')
      continue
    spread = ratio['rounds']
    print(
      f'    {name} = {ratio["value"]:.2f}'
      + (f' (rounds {spread[0]:.2f}–{spread[1]:.2f})' if spread else '')
    )
  for name, verdict in figures['targets'].items():
    value = verdict['value']
    met = {True: 'met', False: 'NOT met', None: 'not measurable (a marginal <= 0 or missing)'}[
      verdict['met']
    ]
    line = f'  target {name} {verdict["sign"]} {verdict["target"]}: {_num(value, ".2f")}, {met}'
    if 'ceiling' in verdict:
      line += (
        f'; measured ceiling (DirectRunner 2 over 1 worker processes, same work) '
        f'{verdict["ceiling"]:.2f}'
        + (
          f': the target is above it; Flink reaches {_num(verdict["share_of_ceiling"], ".0%")} '
          'of it'
          if verdict['target_above_ceiling']
          else ''
        )
      )
    print(line)
  for label, key in (('FAILED', 'failures'), ('stopped and run again', 'retried')):
    for failure in figures[key]:
      print(
        f'  {label}: {failure["engine"]} {failure["kind"]} {failure["size"]:,} round '
        f'{failure["round"] + 1}: {failure["error"]}'
      )
  load = figures['load_average']
  print(
    f'  load average (1 min) before {load["before"][0]:.1f}, after {load["after"][0]:.1f} '
    f'on {figures["cores"]} cores'
  )


def main(argv=None) -> None:
  from bench import figures as figures_file

  figures_file.main_in_rounds(__doc__, 'tiny sizes, 1 round (tests)', measure, report, argv)


if __name__ == '__main__':
  main()
