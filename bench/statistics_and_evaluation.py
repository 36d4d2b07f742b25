"""StatisticsGen and the Evaluator on large data: TFX's stock executors, the project's and a
ceiling, on the same artifacts, in one invocation.

  .venv/bin/python -m bench.statistics_and_evaluation [--quick] [--rounds N] [--json OUT]

One `pipeline.py run` on ROWS rows of bench.csv_example_gen's learnable CSV makes the Examples
and the model. Each measurement is then a fresh process that imports everything before its
clock starts, ROUNDS rounds of every measurement in turn (the spread is the rounds' min to max):
  statistics  stock: TFX's StatisticsGen executor, Beam in one process (as `--beam-mode auto`
              runs it at this size); project: components/statistics_gen's executor (in process);
              ceiling: TFDV's generators alone on each split's decoded Arrow record batch
              (reading and decoding not counted).
  evaluation  stock: TFX's Evaluator with TFMA's own metrics for the same figures (Keras'
              SparseCategoricalAccuracy, TFMA's Recall and Precision binarized per class, the
              confusion plot, TFMA's ExampleCount); project: the BlessingEvaluator (those
              derived from the confusion matrix); ceiling: serving_default and transform_features over the eval split in
              batches of CEILING_BATCH, the same figures in NumPy (model load and reading counted).
  large       statistics on the same shards copied LARGE_COPIES times (1M rows): TFX's with
              Beam worker processes (what `auto` runs at that size) against the in-process path,
              each with its peak memory: the evidence for STATISTICS_IN_PROCESS_BELOW_BYTES.
--quick: a small CSV, one round, one copy (tests: the JSON's shape).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import List
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS, QUICK_ROWS = 200_000, 2_000
ROUNDS = 2
TRAIN_STEPS, QUICK_TRAIN_STEPS = 200, 10
LARGE_COPIES = 5  # 200k rows' shards five times: 1M rows, ~185 MB
CEILING_BATCH = 8192
MIN_ACCURACY = 0.5  # the bench's blessing threshold (any learnt model passes)
STATISTICS = ('statistics_stock', 'statistics_project', 'statistics_ceiling')
EVALUATION = ('evaluation_stock', 'evaluation_project', 'evaluation_ceiling')
LARGE = ('large_statistics_stock', 'large_statistics_project')
TARGET_SPEEDUP = 2.0


def _artifact(cls, uri: str, split_names: str = ''):
  artifact = cls()
  artifact.uri = uri
  if split_names:
    artifact.split_names = split_names
  return artifact


def _context(output: str, mode: str):
  from tfx.dsl.components.base.base_beam_executor import BaseBeamExecutor

  args = [f'--direct_running_mode={mode}', '--sdk_container_image=local-environment']
  return BaseBeamExecutor.Context(beam_pipeline_args=args, tmp_dir=output + '.tmp', unique_id='1')


def _split_files(examples: str, split: str) -> List[str]:
  return sorted(glob.glob(os.path.join(examples, f'Split-{split}', '*')))


def statistics_job(kind: str, examples_uri: str, output: str):
  """A callable running one statistics measurement (its imports done)."""
  import tensorflow_data_validation as tfdv
  from tensorflow_data_validation.statistics import stats_impl
  from tfx.components.statistics_gen import executor as stock
  from tfx.types import standard_artifacts
  from tfx_bsl.coders import example_coder

  from components.statistics_gen import executor as project
  from components.statistics_gen import in_process

  if kind.endswith('ceiling'):
    batches = [
      example_coder.ExamplesToRecordBatchDecoder().DecodeBatch(
        in_process.records(_split_files(examples_uri, split))
      )
      for split in ('train', 'eval')
    ]
    return lambda: [
      stats_impl.generate_statistics_in_memory(b, tfdv.StatsOptions()) for b in batches
    ]
  examples = _artifact(standard_artifacts.Examples, examples_uri, '["train", "eval"]')
  statistics = _artifact(standard_artifacts.ExampleStatistics, output)
  large = kind.startswith('large')
  if kind.endswith('stock'):
    executor = stock.Executor(_context(output, 'multi_processing' if large else 'in_memory'))
    properties = {'exclude_splits': '[]'}
  else:
    executor = project.Executor(_context(output, 'in_memory'))
    properties = {'exclude_splits': '[]', project.IN_PROCESS_BELOW_BYTES: 1 << 40}
  return lambda: executor.Do({'examples': [examples]}, {'statistics': [statistics]}, properties)


def stock_eval_config(classes: int) -> str:
  """The project's eval_config with TFMA's own metrics for its figures (what it used before)."""
  import tensorflow_model_analysis as tfma
  from tfx.utils import proto_utils

  from components.blessing_evaluator import eval_config
  from contracts import evaluation, serving

  built = eval_config.build(MIN_ACCURACY, 0.01, label_key=serving.EVAL_LABEL_KEY)
  folded = proto_utils.json_to_proto(
    eval_config.with_parameters(proto_utils.proto_to_json(built), None, classes), tfma.EvalConfig()
  )
  stock_names = {
    evaluation.EXAMPLE_COUNT_METRIC: 'ExampleCount',
    evaluation.ACCURACY_METRIC: 'SparseCategoricalAccuracy',
    evaluation.RECALL_METRIC: 'Recall',
    evaluation.PRECISION_METRIC: 'Precision',
  }
  for spec in folded.metrics_specs:
    for metric in spec.metrics:
      if metric.class_name in stock_names:
        metric.class_name = stock_names[metric.class_name]
        metric.ClearField('module')
  return proto_utils.proto_to_json(folded)


def ceiling_evaluation(examples_uri: str, model_uri: str) -> dict:
  """serving_default and transform_features over the eval split in batches; accuracy, and
  recall and precision per class (top class), in NumPy."""
  import numpy as np
  import tensorflow as tf
  from tfx.utils import path_utils

  from components.statistics_gen import in_process
  from contracts import serving
  from utils import saved_model_ops

  model = saved_model_ops.load(path_utils.serving_model_path(model_uri))
  predict = model.signatures[serving.SERVING_DEFAULT]
  transform = model.signatures[serving.TRANSFORM]
  records = in_process.records(_split_files(examples_uri, 'eval'))
  labels, predicted = [], []
  for start in range(0, len(records), CEILING_BATCH):
    batch = tf.constant(records[start : start + CEILING_BATCH])
    probabilities = predict(**{serving.EXAMPLES_INPUT: batch})[serving.PROBABILITIES]
    predicted.append(np.argmax(probabilities.numpy(), axis=1))
    labels.append(transform(**{serving.EXAMPLES_INPUT: batch})[serving.EVAL_LABEL_KEY].numpy())
  labels, predicted = np.concatenate(labels).reshape(-1).astype(int), np.concatenate(predicted)
  classes = int(max(labels.max(), predicted.max())) + 1
  matrix = np.bincount(labels * classes + predicted, minlength=classes * classes)
  matrix = matrix.reshape(classes, classes)
  right = np.diag(matrix)
  return {
    'examples': int(matrix.sum()),
    'accuracy': float(right.sum() / matrix.sum()),
    'recall': (right / np.maximum(matrix.sum(axis=1), 1)).tolist(),
    'precision': (right / np.maximum(matrix.sum(axis=0), 1)).tolist(),
  }


def evaluation_job(kind: str, examples_uri: str, model_uri: str, output: str):
  """A callable running one evaluation measurement (its imports done)."""
  from tfx.components.evaluator import executor as stock
  from tfx.types import standard_artifacts
  from tfx.utils import json_utils, path_utils, proto_utils

  from components.blessing_evaluator import eval_config
  from components.blessing_evaluator import executor as project
  from contracts import serving

  if kind.endswith('ceiling'):
    import tensorflow  # noqa: F401  (imported before the clock, as the others' are)

    return lambda: ceiling_evaluation(examples_uri, model_uri)
  examples = _artifact(standard_artifacts.Examples, examples_uri, '["train", "eval"]')
  model = _artifact(standard_artifacts.Model, model_uri)
  outputs = {
    'evaluation': [_artifact(standard_artifacts.ModelEvaluation, os.path.join(output, 'eval'))],
    'blessing': [_artifact(standard_artifacts.ModelBlessing, os.path.join(output, 'blessing'))],
  }
  for artifacts in outputs.values():
    os.makedirs(artifacts[0].uri, exist_ok=True)
  classes = project.num_classes(path_utils.serving_model_path(model_uri))
  properties = {
    'example_splits': json_utils.dumps(None),
    'fairness_indicator_thresholds': json_utils.dumps(None),
  }
  if kind.endswith('stock'):
    executor = stock.Executor(_context(output, 'in_memory'))
    properties['eval_config'] = stock_eval_config(classes)
  else:
    executor = project.Executor(_context(output, 'in_memory'))
    built = eval_config.build(MIN_ACCURACY, 0.01, label_key=serving.EVAL_LABEL_KEY)
    properties.update(
      eval_config=proto_utils.proto_to_json(built),
      min_accuracy=MIN_ACCURACY,
      allow_missed_classes=0,
    )
  inputs = {'examples': [examples], 'model': [model], 'baseline_model': []}
  return lambda: executor.Do(inputs, outputs, properties)


def measure_one(kind: str, examples: str, model: str, output: str) -> dict:
  """In this process: one measurement's seconds (and what the evaluation found)."""
  import tensorflow_model_analysis as tfma

  if kind.startswith('evaluation'):
    job = evaluation_job(kind, examples, model, output)
  else:
    job = statistics_job(kind, examples, output)
  started = time.monotonic()
  result = job()
  seconds = time.monotonic() - started
  found = {'seconds': seconds}
  if kind == 'evaluation_ceiling':
    found.update(result)
  elif kind.startswith('evaluation'):
    for for_slice in tfma.load_metrics(os.path.join(output, 'eval')):
      for key_and_value in for_slice.metric_keys_and_values:
        if not key_and_value.key.HasField('sub_key'):
          found[key_and_value.key.name] = key_and_value.value.double_value.value
  return found


def run_measurement(kind: str, examples: str, model: str, scratch: str) -> dict:
  """measure_one in a fresh process: its figures and its peak resident memory in MB (Beam's
  worker processes, where it starts them, not counted)."""
  output = tempfile.mkdtemp(dir=scratch)
  command = [sys.executable, '-m', 'bench.statistics_and_evaluation', '--measure', kind]
  command += ['--examples', examples, '--model', model, '--output', output]
  child = subprocess.Popen(
    command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
  )
  stdout = child.stdout.read()
  _, status, usage = os.wait4(child.pid, 0)
  child.returncode = os.waitstatus_to_exitcode(status)
  if child.returncode:
    raise RuntimeError(f'{kind} failed (exit {child.returncode})')
  shutil.rmtree(output, ignore_errors=True)
  found = json.loads(stdout.strip().splitlines()[-1])
  found['peak_mb'] = usage.ru_maxrss / 1024
  return found


def copied_examples(examples: str, folder: str, copies: int) -> str:
  """An Examples folder holding every shard of `examples` `copies` times (same records)."""
  for split in ('train', 'eval'):
    os.makedirs(os.path.join(folder, f'Split-{split}'))
    for copy in range(copies):
      for path in _split_files(examples, split):
        name = f'{copy}-{os.path.basename(path)}'
        os.link(path, os.path.join(folder, f'Split-{split}', name))
  return folder


def _single(folder: str) -> str:
  (found,) = glob.glob(os.path.join(folder, '*'))
  return found


def summary(runs: dict, stock: str, project: str, ceiling: str = '') -> dict:
  """Seconds per round of each, and the project's speed-up over stock (ratio of medians)."""
  import statistics

  def seconds(kind):
    return [run['seconds'] for run in runs[kind]]

  figures = {kind: seconds(kind) for kind in (stock, project, ceiling) if kind}
  figures['speedup'] = statistics.median(seconds(stock)) / statistics.median(seconds(project))
  figures['speedup_range'] = [
    min(seconds(stock)) / max(seconds(project)),
    max(seconds(stock)) / min(seconds(project)),
  ]
  if ceiling:
    figures['project_over_ceiling'] = statistics.median(seconds(project)) / statistics.median(
      seconds(ceiling)
    )
  figures['peak_mb'] = {
    kind: max(run['peak_mb'] for run in runs[kind]) for kind in figures if kind in runs
  }
  return figures


def measure(quick: bool = False, rounds: int = ROUNDS) -> dict:
  """Every figure of one invocation."""
  from bench import csv_example_gen, pipeline_scaling

  rows = QUICK_ROWS if quick else ROWS
  copies = 1 if quick else LARGE_COPIES
  with tempfile.TemporaryDirectory() as scratch:
    data = csv_example_gen.write_csv(os.path.join(scratch, 'rows.csv'), rows, learnable=True)
    output = os.path.join(scratch, 'run')
    extra = ('--label', 'label', '--min-accuracy', str(MIN_ACCURACY))
    steps = QUICK_TRAIN_STEPS if quick else TRAIN_STEPS
    run = pipeline_scaling.timed_run(
      data, output, steps, *extra, '--allow-missed-classes', *pipeline_scaling.SMALL_EVAL
    )
    root = os.path.join(output, 'pipeline_root')
    examples = _single(os.path.join(root, 'CsvExampleGen', 'examples'))
    model = _single(os.path.join(root, 'Trainer', 'model'))
    large = copied_examples(examples, os.path.join(scratch, 'large'), copies)
    runs = {kind: [] for kind in STATISTICS + EVALUATION + LARGE}
    for round_index in range(rounds):
      for kind in runs:
        source = large if kind in LARGE else examples
        runs[kind].append(run_measurement(kind, source, model, scratch))
        print(
          f'[round {round_index + 1}/{rounds}] {kind}: {runs[kind][-1]["seconds"]:.2f} s',
          flush=True,
        )
    shard_bytes = sum(os.path.getsize(p) for s in ('train', 'eval') for p in _split_files(large, s))
  return {
    'cores': os.cpu_count(),
    'rows': rows,
    'eval_rows': runs['evaluation_ceiling'][0]['examples'],
    'rounds': rounds,
    'pipeline_run': run,
    'runs': runs,
    'statistics': summary(runs, *STATISTICS),
    'evaluation': summary(runs, *EVALUATION),
    'large_statistics': dict(
      summary(runs, *LARGE), rows=rows * copies, shard_mb=shard_bytes / (1 << 20)
    ),
    'accuracy': {kind: runs[kind][0].get('sparse_categorical_accuracy') for kind in EVALUATION[:2]}
    | {'evaluation_ceiling': runs['evaluation_ceiling'][0]['accuracy']},
    'target_speedup': TARGET_SPEEDUP,
  }


def report(figures: dict) -> None:
  rows, cores = figures['rows'], figures['cores']
  print(
    f'{rows:,} CSV rows ({figures["eval_rows"]:,} eval), {cores} cores, {figures["rounds"]} rounds'
  )
  for name in ('statistics', 'evaluation'):
    part = figures[name]
    stock, project, ceiling = (f'{name}_{k}' for k in ('stock', 'project', 'ceiling'))
    print(
      f'  {name}: stock {_spread(part[stock])}, project {_spread(part[project])}, ceiling '
      f'{_spread(part[ceiling])}; project {part["speedup"]:.2f}x stock (rounds '
      f'{part["speedup_range"][0]:.2f}-{part["speedup_range"][1]:.2f}x, target >= '
      f"{figures['target_speedup']}), {part['project_over_ceiling']:.1f}x the ceiling's time"
    )
  large = figures['large_statistics']
  peak = large['peak_mb']
  print(
    f'  statistics on {large["rows"]:,} rows ({large["shard_mb"]:.0f} MB of shards): stock with '
    f'worker processes {_spread(large["large_statistics_stock"])}, in process '
    f'{_spread(large["large_statistics_project"])} (peak {peak["large_statistics_project"]:.0f} MB): '
    f'{large["speedup"]:.2f}x'
  )
  print(f'  accuracy: {figures["accuracy"]}')


def _spread(seconds: List[float]) -> str:
  return f'{min(seconds):.1f}-{max(seconds):.1f} s' if len(seconds) > 1 else f'{seconds[0]:.1f} s'


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--quick', action='store_true', help='a small CSV, one round (tests)')
  parser.add_argument('--rounds', type=int, default=0, help=f'rounds (default {ROUNDS}, quick 1)')
  parser.add_argument('--json', metavar='OUT', help='write every figure to OUT')
  parser.add_argument('--measure', help=argparse.SUPPRESS)  # a child: one measurement
  parser.add_argument('--examples', help=argparse.SUPPRESS)
  parser.add_argument('--model', help=argparse.SUPPRESS)
  parser.add_argument('--output', help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  sys.path.insert(0, ROOT)
  if args.measure:
    print(json.dumps(measure_one(args.measure, args.examples, args.model, args.output)))
    return 0
  figures = measure(args.quick, args.rounds or (1 if args.quick else ROUNDS))
  report(figures)
  if args.json:
    with open(args.json, 'w') as f:
      json.dump(figures, f, indent=1)
  return 0


if __name__ == '__main__':
  sys.exit(main())
