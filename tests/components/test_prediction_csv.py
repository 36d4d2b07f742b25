"""components/prediction_csv: PredictionLogs (as tfx_bsl's RunInference writes them for a
predict signature; regress logs too) → predictions.csv, without TFX but for the model's path."""

import csv

import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2

from components.prediction_csv import executor, predictions
from contracts import image_record, serving
from contracts import predictions as layout
from tests.support import regression_model


def _log(example: tf.train.Example, probabilities) -> prediction_log_pb2.PredictionLog:
  log = prediction_log_pb2.PredictionLog()
  request = log.predict_log.request.inputs['examples']
  request.dtype = tf.string.as_datatype_enum
  request.tensor_shape.dim.add().size = 1
  request.string_val.append(example.SerializeToString())
  values = np.asarray([probabilities], np.float32)
  log.predict_log.response.outputs['probabilities'].CopyFrom(tf.make_tensor_proto(values))
  return log


def _write_logs(folder, logs) -> None:
  options = tf.io.TFRecordOptions(compression_type='GZIP')
  with tf.io.TFRecordWriter(str(folder / 'prediction_logs-00000-of-00001.gz'), options) as w:
    for log in logs:
      w.write(log.SerializeToString())


def test_rows_and_ids_from_the_logged_records(tmp_path):
  image = tf.train.Example()
  image.features.feature[image_record.IMAGE_ID_KEY].bytes_list.value.append(b'new/0001.png')
  row = tf.train.Example()
  row.features.feature['trip_miles'].float_list.value.append(1.5)
  inference = tmp_path / 'inference'
  inference.mkdir()
  _write_logs(inference, [_log(image, [0.1, 0.7, 0.2]), _log(row, [0.9, 0.05, 0.05])])
  (inference / 'not_logs.txt').write_text('ignored')
  path, count = predictions.write(str(inference), str(tmp_path / 'out'))
  with open(path, newline='') as f:
    read = list(csv.DictReader(f))
  assert count == 2 and list(read[0]) == list(layout.HEADER)
  assert read[0]['id'] == 'new/0001.png' and read[0]['class'] == '1'
  assert read[0]['probability'] == '0.7'
  assert read[0]['top_k'] == '1=0.7;2=0.2;0=0.1'
  assert read[1]['id'] == 'record-2' and read[1]['class'] == '0'


def test_no_logs_an_empty_csv(tmp_path):
  """An unblessed model: BulkInferrer writes nothing, the CSV is its header."""
  (tmp_path / 'inference').mkdir()
  path, count = predictions.write(str(tmp_path / 'inference'), str(tmp_path / 'out'))
  with open(path) as f:
    assert count == 0 and f.read() == ','.join(layout.HEADER) + '\n'


def test_the_models_id_columns_are_copied_from_each_record(tmp_path):
  logs = []
  for number in range(3):
    row = tf.train.Example()
    row.features.feature['record_id'].int64_list.value.append(1000 + number)
    row.features.feature['id'].bytes_list.value.append(f'p{number}'.encode())
    row.features.feature['width'].float_list.value.append(number / 3)
    logs.append(_log(row, [0.2, 0.8]))
  inference = tmp_path / 'inference'
  inference.mkdir()
  _write_logs(inference, logs)
  path, _ = predictions.write(str(inference), str(tmp_path / 'out'), id_columns=['record_id', 'id'])
  with open(path, newline='') as f:
    read = list(csv.DictReader(f))
  assert list(read[0]) == ['id', 'record_id', 'input_id', 'class', 'probability', 'top_k']
  assert [(r['id'], r['record_id'], r['input_id']) for r in read] == [
    (f'record-{n + 1}', str(1000 + n), f'p{n}') for n in range(3)
  ]


def _regression_logs(tmp_path, values):
  """Predict logs of bulk_inference's [1, 1] `prediction`, then one regress log."""
  logs = []
  for number, value in enumerate(values[:-1]):
    row = tf.train.Example()
    row.features.feature['record_id'].int64_list.value.append(number)
    log = _log(row, [0.0])
    del log.predict_log.response.outputs['probabilities']
    log.predict_log.response.outputs[serving.PREDICTION].CopyFrom(
      tf.make_tensor_proto(np.asarray([[value]], np.float32))
    )
    logs.append(log)
  regress = prediction_log_pb2.PredictionLog()
  row = regress.regress_log.request.input.example_list.examples.add()
  row.features.feature['record_id'].int64_list.value.append(len(values) - 1)
  regress.regress_log.response.result.regressions.add().value = values[-1]
  inference = tmp_path / 'inference'
  inference.mkdir()
  _write_logs(inference, logs + [regress])
  return str(inference)


def test_a_regression_models_rows_hold_the_predicted_number(tmp_path):
  inference = _regression_logs(tmp_path, [12.3, 123456.7, -0.5])
  model = tmp_path / 'model'
  regression_model.save(str(model / 'Format-Serving'))
  path, count = executor.write(inference, str(model), str(tmp_path / 'out'))
  with open(path, newline='') as f:
    read = list(csv.DictReader(f))
  assert count == 3 and list(read[0]) == list(layout.REGRESSION_HEADER)
  assert [(r['id'], r['prediction']) for r in read] == [
    ('record-1', '12.3'),
    ('record-2', '123456.7'),
    ('record-3', '-0.5'),
  ]
  path, _ = predictions.write(
    inference, str(tmp_path / 'ids'), id_columns=['record_id'], regression=True
  )
  with open(path) as f:
    assert f.readline().strip() == 'id,record_id,prediction'
    assert layout.is_header('id,record_id,prediction') and not layout.is_header('id,record_id')
