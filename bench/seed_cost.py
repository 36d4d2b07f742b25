"""What `--seed` costs: the Trainer's seconds with and without it, side by side.

  .venv/bin/python -m bench.seed_cost [--rounds N] [--steps S] [--json OUT]

Each round, on the embedded digits (the default run's data and options), two `pipeline.py run
--no-cache` processes on one output folder: unseeded, then `--seed 0` (odd rounds) or the other
way round (even rounds), so that a slow stretch of the machine hits both alike. From each run:
the Trainer component's seconds (its `[i/n] Trainer done in S s` line), the fit's seconds
(training.json's phases) and the eval accuracy, which with the seed is the same every round.
"""

import argparse
import json
import shutil
import statistics
import tempfile

from bench.edit_loop import DEFAULT_STEPS, pipeline
from utils import atomic

SEEDED = ('--seed', '0')


def one_run(output: str, steps: int, seeded: bool) -> dict:
  record = pipeline(output, steps, '--no-cache', *(SEEDED if seeded else ()))
  return {
    'trainer_seconds': record['component_seconds'].get('Trainer'),
    'train_seconds': record.get('train_seconds'),
    'eval_accuracy': record.get('eval_accuracy'),
  }


def main() -> None:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument('--rounds', type=int, default=2, help='rounds (default: %(default)s)')
  parser.add_argument('--steps', type=int, default=DEFAULT_STEPS, help='--train-steps')
  parser.add_argument('--json', help='also write the figures here')
  args = parser.parse_args()
  scratch = tempfile.mkdtemp(prefix='seed-cost-')
  runs = {'unseeded': [], 'seeded': []}
  try:
    for number in range(args.rounds):
      order = (False, True) if number % 2 == 0 else (True, False)
      for seeded in order:
        run = one_run(f'{scratch}/out', args.steps, seeded)
        runs['seeded' if seeded else 'unseeded'].append(run)
        print(f'round {number + 1}: {"--seed 0" if seeded else "unseeded"}: {run}', flush=True)
  finally:
    shutil.rmtree(scratch, ignore_errors=True)
  print(f'{"":12}{"Trainer s":>28}{"fit s":>28}  eval accuracy')
  for name, found in runs.items():
    trainer = [r['trainer_seconds'] for r in found]
    fit = [r['train_seconds'] for r in found]
    accuracy = ', '.join(f'{r["eval_accuracy"]:.4f}' for r in found)
    print(
      f'{name:12}{", ".join(f"{s:.1f}" for s in trainer):>22} (med {statistics.median(trainer):.1f})'
      f'{", ".join(f"{s:.1f}" for s in fit):>22} (med {statistics.median(fit):.1f})  {accuracy}'
    )
  ratio = statistics.median(r['trainer_seconds'] for r in runs['seeded']) / statistics.median(
    r['trainer_seconds'] for r in runs['unseeded']
  )
  print(f'Trainer with --seed: {ratio:.2f}x its time without')
  if args.json:
    atomic.write(args.json, json.dumps({'runs': runs, 'trainer_ratio': ratio}, indent=2))


if __name__ == '__main__':
  main()
