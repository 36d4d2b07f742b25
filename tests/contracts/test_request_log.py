"""contracts/request_log.py: PredictionLog TFRecords written and read back as TF Serving logs them."""

import os

import numpy as np
import pytest

from contracts import request_log, serving
from tests.support import request_logs


def test_requests_of_every_signature_read_back_as_sent(tmp_path):
  from tensorflow_serving.apis import prediction_log_pb2

  sent = [
    (serving.IMAGE_BYTES, {serving.IMAGE_BYTES_INPUT: np.array([b'\x89PNG...', b'\xff\xd8'])}),
    (
      serving.COLUMNS,
      {'fare': np.array([7.5, np.nan], np.float32), 'payment_type': np.array([b'Cash', b''])},
    ),
    (serving.TEXT, {serving.TEXT_INPUT: np.array(['A great film.'.encode()])}),
  ]
  outputs = {serving.PROBABILITIES: np.array([[0.25, 0.75]], np.float32)}
  logs = [request_log.predict_log(sig, inputs, outputs) for sig, inputs in sent]
  classify = prediction_log_pb2.PredictionLog()
  classify.classify_log.request.model_spec.name = 'other'  # not a predict log: skipped
  path = str(tmp_path / request_logs.file_name(0, 1))
  assert request_log.write(path, logs + [classify]) == 4
  assert not [n for n in os.listdir(tmp_path) if n.endswith('.partial')]

  read = list(request_log.read([path]))
  assert [r.signature for r in read] == [sig for sig, _ in sent]
  for request, (_, inputs) in zip(read, sent):
    assert sorted(request.inputs) == sorted(inputs)
    for name, value in inputs.items():
      np.testing.assert_array_equal(request.inputs[name], value)  # NaN == NaN here
      assert request.inputs[name].shape[0] == len(value)  # batch first


def test_a_request_names_the_model_and_an_unnamed_signature_reads_as_serving_default(tmp_path):
  log = request_log.predict_log('', {serving.EXAMPLES_INPUT: np.array([b'record'])})
  assert log.predict_log.request.model_spec.name == request_log.MODEL_NAME
  path = str(tmp_path / 'log.tfrecord')
  request_log.write(path, [log])
  (request,) = request_log.read([path])
  assert request.signature == serving.SERVING_DEFAULT


def test_a_failed_write_leaves_no_file(tmp_path):
  path = str(tmp_path / 'log.tfrecord')

  def broken():
    yield request_log.predict_log(serving.TEXT, {serving.TEXT_INPUT: np.array([b'x'])})
    raise RuntimeError('the source failed')

  with pytest.raises(RuntimeError):
    request_log.write(path, broken())
  assert os.listdir(tmp_path) == []


def test_files_lists_the_log_files_of_a_folder(tmp_path):
  for name in ('prediction_log-20261203T100000-00000-of-00001.tfrecord', 'notes.txt'):
    (tmp_path / name).write_bytes(b'')
  assert request_log.files(str(tmp_path)) == [
    str(tmp_path / 'prediction_log-20261203T100000-00000-of-00001.tfrecord')
  ]
