"""Models for tables on the taxi CSV: the pipeline's default model, `--model gbt`, scikit-learn's
HistGradientBoosting (defaults) and the mean / majority predictor, on one split the pipeline made.

  .venv/bin/python -m bench.taxi_models [--rounds N] [--quick] [--json OUT]

Two tasks on the Chicago taxi CSV shipped in the tfx wheel (15,002 rows): `fare` as a number
(regression), and the TFX template's `big_tip`, tips > 20 % of the fare (two classes); `tips`
itself is left out of both (it is paid after the fare, and it is the template's label). Each
round, per task: `pipeline.py run --no-cache` with the default model, then with `--model gbt`,
each with `--tabular-stats sample` and `transform` (a full Transform pass: vocabularies and
moments; its Transform and whole-run seconds are the CSV's cost of it), on one output folder; the pipeline's split is read back from its Examples artifact; scikit-learn
and the mean / majority predictor train on that train split; every contender is scored on that
eval split by the same code here (the pipeline's models through their `serving_default`).
Printed: MAE, RMSE, R² (regression), AUC and accuracy (classes), training seconds (the Trainer
component's, scikit-learn's fit), with their spread across rounds, and the issue's targets:
gbt MAE <= 1.05x HistGradientBoosting's and AUC >= its - 0.01; the default model MAE <= 1.5x and
AUC >= its - 0.02.
"""

import csv
import glob
import os
import shutil
import statistics
import tempfile
import time
from typing import Dict, List, Tuple

import numpy as np

from bench import figures
from bench.edit_loop import pipeline
from bench.input_data import TAXI_CSV

TASKS = ('fare', 'big_tip')  # (regression, two classes)
BIG_TIP = 0.2  # the TFX template's threshold: tips over 20 % of the fare
PIPELINE_MODELS = ('default', 'gbt')
# --tabular-stats: the Trainer's 4,096-row sample and hashed categories, or a full Transform pass
# (vocabularies with OOV buckets, moments of the whole train split), side by side (issue 67)
STATS = ('sample', 'transform')
QUICK_ROWS = 3000


def task_csv(task: str, folder: str, rows: int = 0) -> str:
  """The taxi CSV for `task` in `folder`, without `tips` (the first `rows` trips; 0: all):
  `fare` keeps fare as its label, `big_tip` adds the label (1: tips > BIG_TIP of the fare)."""
  path = os.path.join(folder, f'{task}.csv')
  with open(TAXI_CSV, newline='') as source, open(path, 'w', newline='') as out:
    reader = csv.DictReader(source)
    columns = [c for c in reader.fieldnames if c != 'tips'] + (
      ['big_tip'] if task != 'fare' else []
    )
    writer = csv.DictWriter(out, columns)
    writer.writeheader()
    for number, row in enumerate(reader):
      if rows and number >= rows:
        break
      tips, fare = float(row.pop('tips') or 0), float(row['fare'] or 0)
      if task != 'fare':
        row['big_tip'] = int(tips > BIG_TIP * fare)
      writer.writerow(row)
  return path


def split_records(output: str) -> Dict[str, List[bytes]]:
  """{split: serialized tf.Examples} of the newest Examples artifact the run's ExampleGen wrote."""
  import tensorflow as tf

  root = os.path.join(output, 'pipeline_root', 'CsvExampleGen', 'examples', '*')
  artifacts = sorted(glob.glob(root), key=_number)
  found = {}
  for split in ('train', 'eval'):
    files = sorted(glob.glob(os.path.join(artifacts[-1], f'Split-{split}', '*')))
    compression = 'GZIP' if files and files[0].endswith('.gz') else ''
    found[split] = [r.numpy() for r in tf.data.TFRecordDataset(files, compression)]
  return found


def _number(path: str) -> int:
  return int(os.path.basename(path)) if os.path.basename(path).isdigit() else -1


def table(records: List[bytes], label: str) -> Tuple[dict, np.ndarray]:
  """({column: values}, labels) of serialized tf.Examples: numbers as float (NaN: missing),
  strings as str ('' : missing)."""
  import tensorflow as tf

  columns: Dict[str, list] = {}
  labels = []
  for number, record in enumerate(records):
    features = tf.train.Example.FromString(record).features.feature
    for name, feature in features.items():
      kind = feature.WhichOneof('kind')
      values = list(getattr(feature, kind).value) if kind else []
      value = values[0] if values else None
      if name == label:
        labels.append(np.nan if value is None else float(value))
        continue
      column = columns.setdefault(name, [None] * number)
      column.append(value.decode('utf-8', 'replace') if isinstance(value, bytes) else value)
    for column in columns.values():
      column.extend([None] * (number + 1 - len(column)))
  return columns, np.array(labels, np.float64)


def sklearn_contender(train: dict, train_labels, evaluation: dict, regression: bool):
  """(predictions on eval: numbers or the positive class's probability, fit seconds) of
  HistGradientBoosting at its defaults, strings as ordinal categories."""
  import pandas as pd
  from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

  frames = [pd.DataFrame(train), pd.DataFrame(evaluation)]
  strings = [c for c in frames[0] if frames[0][c].dtype == object]
  for column in strings:
    codes = {v: i for i, v in enumerate(sorted(set(frames[0][column].dropna())))}
    for frame in frames:
      frame[column] = frame[column].map(codes).astype(float)
  for frame in frames:
    frame[frame.columns] = frame[frame.columns].astype(float)
  categorical = [c in strings for c in frames[0].columns]
  if regression:
    chosen = HistGradientBoostingRegressor(categorical_features=categorical, random_state=0)
  else:
    chosen = HistGradientBoostingClassifier(categorical_features=categorical, random_state=0)
  started = time.monotonic()
  chosen.fit(frames[0], train_labels)
  seconds = time.monotonic() - started
  if regression:
    return chosen.predict(frames[1]), seconds
  return chosen.predict_proba(frames[1])[:, 1], seconds


def served_predictions(output: str, records: List[bytes], regression: bool) -> np.ndarray:
  """The newest trained model's serving_default on `records`: the number, or the positive
  class's probability."""
  import tensorflow as tf

  from contracts import serving
  from utils import saved_model_ops

  models = glob.glob(os.path.join(output, 'pipeline_root', 'Trainer', 'model', '*'))
  models.sort(key=_number)
  loaded = saved_model_ops.load(os.path.join(models[-1], 'Format-Serving'))
  serve = loaded.signatures[serving.SERVING_DEFAULT]
  found = []
  for start in range(0, len(records), 1024):
    answer = serve(examples=tf.constant(records[start : start + 1024]))
    if regression:
      found.append(answer[serving.PREDICTION].numpy().reshape(-1))
    else:
      found.append(answer[serving.PROBABILITIES].numpy()[:, 1])
  return np.concatenate(found)


def scores(labels: np.ndarray, predicted: np.ndarray, regression: bool) -> dict:
  """MAE, RMSE, R² of numbers; AUC and accuracy (at 0.5) of the positive class's probability."""
  from sklearn import metrics

  if regression:
    return {
      'mae': float(metrics.mean_absolute_error(labels, predicted)),
      'rmse': float(np.sqrt(metrics.mean_squared_error(labels, predicted))),
      'r2': float(metrics.r2_score(labels, predicted)),
    }
  return {
    'auc': float(metrics.roc_auc_score(labels, predicted)),
    'accuracy': float(np.mean((predicted > 0.5) == (labels > 0.5))),
  }


def one_round(task: str, folder: str, rows: int) -> Dict[str, dict]:
  """{contender: scores and seconds} of one round of `task`."""
  regression = task == 'fare'
  data = task_csv(task, folder, rows)
  output = os.path.join(folder, f'out-{task}')
  found = {}
  for model in PIPELINE_MODELS:
    for stats in STATS:
      extra = (('--model', model) if model != 'default' else ()) + ('--tabular-stats', stats)
      run = pipeline(output, 600, '--data', data, '--label', task, '--no-cache', *extra)
      records = split_records(output)
      _, eval_labels = table(records['eval'], task)
      predicted = served_predictions(output, records['eval'], regression)
      found[f'pipeline {model}' + ('' if stats == 'sample' else ' +Transform')] = dict(
        scores(eval_labels, predicted, regression),
        seconds=run['component_seconds'].get('Trainer'),
        transform_seconds=run['component_seconds'].get('Transform'),
        run_seconds=run.get('wall_seconds'),
      )
  train, train_labels = table(records['train'], task)
  evaluation, eval_labels = table(records['eval'], task)
  predicted, seconds = sklearn_contender(train, train_labels, evaluation, regression)
  found['HistGradientBoosting'] = dict(scores(eval_labels, predicted, regression), seconds=seconds)
  constant = train_labels.mean() if regression else float(train_labels.mean() > 0.5)
  found['mean/majority'] = dict(
    scores(eval_labels, np.full(len(eval_labels), constant), regression), seconds=0.0
  )
  found['_rows'] = {'train': len(train_labels), 'eval': len(eval_labels)}
  return found


def measure(quick: bool, rounds: int) -> dict:
  rounds = rounds or (1 if quick else 2)
  folder = tempfile.mkdtemp(prefix='taxi-models-')
  runs: Dict[str, List[dict]] = {task: [] for task in TASKS}
  try:
    for number in range(rounds):
      for task in TASKS:
        runs[task].append(one_round(task, folder, QUICK_ROWS if quick else 0))
        print(f'round {number + 1}, {task}: {runs[task][-1]}', flush=True)
  finally:
    shutil.rmtree(folder, ignore_errors=True)
  return {'rounds': rounds, 'runs': runs, 'targets': targets(runs)}


def targets(runs: Dict[str, List[dict]]) -> Dict[str, dict]:
  """The issue's targets, judged on the medians across rounds."""

  def median(task, contender, key):
    return statistics.median(r[contender][key] for r in runs[task])

  hgb_mae = median('fare', 'HistGradientBoosting', 'mae')
  hgb_auc = median('big_tip', 'HistGradientBoosting', 'auc')
  judged = {}
  for model, mae_ratio, auc_gap in (('gbt', 1.05, 0.01), ('default', 1.5, 0.02)):
    mae = median('fare', f'pipeline {model}', 'mae') / hgb_mae
    auc = median('big_tip', f'pipeline {model}', 'auc') - hgb_auc
    judged[model] = {
      'mae_ratio': mae,
      'mae_target': mae_ratio,
      'mae_met': mae <= mae_ratio,
      'auc_difference': auc,
      'auc_target': -auc_gap,
      'auc_met': auc >= -auc_gap,
    }
  return judged


def report(found: dict) -> None:
  for task in TASKS:
    rounds = found['runs'][task]
    keys = ('mae', 'rmse', 'r2') if task == 'fare' else ('auc', 'accuracy')
    rows = rounds[0]['_rows']
    print(f'\n{task} ({rows["train"]:,} train, {rows["eval"]:,} eval rows; median [spread])')
    seconds = ('seconds', 'transform_seconds', 'run_seconds')
    titles = ('train seconds', 'Transform seconds', 'whole run seconds')
    print(f'{"":28}' + ''.join(f'{k:>22}' for k in keys + titles))
    for contender in (c for c in rounds[0] if not c.startswith('_')):
      cells = []
      for key in keys + seconds:
        values = [r[contender].get(key) for r in rounds if r[contender].get(key) is not None]
        cells.append(
          f'{statistics.median(values):.4g} [{min(values):.3g}-{max(values):.3g}]'
          if values
          else '-'
        )
      print(f'{contender:28}' + ''.join(f'{c:>22}' for c in cells))
  for model, judged in found['targets'].items():
    print(
      f"{model}: MAE {judged['mae_ratio']:.2f}x HistGradientBoosting's (target <= "
      f'{judged["mae_target"]}x: {"met" if judged["mae_met"] else "missed"}); AUC '
      f'{judged["auc_difference"]:+.4f} (target >= {judged["auc_target"]}: '
      f'{"met" if judged["auc_met"] else "missed"})'
    )


if __name__ == '__main__':
  figures.main_in_rounds(__doc__, f'the first {QUICK_ROWS:,} trips, one round', measure, report)
