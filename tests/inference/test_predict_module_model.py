"""`pipeline.py predict` with a model a TFX module file made (TFX's taxi pipeline,
tests/support/taxi_module_run.py): CSV rows without the label, extra and absent columns, its
TFRecords, a missing required column."""

import csv
import glob
import os

import pytest

from cli import main as cli_main
from contracts import predictions
from contracts.errors import EXIT_BAD_INPUT, EXIT_OK

pytestmark = pytest.mark.slow  # TFX's taxi pipeline runs once (tests/conftest.py)


def _predict(capsys, data: str, model: str, out: str, *extra: str):
  code = cli_main.main(['predict', '--data', data, '--model', model, '--out', out, *extra])
  captured = capsys.readouterr()
  return code, captured.out, captured.err


def _rows(path: str):
  with open(path, newline='') as f:
    return list(csv.DictReader(f))


def test_rows_without_the_label_and_with_extra_columns_get_a_class_and_probability(
  taxi_module_run, tmp_path, capsys
):
  data = tmp_path / 'export.csv'
  with open(taxi_module_run.held_out, newline='') as f:  # CRLF, as a spreadsheet exports
    lines = f.read().splitlines()
  data.write_text('\r\n'.join([lines[0] + ',driver_note'] + [r + ',ok' for r in lines[1:]]))
  out = str(tmp_path / 'predictions.csv')
  code, printed, _ = _predict(capsys, str(data), taxi_module_run.serving, out)
  assert code == EXIT_OK, printed
  rows = _rows(out)
  assert len(rows) == len(lines) - 1
  assert list(rows[0]) == list(predictions.HEADER)
  assert rows[0][predictions.ID] == 'export.csv:1'
  for row in rows:
    assert row[predictions.CLASS] in ('0', '1')
    assert 0.5 <= float(row[predictions.PROBABILITY]) <= 1.0
  assert 'sent as absent features' not in printed


def test_absent_optional_columns_are_said_and_a_missing_required_one_stops(
  taxi_module_run, tmp_path, capsys
):
  with open(taxi_module_run.held_out, newline='') as f:
    table = list(csv.reader(f))
  header = table[0]
  keep = [i for i, name in enumerate(header) if name not in ('pickup_latitude', 'fare')]
  without_fare = tmp_path / 'no_fare.csv'
  without_fare.write_text('\n'.join(','.join(row[i] for i in keep) for row in table) + '\n')
  code, _, err = _predict(capsys, str(without_fare), taxi_module_run.serving, str(tmp_path / 'p'))
  assert code == EXIT_BAD_INPUT
  assert err.count('\n') == 1
  assert 'columns the model requires: fare (the CSV has:' in err
  assert not os.path.exists(tmp_path / 'p')

  keep = [i for i, name in enumerate(header) if name != 'pickup_latitude']
  data = tmp_path / 'no_latitude.csv'
  data.write_text('\n'.join(','.join(row[i] for i in keep) for row in table) + '\n')
  out = str(tmp_path / 'predictions.csv')
  code, printed, _ = _predict(capsys, str(data), taxi_module_run.serving, out)
  assert code == EXIT_OK
  assert 'columns the model reads that the CSV lacks, sent as absent features: pickup_latitude' in (
    printed
  )
  assert len(_rows(out)) == len(table) - 1


def test_the_examplegens_tfrecords_are_predicted_label_and_all(taxi_module_run, tmp_path, capsys):
  import tensorflow as tf

  (shard,) = glob.glob(
    os.path.join(taxi_module_run.root, 'CsvExampleGen', 'examples', '*', 'Split-eval', '*.gz')
  )
  records = sum(1 for _ in tf.data.TFRecordDataset(shard, compression_type='GZIP'))
  out = str(tmp_path / 'predictions.csv')
  code, printed, _ = _predict(capsys, shard, taxi_module_run.serving, out)
  assert code == EXIT_OK, printed
  rows = _rows(out)
  assert len(rows) == records
  assert {row[predictions.CLASS] for row in rows} <= {'0', '1'}
