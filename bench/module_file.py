"""A TFX user's module file, unmodified, through TFX's own pipeline and through `run
--module-file`, side by side in each round (issue 67's benchmark).

  .venv/bin/python -m bench.module_file [--rounds N] [--quick] [--json OUT]

The module is the tfx wheel's `taxi_utils_native_keras.py` (preprocessing_fn + run_fn), copied out
of site-packages as it is; the data the wheel's taxi CSV (15,002 rows; --quick: the first 3,000).
Each round runs, each in a fresh process and a fresh folder (nothing cached):
- TFX: `taxi_pipeline_native_keras._create_pipeline` with LocalDagRunner and the example's own
  Beam arguments (CsvExampleGen → StatisticsGen → SchemaGen → ExampleValidator → Transform →
  Trainer (1,000 steps, eval 150) → Evaluator → Pusher);
- ours: `pipeline.py run --data data.csv --label tips --module-file taxi_utils_native_keras.py`
  with the same train and eval steps.
Printed per contender: wall seconds (process start to exit, imports included) and the eval
accuracy each pipeline's Evaluator measured (TFMA's BinaryAccuracy for TFX's, the summary's eval
accuracy for ours: on each pipeline's own eval split), with the ratio ours / TFX's per round and
its spread. The issue's targets: wall time <= 0.5x TFX's; accuracy within the rounds' spread.
"""

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench import figures
from bench.edit_loop import pipeline
from bench.input_data import TAXI_CSV

TRAIN_STEPS, EVAL_STEPS = 1000, 150  # taxi_pipeline_native_keras's TrainArgs and EvalArgs
TFX_MIN_ACCURACY = 0.6  # its Evaluator's BinaryAccuracy threshold
QUICK_ROWS = 3000
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def module_copy(folder: str) -> str:
  """The wheel's taxi module file copied into `folder` as it is."""
  from tfx.examples import chicago_taxi_pipeline

  source = os.path.join(
    os.path.dirname(chicago_taxi_pipeline.__file__), 'taxi_utils_native_keras.py'
  )
  return shutil.copy(source, os.path.join(folder, 'taxi_utils_native_keras.py'))


def data_copy(folder: str, rows: int = 0) -> str:
  """A folder holding data.csv: the taxi CSV (its first `rows` trips; 0: all)."""
  data = os.path.join(folder, 'data')
  os.makedirs(data)
  with open(TAXI_CSV) as source, open(os.path.join(data, 'data.csv'), 'w') as out:
    for number, line in enumerate(source):
      if rows and number > rows:
        break
      out.write(line)
  return data


def tfx_child(data: str, module: str, out: str) -> None:
  """TFX's own pipeline on `data` (this process): prints {'eval_accuracy'} as its last line."""
  import tensorflow_model_analysis as tfma
  from tfx.examples.chicago_taxi_pipeline import taxi_pipeline_native_keras as taxi
  from tfx.orchestration.local.local_dag_runner import LocalDagRunner

  root = os.path.join(out, 'pipeline_root')
  LocalDagRunner().run(
    taxi._create_pipeline(  # noqa: SLF001 (the example's own builder: the peer raced)
      pipeline_name='taxi_native_keras',
      pipeline_root=root,
      data_root=data,
      module_file=module,
      serving_model_dir=os.path.join(out, 'serving'),
      metadata_path=os.path.join(out, 'metadata.db'),
      beam_pipeline_args=taxi._beam_pipeline_args,  # noqa: SLF001
    )
  )
  accuracy = None
  for path in glob.glob(os.path.join(root, 'Evaluator', 'evaluation', '*')):
    for metrics in tfma.load_metrics(path):
      if metrics.slice_key.single_slice_keys:
        continue
      for key_and_value in metrics.metric_keys_and_values:
        if key_and_value.key.name == 'binary_accuracy' and not key_and_value.key.is_diff:
          accuracy = key_and_value.value.double_value.value
  print(json.dumps({'eval_accuracy': accuracy}))


def tfx_side(data: str, module: str, out: str) -> dict:
  argv = [sys.executable, '-m', 'bench.module_file', '--tfx-child', data, module, out]
  started = time.monotonic()
  done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
  seconds = time.monotonic() - started
  if done.returncode != 0:
    raise RuntimeError(f'TFX pipeline exited {done.returncode}: {done.stderr[-2000:]}')
  return {'seconds': seconds, **json.loads(done.stdout.strip().splitlines()[-1])}


def our_side(data: str, module: str, out: str) -> dict:
  extra = ['--data', os.path.join(data, 'data.csv'), '--label', 'tips', '--module-file', module]
  steps = ['--eval-steps', str(EVAL_STEPS)]
  # the example's own Evaluator blesses at BinaryAccuracy 0.6: the same bar, so both push
  record = pipeline(out, TRAIN_STEPS, *extra, *steps, '--min-accuracy', str(TFX_MIN_ACCURACY))
  return {'seconds': record['seconds'], 'eval_accuracy': record.get('eval_accuracy')}


def measure(quick: bool, rounds: int) -> dict:
  rounds = rounds or (1 if quick else 2)
  found = {'tfx': [], 'ours': []}
  with tempfile.TemporaryDirectory() as scratch:
    module = module_copy(scratch)
    data = data_copy(scratch, QUICK_ROWS if quick else 0)
    for number in range(rounds):
      for side, run in (('tfx', tfx_side), ('ours', our_side)):
        out = os.path.join(scratch, f'{side}-{number}')
        found[side].append(run(data, module, out))
        shutil.rmtree(out, ignore_errors=True)
  seconds = {side: [r['seconds'] for r in runs] for side, runs in found.items()}
  return {
    'rounds': rounds,
    'rows': QUICK_ROWS if quick else 15002,
    'runs': found,
    'wall_ratio': [a / b for a, b in zip(seconds['ours'], seconds['tfx'])],
    'wall_ratio_spread': figures.ratio_rounds(seconds['ours'], seconds['tfx']),
  }


def report(found: dict) -> None:
  print(f'taxi module file, {found["rows"]} rows, {found["rounds"]} round(s):')
  for side in ('tfx', 'ours'):
    runs = found['runs'][side]
    accuracy = [r['eval_accuracy'] for r in runs if r['eval_accuracy'] is not None]
    shown = ', '.join(f'{a:.4f}' for a in accuracy) or '-'
    print(
      f'  {side:5} wall {statistics.median(r["seconds"] for r in runs):6.1f} s (median), '
      f'eval accuracy {shown}'
    )
  low, high = found['wall_ratio_spread']
  print(
    f'  ours / TFX wall time: {statistics.median(found["wall_ratio"]):.2f}x '
    f'(rounds {low:.2f}-{high:.2f}; target <= 0.5x)'
  )


def main(argv=None) -> None:
  argv = sys.argv[1:] if argv is None else argv
  if argv[:1] == ['--tfx-child']:
    tfx_child(*argv[1:4])
    return
  figures.main_in_rounds(__doc__, f'the first {QUICK_ROWS} rows, one round', measure, report, argv)


if __name__ == '__main__':
  main()
