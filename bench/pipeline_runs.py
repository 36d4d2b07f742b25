"""Wall time of the default job: a cold run (fresh output folder) and a cached re-run (all
components from the cache).

  .venv/bin/python -m bench.pipeline_runs [--repeats N] [--json OUT]

Each run is a separate `pipeline.py run` process (imports included, as a user sees it),
cold and cached alternated so that machine noise hits both alike (between them an untimed run:
the first model is serving by then, and the Evaluator compares the model with it once), plus a
cold run with Beam's worker processes (`--beam-mode multi_processing`, what `auto` picks from
2,000 images on) to show what they cost on this small data, where `auto` keeps Beam in one
process; and a cold run on 1,000 rows of a CSV (the Chicago taxi data in the tfx wheel, label
`tips`), with `auto` (Beam in one process below 64 MB of files) and with worker processes (what
`auto` picked for every CSV before); prints medians and ratios measured in this one invocation.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench import figures as figures_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


SMALL_CSV_ROWS = 1000
TAXI_CSV = ('examples', 'chicago_taxi_pipeline', 'data', 'simple', 'data.csv')


def _small_csv(folder: str) -> str:
  """The first SMALL_CSV_ROWS rows of the taxi CSV in the tfx wheel, as folder/trips.csv."""
  import tfx

  path = os.path.join(folder, 'trips.csv')
  with open(os.path.join(os.path.dirname(tfx.__file__), *TAXI_CSV)) as src, open(path, 'w') as out:
    out.writelines(line for _, line in zip(range(SMALL_CSV_ROWS + 1), src))
  return path


def _timed_run(output: str, *extra: str) -> float:
  started = time.monotonic()
  subprocess.run(
    [sys.executable, 'pipeline.py', 'run', '--output', output, *extra],
    cwd=ROOT,
    check=True,
    stdout=subprocess.DEVNULL,
  )
  return time.monotonic() - started


def main() -> None:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument('--repeats', type=int, default=2, help='cold/cached pairs (default: 2)')
  parser.add_argument('--json', help='also write the figures here')
  args = parser.parse_args()
  cold, cached, workers, csv_auto, csv_workers = [], [], [], [], []
  csv_folder = tempfile.mkdtemp()
  csv_run = ('--data', _small_csv(csv_folder), '--label', 'tips', '--label-default', '0')
  for i in range(args.repeats):
    with tempfile.TemporaryDirectory() as output:
      cold.append(_timed_run(output))
      _timed_run(output)
      cached.append(_timed_run(output))
    with tempfile.TemporaryDirectory() as output:
      workers.append(_timed_run(output, '--beam-mode', 'multi_processing'))
    with tempfile.TemporaryDirectory() as output:
      csv_auto.append(_timed_run(output, *csv_run))
    with tempfile.TemporaryDirectory() as output:
      csv_workers.append(_timed_run(output, *csv_run, '--beam-mode', 'multi_processing'))
    print(
      f'round {i + 1}/{args.repeats}: cold {cold[-1]:.1f} s, cached {cached[-1]:.1f} s, '
      f'cold with worker processes {workers[-1]:.1f} s; {SMALL_CSV_ROWS:,}-row CSV '
      f'{csv_auto[-1]:.1f} s, with worker processes {csv_workers[-1]:.1f} s',
      flush=True,
    )
  shutil.rmtree(csv_folder)
  figures = {
    'cold_s': statistics.median(cold),
    'cached_s': statistics.median(cached),
    'cold_worker_processes_s': statistics.median(workers),
    'cached_over_cold': statistics.median(cached) / statistics.median(cold),
    'worker_processes_over_cold': statistics.median(workers) / statistics.median(cold),
    'small_csv_s': statistics.median(csv_auto),
    'small_csv_worker_processes_s': statistics.median(csv_workers),
    'small_csv_over_digits': statistics.median(csv_auto) / statistics.median(cold),
    'ratio_rounds': {  # [lowest, highest] of each ratio taken round by round
      'cached_over_cold': figures_file.ratio_rounds(cached, cold),
      'worker_processes_over_cold': figures_file.ratio_rounds(workers, cold),
      'small_csv_over_digits': figures_file.ratio_rounds(csv_auto, cold),
    },
    'repeats': args.repeats,
    'cores': os.cpu_count(),
  }
  print(
    f'median cold {figures["cold_s"]:.1f} s, cached {figures["cached_s"]:.1f} s '
    f'(cached/cold = {figures["cached_over_cold"]:.2f}), cold with Beam worker processes '
    f'{figures["cold_worker_processes_s"]:.1f} s ({figures["worker_processes_over_cold"]:.2f}) on '
    f'{figures["cores"]} cores; {SMALL_CSV_ROWS:,}-row CSV {figures["small_csv_s"]:.1f} s '
    f'({figures["small_csv_over_digits"]:.2f} x the digits), with worker processes '
    f'{figures["small_csv_worker_processes_s"]:.1f} s; ratios round by round: '
    + ', '.join(f'{k} {lo:.2f}–{hi:.2f}' for k, (lo, hi) in figures['ratio_rounds'].items())
  )
  figures_file.save(figures, args.json)


if __name__ == '__main__':
  main()
