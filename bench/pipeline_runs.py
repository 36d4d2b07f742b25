"""Wall time of the default job: a cold run (fresh output folder) and a cached re-run (all
components from the cache).

  .venv/bin/python -m bench.pipeline_runs [--repeats N] [--json OUT]

Each run is a separate `pipeline.py run` process (imports included, as a user sees it),
cold and cached alternated so that machine noise hits both alike (between them an untimed run:
the first model is serving by then, and the Evaluator compares the model with it once), plus a
cold run with Beam's worker processes (`--beam-mode multi_processing`, what `auto` picks from
2,000 images on) to show what they cost on this small data, where `auto` keeps Beam in one
process; prints medians and ratios measured in this one invocation.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench import figures as figures_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
  cold, cached, workers = [], [], []
  for i in range(args.repeats):
    with tempfile.TemporaryDirectory() as output:
      cold.append(_timed_run(output))
      _timed_run(output)
      cached.append(_timed_run(output))
    with tempfile.TemporaryDirectory() as output:
      workers.append(_timed_run(output, '--beam-mode', 'multi_processing'))
    print(
      f'round {i + 1}/{args.repeats}: cold {cold[-1]:.1f} s, cached {cached[-1]:.1f} s, '
      f'cold with worker processes {workers[-1]:.1f} s',
      flush=True,
    )
  figures = {
    'cold_s': statistics.median(cold),
    'cached_s': statistics.median(cached),
    'cold_worker_processes_s': statistics.median(workers),
    'cached_over_cold': statistics.median(cached) / statistics.median(cold),
    'worker_processes_over_cold': statistics.median(workers) / statistics.median(cold),
    'repeats': args.repeats,
    'cores': os.cpu_count(),
  }
  print(
    f'median cold {figures["cold_s"]:.1f} s, cached {figures["cached_s"]:.1f} s '
    f'(cached/cold = {figures["cached_over_cold"]:.2f}), cold with Beam worker processes '
    f'{figures["cold_worker_processes_s"]:.1f} s ({figures["worker_processes_over_cold"]:.2f}) on '
    f'{figures["cores"]} cores'
  )
  figures_file.save(figures, args.json)


if __name__ == '__main__':
  main()
