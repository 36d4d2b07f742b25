"""One monitoring run, without the command line: the serving model and its training data from ML
Metadata, the serving data's statistics, skew and drift (a regression model's label and
prediction too: regression.py), the outputs, the ML Metadata record."""

import datetime
import json
import os
from typing import Dict, Optional, Sequence

from contracts import artifacts, csv_dialect, trainer_options
from metadata import artifact_reader, lineage
from utils import atomic

STATISTICS_FILE = artifacts.STATISTICS_FILE
ANOMALIES_FILE = 'anomalies.pbtxt'
SUMMARY_FILE = 'monitoring.json'
HTML_FILE = 'monitoring.html'
MONITORING_FOLDER = 'monitoring'


def previous_window(metadata_path: str, model_id: int) -> Optional[str]:
  """The statistics file of the newest earlier monitoring run of the same model, or None."""
  for run in reversed(lineage.monitoring_runs(metadata_path)):
    path = os.path.join(run['statistics_uri'] or '', STATISTICS_FILE)
    if run['model_id'] == model_id and os.path.isfile(path):
      return path
  return None


def monitor(
  metadata_path: str,
  serving_data: str,
  thresholds: Dict[str, float],
  out_folder: Optional[str] = None,
  id_columns: Sequence[str] = (),
  beam_args: Sequence[str] = (),
  limits: Optional[dict] = None,
) -> dict:
  """Compares `serving_data` with the serving model's training data; writes statistics,
  anomalies and the JSON summary into `out_folder` (default: a new
  <output>/monitoring/<time> folder) and records the run. Returns the summary. `limits`:
  performance.measure's max_accuracy_drop, max_error_increase and min_rows: the model's error on
  served rows that carry the label, judged against its eval figures (None: not measured)."""
  from google.protobuf import text_format
  import tensorflow_data_validation as tfdv

  from monitoring import distances, regression
  from monitoring import serving_data as data

  model = lineage.serving_model(metadata_path)
  read = csv_dialect.Counts()  # a CSV's rows skipped and cells made missing
  if model['data_kind'] == 'image':  # the features that carry an image's skew, both sides
    from monitoring import images

    with_format = images.training_encoded(model['examples_uri'])
    schema = images.schema(with_format)
    training = distances.statistics(
      images.training_examples(model['examples_uri'], with_format), schema
    )
    examples = images.serving_examples(serving_data, with_format)
  else:
    schema = tfdv.load_schema_text(os.path.join(model['schema_uri'], 'schema.pbtxt'))
    training = artifact_reader.train_statistics(model['statistics_uri'])
    examples = data.examples(serving_data, schema, read, model['label'])
  schema = distances.monitoring_schema(schema, training, model['label'], thresholds)
  serving = distances.statistics(examples, schema, leave_out=[model['label']])
  previous_path = previous_window(metadata_path, model['model_id'])
  previous = tfdv.load_stats_binary(previous_path) if previous_path else None
  result = distances.compare(training, serving, schema, previous)
  task, numbers = trainer_options.CLASSIFICATION, None
  if model['data_kind'] != 'image' and regression.is_regression(
    model['model_uri'], model.get('model_task') or ''
  ):
    task = trainer_options.REGRESSION
    previous_folder = os.path.dirname(previous_path) if previous_path else None
    numbers = regression.compare(model, training, examples, thresholds, previous_folder)
    result['features'] = dict(sorted({**result['features'], **numbers.entries}.items()))
    result['flagged'] = sorted(
      set(result['flagged'])
      | {n for n, e in numbers.entries.items() if e['flagged'] or (e['drift'] or {}).get('flagged')}
    )
  result['performance'] = None
  if limits is not None and model['data_kind'] != 'image':
    from monitoring import performance

    result['performance'] = performance.measure(
      regression.model_dir(model['model_uri']),
      examples,
      model['label'],
      task == trainer_options.REGRESSION,
      model.get('eval_figures') or {},
      **limits,
      fences=model.get('label_fences'),
    )
    if (result['performance'] or {}).get('flagged'):
      result['flagged'] = sorted(set(result['flagged']) | {performance.ENTRY})
  if id_columns:
    result['feature_skew'] = _feature_skew(model, schema, examples, list(id_columns), beam_args)
    mismatched = {
      name
      for name, f in result['feature_skew']['features'].items()
      if int(f.get('mismatchCount', 0))
    }
    result['flagged'] = sorted(set(result['flagged']) | mismatched)
  if out_folder is None:
    stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S-%f')
    out_folder = os.path.join(os.path.dirname(metadata_path), MONITORING_FOLDER, stamp)
  os.makedirs(out_folder, exist_ok=True)
  atomic.write(os.path.join(out_folder, STATISTICS_FILE), serving.SerializeToString())
  if numbers:  # the next window's drift baseline
    window = numbers.window.SerializeToString()
    atomic.write(os.path.join(out_folder, regression.STATISTICS_FILE), window)
  atomic.write(
    os.path.join(out_folder, ANOMALIES_FILE),
    text_format.MessageToString(result.pop('anomalies_proto')),
  )
  summary = {
    'model': {k: model[k] for k in ('model_id', 'model_uri', 'pushed_to')},
    'trained_on': {k: model[k] for k in ('examples_uri', 'schema_uri', 'statistics_uri')},
    'label': model['label'],
    'task': task,
    'serving_data': os.path.abspath(serving_data),
    'serving_examples': len(examples),
    'repeated_headers': read.repeated_headers,
    'non_finite_cells': read.non_finite_cells,
    'previous_window': os.path.dirname(previous_path) if previous_path else None,
    **result,
    'output': out_folder,
  }
  summary_path = os.path.join(out_folder, SUMMARY_FILE)
  from monitoring import html

  summary['html'] = os.path.join(out_folder, HTML_FILE)
  atomic.write(
    summary['html'], html.page(summary, training, serving, numbers.charts if numbers else None)
  )
  summary['execution_id'] = None
  from monitoring import record

  summary['execution_id'] = record.record(
    metadata_path,
    model['model_id'],
    summary['serving_data'],
    out_folder,
    out_folder,
    summary_path,
    summary['flagged'],
  )
  atomic.write(summary_path, json.dumps(summary, indent=2) + '\n')
  return summary


def _feature_skew(model: dict, schema, examples, id_columns, beam_args=()) -> dict:
  """Per-example skew between the training rows (both splits) and the serving rows that share
  the values of `id_columns`."""
  import glob

  from contracts.errors import UserError
  from monitoring import feature_skew, images

  if model['data_kind'] == 'image':
    raise UserError('--id-column: for tabular models (an image model has no id column)')
  unknown = [c for c in id_columns if c not in {f.name for f in schema.feature}]
  if unknown:
    raise UserError(f'--id-column {", ".join(unknown)}: not a column of the training data')
  shards = sorted(glob.glob(os.path.join(glob.escape(model['examples_uri']), 'Split-*', '*')))
  training = images.read_records(shards)
  return feature_skew.detect(training, examples, id_columns, [model['label']], beam_args)


def lines(summary: dict) -> list:
  """One terminal line per flagged feature, then one line for the run."""
  from monitoring.distances import MEASURE_NAMES

  out = []
  from monitoring.performance import ENTRY

  performance = summary.get('performance')
  for name in summary['flagged']:
    if performance and name == ENTRY:
      out.append(f'flagged {name}: {performance["why"]}')
      continue
    entry = summary['features'].get(name) or {}
    parts = []
    if entry.get('flagged'):
      parts.append(
        f'skew: {MEASURE_NAMES[entry["measure"]]} {entry["value"]:.3f} > {entry["threshold"]:g}'
      )
    drift = entry.get('drift') or {}
    if drift.get('flagged'):
      parts.append(
        f'drift since the previous window: {MEASURE_NAMES[drift["measure"]]} '
        f'{drift["value"]:.3f} > {drift["threshold"]:g}'
      )
    mismatched = (summary.get('feature_skew') or {}).get('features', {}).get(name, {})
    if int(mismatched.get('mismatchCount', 0)):
      parts.append(
        f'{mismatched["mismatchCount"]} serving rows differ from the training row with their id'
      )
    if name in summary['anomalies'] and not parts:
      parts.append('anomaly: ' + '; '.join(summary['anomalies'][name]))
    out.append(f'flagged {name}: ' + '; '.join(parts))
  if performance and not performance['flagged']:
    out.append(f'model error: {performance["why"]}')
  read = csv_dialect.Counts(
    summary.get('repeated_headers', 0), summary.get('non_finite_cells', 0)
  ).line()
  if read:
    out.append(f'CSV rows: {read}')
  out.append(
    f'monitor: {summary["serving_examples"]} serving examples, '
    f"{len(summary['features'])} features compared with model #{summary['model']['model_id']}'s "
    f'training data, {len(summary["flagged"])} flagged; {os.path.join(summary["output"], SUMMARY_FILE)}'
  )
  return out
