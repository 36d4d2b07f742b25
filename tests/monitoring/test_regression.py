"""monitoring/regression.py on tests/support/regression_model's SavedModel and hand-made rows:
the label's and the prediction's shift (TFDV's JSD), their drift against the previous window,
the page's charts of them, and a monitoring run's summary and files."""

import os

import numpy as np
import pytest

from monitoring import regression
from tests.support import regression_model

LABEL = regression_model.LABEL


def _records(seed, n, fare_mean=50.0, tips_mean=5.0, label=True):
  random = np.random.default_rng(seed)
  fares, tips = random.normal(fare_mean, 10, n), random.normal(tips_mean, 1, n)
  return [
    regression_model.record(float(f), 'Cash', float(t) if label else None)
    for f, t in zip(fares, tips)
  ]


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
  """(lineage.serving_model's dict, the train split's statistics, the schema) of a regression
  model."""
  from google.protobuf import text_format
  from tensorflow_metadata.proto.v0 import schema_pb2

  from monitoring import distances
  from tests.support import shards

  folder = tmp_path_factory.mktemp('trained')
  regression_model.save(str(folder / 'model' / 'Format-Serving'))
  records = _records(0, 1500)
  os.makedirs(folder / 'examples' / 'Split-train')
  shards.write_shard(str(folder / 'examples' / 'Split-train' / 'data-00000-of-00001'), records)
  schema = text_format.Parse(
    f'feature {{ name: "fare" type: FLOAT }} feature {{ name: "payment_type" type: BYTES }} '
    f'feature {{ name: "{LABEL}" type: FLOAT }}',
    schema_pb2.Schema(),
  )
  model = {
    'model_uri': str(folder / 'model'),
    'examples_uri': str(folder / 'examples'),
    'label': LABEL,
  }
  return model, distances.statistics(records, schema), schema


def test_the_model_is_told_from_a_classifier(trained, tmp_path):
  assert regression.is_regression(trained[0]['model_uri'])
  (tmp_path / 'Format-Serving').mkdir()  # a classifier's: no assets/task.txt
  assert not regression.is_regression(str(tmp_path))


def test_rows_like_training_flag_neither_the_label_nor_the_prediction(trained):
  model, training, _ = trained
  numbers = regression.compare(model, training, _records(1, 400), {})
  assert list(numbers.entries) == sorted(numbers.charts) == [regression.PREDICTION, LABEL]
  for entry in numbers.entries.values():
    assert entry['measure'] == 'jensen_shannon_divergence' and entry['threshold'] == 0.3
    assert entry['value'] < 0.15 and not entry['flagged'] and entry['drift'] is None


def test_shifted_fares_flag_the_prediction_and_shifted_labels_the_label(trained, tmp_path):
  model, training, _ = trained
  entries = regression.compare(model, training, _records(2, 400, fare_mean=80.0), {}).entries
  assert entries[regression.PREDICTION]['flagged'] and not entries[LABEL]['flagged']
  entries = regression.compare(model, training, _records(3, 400, tips_mean=8.0), {}).entries
  assert entries[LABEL]['flagged'] and not entries[regression.PREDICTION]['flagged']
  unlabelled = _records(4, 400, label=False)
  entries = regression.compare(model, training, unlabelled, {'*': 0.01}).entries
  assert list(entries) == [regression.PREDICTION]  # no label served: not compared
  assert entries[regression.PREDICTION]['threshold'] == 0.01


def test_both_drift_against_the_previous_window(trained, tmp_path):
  model, training, _ = trained
  window = regression.compare(model, training, _records(5, 400), {}).window
  (tmp_path / regression.STATISTICS_FILE).write_bytes(window.SerializeToString())
  numbers = regression.compare(
    model, training, _records(6, 400, fare_mean=80.0, tips_mean=8.0), {}, str(tmp_path)
  )
  for name in (regression.PREDICTION, LABEL):
    drift = numbers.entries[name]['drift']
    assert drift['flagged'] and drift['value'] > 0.3
  statistics = numbers.charts

  from monitoring import html

  summary = {
    'features': numbers.entries,
    'flagged': sorted(numbers.entries),
    'anomalies': {},
    'model': {'model_id': 1, 'pushed_to': 'serving/1'},
    'serving_examples': 400,
    'serving_data': 'rows.csv',
  }
  page = html.page(summary, training, statistics[LABEL][1], statistics)
  assert f'<h3>{regression.PREDICTION}</h3>' in page and f'<h3>{LABEL}</h3>' in page


def test_a_monitoring_run_adds_both_to_its_summary_lines_and_files(trained, tmp_path, monkeypatch):
  """monitoring/run.py with the model's ML Metadata lookups stubbed (no pushed regression run)."""
  from google.protobuf import text_format

  from contracts import artifacts, splits
  from metadata import lineage
  from monitoring import record, run

  model, training, schema = trained
  (tmp_path / 'schema').mkdir()
  (tmp_path / 'schema' / 'schema.pbtxt').write_text(text_format.MessageToString(schema))
  statistics_path = artifacts.statistics_path(str(tmp_path / 'statistics'), splits.TRAIN)
  os.makedirs(os.path.dirname(statistics_path))
  with open(statistics_path, 'wb') as f:
    f.write(training.SerializeToString())
  served = dict(
    model,
    model_id=7,
    pushed_to='serving/1',
    schema_uri=str(tmp_path / 'schema'),
    statistics_uri=str(tmp_path / 'statistics'),
    data_kind='csv',
  )
  monkeypatch.setattr(lineage, 'serving_model', lambda path: served)
  monkeypatch.setattr(lineage, 'monitoring_runs', lambda path: [])
  monkeypatch.setattr(record, 'record', lambda *args: 11)
  fares = np.random.default_rng(7).normal(80, 10, 300)
  data = tmp_path / 'serving.csv'
  data.write_text('fare,payment_type\n' + ''.join(f'{f},Cash\n' for f in fares))
  window = tmp_path / 'window'
  summary = run.monitor(str(tmp_path / 'metadata.sqlite'), str(data), {}, str(window))
  assert summary['task'] == 'regression'
  assert summary['flagged'] == ['fare', regression.PREDICTION]  # no label served
  assert (window / regression.STATISTICS_FILE).is_file()
  assert run.lines(summary)[1].startswith(
    f'flagged {regression.PREDICTION}: skew: Jensen-Shannon divergence '
  )
