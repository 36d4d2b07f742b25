"""What a Beam component costs on the containerised Flink cluster with each kind of sidecar worker
pool (issue 52: warm SDK workers for both clusters), in one invocation:

  .venv/bin/python -m bench.flink_containers [--json OUT]

A fresh containerised cluster (`python -m engines.flink_containers up`; the loopback cluster must
be down) with Beam's boot program as the sidecars' pools, then one with the project's warm pool
(engines/worker_pool.py), and on each the same CSV run (ROWS rows, 100 train steps; data and
pipeline root on the cluster's S3 server): its wall seconds, each component's seconds (ML
Metadata: registered to completed) and the Flink jobs' own seconds (Flink's REST API).
"""

import os
import tempfile
import time
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

from bench import engine_runs, warm_cluster  # noqa: E402

ROWS = 3000
POOLS = ('boot', 'warm')  # engines.flink_containers.SDK_WORKERS, Beam's first


def csv_run(state: dict, csv: str, name: str, local: str) -> dict:
  """The CSV uploaded and run on the cluster (pipeline root s3://runs/NAME, ML Metadata in
  `local`; warm_cluster.pipeline_run)."""
  from engines import flink_containers

  data = flink_containers.put(csv, log=lambda line: None)
  argv = [
    'run', '--data', data, '--output', f's3://runs/{name}', '--local-dir', local,
    '--label', 'label', '--train-steps', '100', '--min-accuracy', '0.3', *engine_runs.FLINK,
    '--min-eval-examples', '0', '--min-eval-class-examples', '0',
  ]  # fmt: skip
  env = dict(os.environ, **flink_containers.s3_env(state))
  return warm_cluster.pipeline_run(argv, local, warm_cluster.RUN_TIMEOUT_S, env=env)


def measure() -> dict:
  from bench import csv_example_gen
  from engines import flink_containers

  load_before, started = os.getloadavg(), time.monotonic()
  runs = {}
  with tempfile.TemporaryDirectory() as scratch:
    csv = csv_example_gen.write_csv(f'{scratch}/rows.csv', ROWS, learnable=True)
    for pool in POOLS:
      flink_containers.down(log=lambda line: None)
      up_started = time.monotonic()
      try:
        state = flink_containers.up(log=lambda line: None, sdk_workers=pool)
        up_s = time.monotonic() - up_started
        runs[pool] = dict(csv_run(state, csv, pool, f'{scratch}/{pool}'), up_s=up_s)
      finally:
        flink_containers.down(log=lambda line: None)
      report(pool, runs[pool])
  return {
    'cores': os.cpu_count(),
    'rows': ROWS,
    'runs': runs,
    'load_average': {'before': list(load_before), 'after': list(os.getloadavg())},
    'wall_s': time.monotonic() - started,
  }


def report(pool: str, run: dict) -> None:
  if run.get('failed'):
    print(f'{pool} pools: FAILED: {run["error"]}', flush=True)
    return
  beam = warm_cluster.beam_components(run)
  parts = ', '.join(f'{c} {s:.1f} s' for c, s in sorted(beam.items()))
  jobs = ', '.join(f'{j["name"]} {j["seconds"]:.1f} s' for j in run['flink_jobs'])
  print(f'{pool} pools: up {run["up_s"]:.0f} s; run {run["wall_s"]:.1f} s wall; {parts}')
  print(f'  Flink jobs (their own seconds): {jobs}', flush=True)


def main(argv=None) -> None:
  from bench import figures as figures_file

  args = figures_file.parser(__doc__).parse_args(argv)
  figures_file.save(measure(), args.json)


if __name__ == '__main__':
  main()
