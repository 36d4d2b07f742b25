"""What a Beam component costs on a warm Flink cluster (issue 52: the warm SDK worker pool), in one
invocation:

  .venv/bin/python -m bench.warm_cluster [--quick] [--rounds N] [--json OUT]

Each round, in fresh processes and output folders:
  - the default pipeline (`pipeline.py run`, no --data: the embedded digits) on the DirectRunner
    and on the local Flink cluster, one right after the other (their order reversed every other
    round): the wall seconds of each, their ratio, and each Beam component's seconds on both
    (ML Metadata: registered to completed). On 1,797 small images a component's seconds are
    almost all fixed cost: a Flink job's submission, its SDK workers' start and its deployment;
  - `pipeline.py schema` on a CSV of SIZES rows (bench.engine_runs.timed_run, Flink at
    parallelism 2): ExampleGen's and StatisticsGen's fixed seconds and marginal µs per row, the
    least-squares line over every round (bench.engines.cost), to compare with docs/engines.json's.
The cluster (`python -m engines.flink up`) is started when it is not running and stopped at the
end; one it finds running is left as it is. The worker pool is warm once the cluster is up (its
port opens after its imports); no untimed run first (2 rounds fit 10 minutes of the machine's
cluster lock), so round 1's first Flink job also meets JVMs that ran no job yet. A ratio's
spread is its lowest and highest round (bench.figures.ratio_rounds).
--quick: 1 round, the default run only (the test: figures complete and consistent, no speed
asserted; bench.engines' test covers the CSV's cost lines).
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

from bench import engine_runs, engines  # noqa: E402

ROOT = engine_runs.ROOT
RUNNERS = {'direct': (), 'flink': engine_runs.FLINK}  # the default run: each runner's own defaults
SIZES = (20_000, 200_000)
RUN_TIMEOUT_S = 600
# Targets (issue 52): a Beam component's seconds on the warm cluster, at most; the default run
# on Flink over the DirectRunner, at most.
COMPONENT_TARGET_S = 10.0
RATIO_TARGET = 2.5


def default_run(runner: str, output: str, timeout: float) -> dict:
  """`pipeline.py run --output OUTPUT` on `runner` (pipeline_run)."""
  argv = ['run', '--output', output, *RUNNERS[runner]]
  return pipeline_run(argv, output, timeout, flink_jobs=runner == 'flink')


def pipeline_run(
  argv: List[str], local: str, timeout: float, env: Optional[dict] = None, flink_jobs: bool = True
) -> dict:
  """`pipeline.py ARGV` in a fresh process whose ML Metadata and bench.log are in `local`: wall
  seconds, exit code, the Flink jobs' seconds (flink_jobs), the components' seconds (ML
  Metadata); on failure or after `timeout`, {'failed': True, 'error': a line}."""
  from bench import pipeline_scaling

  os.makedirs(local, exist_ok=True)
  log = os.path.join(local, 'bench.log')
  started, started_ms = time.monotonic(), time.time() * 1000
  with open(log, 'w') as out:
    try:
      code = subprocess.run(
        [sys.executable, 'pipeline.py', *argv], cwd=ROOT, env=env, stdout=out,
        stderr=subprocess.STDOUT, timeout=timeout, check=False,
      ).returncode  # fmt: skip
    except subprocess.TimeoutExpired:
      return {'failed': True, 'error': f'no end after {timeout:.0f} s (stopped)'}
  run = {'wall_s': time.monotonic() - started, 'exit_code': code}
  if flink_jobs:
    run['flink_jobs'] = flink_jobs_since(started_ms)
  if code not in (0, 3):  # 3: ran to the end, the model not blessed
    return dict(run, failed=True, error=engine_runs.error_line(local, log))
  return dict(run, components=pipeline_scaling.component_seconds(local))


def flink_jobs_since(started_ms: float) -> List[dict]:
  """The cluster's jobs started since `started_ms` (the run's: one run at a time): name, seconds
  (the job's own, in Flink) and tasks."""
  from engines import flink_rest

  jobs = flink_rest.rest('/jobs/overview', master=engine_runs.MASTER)['jobs']
  return [
    {'name': job['name'], 'seconds': job['duration'] / 1000, 'tasks': job['tasks']['total']}
    for job in sorted(jobs, key=lambda job: job['start-time'])
    if job['start-time'] >= started_ms
  ]


def beam_components(run: dict) -> Dict[str, float]:
  """The run's Beam components (ExampleGen, StatisticsGen, Evaluator, BulkInferrer) and their
  seconds."""
  beam = ('ExampleGen', 'StatisticsGen', 'Evaluator', 'BulkInferrer')
  return {c: s for c, s in run['components'].items() if c.endswith(beam)}


def measure(quick: bool = False, rounds: int = 0) -> dict:
  from bench import csv_example_gen
  from bench import figures as figures_file

  sizes = () if quick else SIZES
  rounds = rounds or (1 if quick else 2)
  load_before = os.getloadavg()
  started = time.monotonic()
  default: Dict[str, List[dict]] = {runner: [] for runner in RUNNERS}
  csv: Dict[int, List[dict]] = {n: [] for n in sizes}
  engine_runs.cluster_up()
  try:
    with tempfile.TemporaryDirectory() as scratch:
      data = {
        n: csv_example_gen.write_csv(f'{scratch}/rows{n}.csv', n, learnable=True) for n in sizes
      }
      for r in range(rounds):
        for runner in RUNNERS if r % 2 == 0 else list(RUNNERS)[::-1]:
          run = default_run(runner, f'{scratch}/default-{runner}-{r}', RUN_TIMEOUT_S)
          default[runner].append(run)
          _print(f'round {r + 1} default run, {runner}', run)
        for n in sizes:
          run = engine_runs.timed_run('flink_p2', 'csv', data[n], f'{scratch}/csv{n}-{r}')
          csv[n].append(run)
          _print(f'round {r + 1} CSV {n:,} rows, flink_p2', run)
  finally:
    engine_runs.cluster_down_if_ours()
  ok = [
    (d, f)
    for d, f in zip(default['direct'], default['flink'])
    if not (d.get('failed') or f.get('failed'))
  ]
  ratio = None
  if ok:
    direct_s = [d['wall_s'] for d, _ in ok]
    flink_s = [f['wall_s'] for _, f in ok]
    ratio = {
      'value': statistics.mean(flink_s) / statistics.mean(direct_s),
      'rounds': figures_file.ratio_rounds(flink_s, direct_s),
    }
  components = {
    runner: _component_means([run for run in runs if not run.get('failed')])
    for runner, runs in default.items()
  }
  csv_cost = engines.cost(csv, sizes) if sizes else None
  worst = max(components['flink'].values(), key=lambda c: c['mean_s'], default=None)
  figures = {
    'cores': os.cpu_count(),
    'rounds': rounds,
    'sizes': list(sizes),
    'default_runs': default,
    'default_components': components,
    'flink_over_direct': ratio,
    'csv_runs': {str(n): runs for n, runs in csv.items()},
    'csv_cost': csv_cost,
    'targets': {
      'flink_over_direct': {
        'target': RATIO_TARGET,
        'value': ratio and ratio['value'],
        'met': None if ratio is None else ratio['value'] <= RATIO_TARGET,
      },
      'component_s': {
        'target': COMPONENT_TARGET_S,
        'value': worst and worst['mean_s'],
        'met': None if worst is None else worst['mean_s'] <= COMPONENT_TARGET_S,
      },
    },
    'load_average': {'before': list(load_before), 'after': list(os.getloadavg())},
    'wall_s': time.monotonic() - started,
  }
  return figures


def _component_means(runs: List[dict]) -> Dict[str, dict]:
  """Each Beam component's mean seconds over the runs, with the lowest and highest."""
  by_component: Dict[str, List[float]] = {}
  for run in runs:
    for component, seconds in beam_components(run).items():
      by_component.setdefault(component, []).append(seconds)
  return {
    c: {'mean_s': statistics.mean(s), 'rounds': [min(s), max(s)]} for c, s in by_component.items()
  }


def _print(what: str, run: dict) -> None:
  if run.get('failed'):
    print(f'{what}: FAILED: {run["error"]}', flush=True)
    return
  parts = ', '.join(f'{c} {s:.1f} s' for c, s in sorted(run['components'].items()))
  print(f'{what}: {run["wall_s"]:.1f} s wall; {parts}', flush=True)


def report(figures: dict) -> None:
  print(
    f'{figures["cores"]} cores, {figures["rounds"]} round(s), {figures["wall_s"] / 60:.1f} min; '
    'seconds from ML Metadata, mean (lowest–highest round)'
  )
  print('  default run, Beam components:')
  for runner, components in figures['default_components'].items():
    for component, c in sorted(components.items()):
      print(
        f'    {runner:6s} {component:24s} {c["mean_s"]:6.1f} s ({c["rounds"][0]:.1f}–{c["rounds"][1]:.1f})'
      )
  ratio = figures['flink_over_direct']
  if ratio:
    walls = {
      r: statistics.mean(x['wall_s'] for x in runs if not x.get('failed'))
      for r, runs in figures['default_runs'].items()
    }
    print(
      f'  default run: Flink {walls["flink"]:.1f} s, DirectRunner {walls["direct"]:.1f} s: '
      f'{ratio["value"]:.2f}x ({ratio["rounds"][0]:.2f}–{ratio["rounds"][1]:.2f})'
    )
  for r, run in enumerate(figures['default_runs']['flink']):
    jobs = ', '.join(f'{j["name"]} {j["seconds"]:.1f} s' for j in run.get('flink_jobs', []))
    print(f'  round {r + 1}, Flink jobs (their own seconds in Flink): {jobs}')
  if not figures['csv_cost']:
    print('  CSV: not measured (--quick)')
  else:
    _report_csv(figures)
  for name, target in figures['targets'].items():
    met = {True: 'met', False: 'NOT met', None: 'not measured'}[target['met']]
    value = '–' if target['value'] is None else f'{target["value"]:.2f}'
    print(f'  target {name} <= {target["target"]}: {value}, {met}')
  load = figures['load_average']
  print(f'  load average (1 min) before {load["before"][0]:.1f}, after {load["after"][0]:.1f}')


def _report_csv(figures: dict) -> None:
  small, full = figures['sizes']
  print(f'  CSV, {small:,} and {full:,} rows on Flink (parallelism 2): fixed s, marginal µs/row')
  for component, line in figures['csv_cost'].items():
    if line is None:
      print(f'    {component:24s} (no line: a size failed every round)')
      continue
    print(f'    {component:24s} {line["fixed_s"]:8.1f} {line["marginal_us"]:8.1f}')


def main(argv=None) -> None:
  from bench import figures as figures_file

  figures_file.main_in_rounds(
    __doc__, 'the default run only, 1 round (tests)', measure, report, argv
  )


if __name__ == '__main__':
  main()
