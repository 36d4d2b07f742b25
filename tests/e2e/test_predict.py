"""`pipeline.py predict` with the models of real runs (first_run: digits images with junk files;
tabular_run: taxi CSV): one row per input, probabilities that sum to 1, each one what
serving_default gives on the same record, and the request log read back as sent."""

import csv
import glob
import os

import numpy as np
import pytest

from cli import main as cli_main
from contracts import image_record, predictions, request_log, serving
from contracts.errors import EXIT_OK
from tests.conftest import BMP_IMAGE, FILED_TWICE, PHONE_PHOTO

pytestmark = pytest.mark.slow


def _rows(path):
  with open(path, newline='') as f:
    return list(csv.DictReader(f))


def _probabilities(row, names):
  top = dict(part.rsplit('=', 1) for part in row[predictions.TOP_K].split(';'))
  assert set(top) == set(names)  # --top-k covers every class
  return np.array([float(top[name]) for name in names])


def _serving_default(model_path, records):
  import tensorflow as tf

  function = tf.saved_model.load(model_path).signatures[serving.SERVING_DEFAULT]
  found = []
  for start in range(0, len(records), 256):
    batch = tf.constant(records[start : start + 256])
    found.append(function(**{serving.EXAMPLES_INPUT: batch})[serving.PROBABILITIES].numpy())
  return np.concatenate(found)


def test_images_predict_as_serving_default_on_their_training_records(
  first_run, images_with_junk, tmp_path, capsys
):
  import tensorflow as tf

  code, summary, output, _ = first_run
  assert code == EXIT_OK
  out, log = str(tmp_path / 'p.csv'), str(tmp_path / 'log')
  argv = ['predict', '--data', images_with_junk, '--output', output, '--out', out, '--log', log]
  assert cli_main.main([*argv, '--top-k', '10']) == EXIT_OK
  shown = capsys.readouterr().out
  rows = {r[predictions.ID]: r for r in _rows(out)}
  files = sorted(os.path.relpath(p, images_with_junk) for p in glob.glob(f'{images_with_junk}/*/*'))
  unreadable = {'3/broken.jpg', '1/notes.txt'}
  assert sorted(rows) == sorted(set(files) - unreadable)  # one row per image, none twice
  assert {s['id'] for s in _rows(str(tmp_path / 'p_skipped.csv'))} == unreadable
  assert 'skipped 2 input(s)' in shown
  assert 'turned upright: 1 image(s)' in shown  # PHONE_PHOTO
  assert f'{summary["pushed_to"]} ({serving.IMAGE_BYTES})' in shown

  # The training record of every file ImageExampleGen took, through serving_default.
  records, ids = [], []
  for shard in glob.glob(os.path.join(summary['examples_uri'], 'Split-*', '*')):
    for record in tf.data.TFRecordDataset(shard, compression_type='GZIP').as_numpy_iterator():
      example = tf.train.Example.FromString(record)
      ids.append(example.features.feature[image_record.IMAGE_ID_KEY].bytes_list.value[0].decode())
      records.append(record)
  # Every file predicted but the two ExampleGen left out: one image filed under two classes.
  filed_twice = {FILED_TWICE, f'2/{sorted(os.listdir(os.path.join(images_with_junk, "2")))[0]}'}
  assert PHONE_PHOTO in ids and BMP_IMAGE in ids and sorted(ids) == sorted(set(rows) - filed_twice)
  expected = _serving_default(summary['pushed_to'], records)
  names = [str(i) for i in range(10)]
  for image_id, probabilities in zip(ids, expected):
    row = rows[image_id]
    got = _probabilities(row, names)
    np.testing.assert_allclose(got, probabilities, rtol=1e-4, atol=1e-5, err_msg=image_id)
    assert got.sum() == pytest.approx(1.0, abs=1e-4)
    assert row[predictions.CLASS] == names[int(np.argmax(probabilities))]

  # The request log: what was sent, per input, to predict_image_bytes.
  logged = list(request_log.read(request_log.files(log)))
  assert len(logged) == len(rows) and {r.signature for r in logged} == {serving.IMAGE_BYTES}
  sent = {r.inputs[serving.IMAGE_BYTES_INPUT][0] for r in logged}
  with open(
    os.path.join(images_with_junk, '0', sorted(os.listdir(f'{images_with_junk}/0'))[0]), 'rb'
  ) as f:
    assert f.read() in sent  # a PNG goes as the file's own bytes


def _spreadsheet_export(source: str, destination: str) -> int:
  """The CSV without its label column, every field quoted, CRLF line ends (as Excel and Google
  Sheets export); returns the rows."""
  with open(source, newline='') as f:
    rows = list(csv.DictReader(f))
  columns = [c for c in rows[0] if c != 'tips']
  with open(destination, 'w', newline='') as f:
    writer = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator='\r\n')
    writer.writerow(columns)
    writer.writerows([row[c] for c in columns] for row in rows)
  return rows


def _example_like_csv_example_gen(row, types):
  """A tf.Example as CsvExampleGen builds it from a row: ints, floats, strings by the column's
  values; an empty cell, no feature."""
  import tensorflow as tf

  features = {}
  for column, value in row.items():
    if column == 'tips' or value == '':
      continue
    if types[column] is int:
      features[column] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(value)]))
    elif types[column] is float:
      features[column] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(value)]))
    else:
      features[column] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode()]))
  return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def _type(values):
  for kind in (int, float):
    try:
      for v in values:
        if v != '':
          kind(v)
      return kind
    except ValueError:
      continue
  return str


def test_csv_rows_predict_as_serving_default_on_their_examples(tabular_run, tmp_path, capsys):
  code, summary, output, data = tabular_run
  assert code == EXIT_OK
  exported = str(tmp_path / 'export.csv')
  rows = _spreadsheet_export(os.path.join(data, 'span-2', 'version-2', 'trips.csv'), exported)
  out, log = str(tmp_path / 'p.csv'), str(tmp_path / 'log')
  argv = ['predict', '--data', exported, '--output', output, '--out', out, '--log', log]
  assert cli_main.main(argv) == EXIT_OK
  shown = capsys.readouterr().out
  assert f'({serving.COLUMNS})' in shown
  assert not [line for line in shown.splitlines() if line.startswith('skipped')]
  predicted = _rows(out)
  assert [r[predictions.ID] for r in predicted] == [
    f'export.csv:{i}' for i in range(1, len(rows) + 1)
  ]

  types = {c: _type([r[c] for r in rows]) for c in rows[0]}
  records = [_example_like_csv_example_gen(r, types) for r in rows]
  expected = _serving_default(summary['pushed_to'], records)
  names = [p.rsplit('=', 1)[0] for p in predicted[0][predictions.TOP_K].split(';')]
  names = sorted(names, key=lambda n: int(n) if n.isdigit() else n)
  assert len(names) == expected.shape[1]
  for row, probabilities in zip(predicted, expected):
    got = _probabilities(row, names)
    np.testing.assert_allclose(got, probabilities, rtol=1e-4, atol=1e-5, err_msg=row['id'])
    assert got.sum() == pytest.approx(1.0, abs=1e-4)
    assert row[predictions.CLASS] == names[int(np.argmax(probabilities))]

  logged = list(request_log.read(request_log.files(log)))
  assert len(logged) == len(rows) and {r.signature for r in logged} == {serving.COLUMNS}
  first = logged[0].inputs
  assert sorted(first) == sorted(serving.column_input(c) for c in rows[0] if c != 'tips')
  for column, value in rows[0].items():
    if column == 'tips':
      continue
    sent = first[serving.column_input(column)][0]
    if isinstance(sent, bytes):  # a categorical column of the model
      assert sent == value.encode()
    elif value == '':
      assert np.isnan(sent)
    else:
      assert sent.dtype == np.float64 and sent == float(value)  # exact: ids of 11 digits too


def test_out_never_replaces_an_input_or_a_file_predict_did_not_write(tabular_run, tmp_path, capsys):
  """`predict --data rows.csv --out rows.csv` once replaced the data with predictions (exit 0)."""
  _, _, output, data = tabular_run
  exported = str(tmp_path / 'rows.csv')
  _spreadsheet_export(os.path.join(data, 'span-2', 'version-2', 'trips.csv'), exported)
  with open(exported, 'rb') as f:
    before = f.read()
  notes = tmp_path / 'notes.csv'
  notes.write_text('my,own\n1,2\n')
  argv = ['predict', '--data', exported, '--output', output, '--out']
  for out, extra, error in (
    (exported, [], 'is one of the --data inputs'),
    (exported, ['--overwrite'], 'is one of the --data inputs'),
    (str(notes), [], 'already exists and is not a predictions file'),
  ):
    assert cli_main.main([*argv, out, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f'error: --out {out}: {error}') and err.count('\n') == 1
  with open(exported, 'rb') as f:
    assert f.read() == before
  assert notes.read_text() == 'my,own\n1,2\n'
  assert cli_main.main([*argv, str(notes), '--overwrite']) == EXIT_OK  # asked for: replaced
  assert _rows(str(notes))[0][predictions.ID] == 'rows.csv:1'
