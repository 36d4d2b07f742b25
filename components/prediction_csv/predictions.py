"""The BulkInferrer's PredictionLogs as the predictions CSV (contracts/predictions.py); runs
without TFX (TensorFlow and TensorFlow Serving's protos only)."""

import csv
import io
import os
from typing import Iterator, List, Sequence, Tuple

import numpy as np

from contracts import image_record, predictions, serving
from utils import atomic

RECORD_ID_PREFIX = 'record-'  # rows without an image path: `record-N`, N from 1 in log order


def read_logs(inference_uri: str) -> Iterator:
  """Every PredictionLog under an InferenceResult's folder (TFRecord files, gzip or not)."""
  import tensorflow as tf
  from tensorflow_serving.apis import prediction_log_pb2

  for name in sorted(tf.io.gfile.listdir(inference_uri)):
    path = os.path.join(inference_uri, name)
    if tf.io.gfile.isdir(path) or not name.startswith('prediction_logs'):
      continue
    compression = 'GZIP' if name.endswith('.gz') else ''
    for record in tf.data.TFRecordDataset(path, compression_type=compression).as_numpy_iterator():
      yield prediction_log_pb2.PredictionLog.FromString(record)


def log_example(log) -> bytes:
  """The serialized record a predict (or regress) log was asked about (tfx_bsl keeps it in the
  request)."""
  if log.WhichOneof('log_type') == 'regress_log':
    return log.regress_log.request.input.example_list.examples[0].SerializeToString()
  (tensor,) = log.predict_log.request.inputs.values()
  return tensor.string_val[0]


def log_probabilities(log) -> np.ndarray:
  import tensorflow as tf

  return tf.make_ndarray(log.predict_log.response.outputs[serving.PROBABILITIES]).reshape(-1)


def log_prediction(log) -> float:
  """A regression model's number: the predict log's PREDICTION output ([1] or [1, 1]), or a
  regress log's value (TensorFlow Serving's Regress API)."""
  import tensorflow as tf

  if log.WhichOneof('log_type') == 'regress_log':
    return float(log.regress_log.response.result.regressions[0].value)
  return float(tf.make_ndarray(log.predict_log.response.outputs[serving.PREDICTION]).reshape(-1)[0])


def input_id(example_bytes: bytes, number: int) -> str:
  """An image's path (image_id) where the record has one, else `record-N`."""
  import tensorflow as tf

  feature = tf.train.Example.FromString(example_bytes).features.feature
  found = feature.get(image_record.IMAGE_ID_KEY)
  if found is not None and found.bytes_list.value:
    return found.bytes_list.value[0].decode('utf-8', 'replace')
  return f'{RECORD_ID_PREFIX}{number}'


def id_values(example_bytes: bytes, id_columns: Sequence[str]) -> dict:
  """The record's id columns' values, as the predictions CSV names them ('' where absent)."""
  import tensorflow as tf

  feature = tf.train.Example.FromString(example_bytes).features.feature
  found = {}
  for column in id_columns:
    kind = feature[column].WhichOneof('kind') if column in feature else None
    values = list(getattr(feature[column], kind).value) if kind else []
    shown = [v.decode('utf-8', 'replace') if isinstance(v, bytes) else str(v) for v in values]
    found[predictions.carried(column)] = ' '.join(shown)
  return found


def rows(
  logs,
  class_names: Sequence[str] = (),
  k: int = predictions.DEFAULT_TOP_K,
  id_columns: Sequence[str] = (),
  regression: bool = False,
) -> List[dict]:
  """One predictions row per log (a regression model's: its number); the model's id columns
  copied from its record."""
  found = []
  for number, log in enumerate(logs, 1):
    example = log_example(log)
    if regression:
      row = predictions.regression_row(input_id(example, number), log_prediction(log))
    else:
      row = predictions.row(input_id(example, number), log_probabilities(log), class_names, k)
    found.append(dict(row, **id_values(example, id_columns)) if id_columns else row)
  return found


def write(
  inference_uri: str,
  out_dir: str,
  class_names: Sequence[str] = (),
  id_columns: Sequence[str] = (),
  regression: bool = False,
) -> Tuple[str, int]:
  """Writes out_dir/predictions.csv (write-then-rename); returns (its path, its rows)."""
  found = rows(read_logs(inference_uri), class_names, id_columns=id_columns, regression=regression)
  text = io.StringIO(newline='')
  fields = predictions.header(id_columns, regression)
  writer = csv.DictWriter(text, fieldnames=fields, lineterminator='\n')
  writer.writeheader()
  writer.writerows(found)
  return atomic.write(os.path.join(out_dir, predictions.FILE_NAME), text.getvalue()), len(found)
