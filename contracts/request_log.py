"""Requests as TensorFlow Serving logs them: TFRecord files of
`tensorflow_serving.apis.prediction_log_pb2.PredictionLog`, one PredictLog per request (the
request's model_spec names the signature, its inputs are TensorProtos), the format of TF
Serving's request logging and of TFX's InfraValidator. `pipeline.py predict --log DIR` writes
it; `pipeline.py monitor` reads it (and any other PredictionLog file, e.g. a real server's).

Inputs are the signature's own (contracts/serving.py): IMAGE_BYTES_INPUT for
predict_image_bytes, one input per column for predict_columns, TEXT_INPUT for predict_text,
EXAMPLES_INPUT (serialized records) for serving_default. Each input has the request's batch as
its first dimension. `predict --log` adds the response: PROBABILITIES [1, classes], or a
regression model's PREDICTION [1].
"""

import os
from typing import Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional

import numpy as np

FILE_PREFIX = 'prediction_log'  # DIR/prediction_log-00000-of-00001.tfrecord, …
FILE_SUFFIX = '.tfrecord'
MODEL_NAME = 'tfrecord'  # the model name docs/serving.md serves under


class Request(NamedTuple):
  """One logged request: the signature it asked and its inputs, batch first."""

  signature: str
  inputs: Dict[str, np.ndarray]


def predict_log(
  signature: str,
  inputs: Mapping[str, np.ndarray],
  outputs: Optional[Mapping[str, np.ndarray]] = None,
  model_name: str = MODEL_NAME,
):
  """A PredictionLog holding one PredictRequest (and its PredictResponse when `outputs`)."""
  import tensorflow as tf
  from tensorflow_serving.apis import prediction_log_pb2

  log = prediction_log_pb2.PredictionLog()
  request = log.predict_log.request
  request.model_spec.name = model_name
  request.model_spec.signature_name = signature
  for name, value in inputs.items():
    request.inputs[name].CopyFrom(tf.make_tensor_proto(value))
  for name, value in (outputs or {}).items():
    log.predict_log.response.outputs[name].CopyFrom(tf.make_tensor_proto(value))
  return log


def files(folder: str) -> List[str]:
  """The PredictionLog files `pipeline.py predict --log` wrote into `folder`, sorted
  (FILE_PREFIX…FILE_SUFFIX; each run adds its own, FILE_PREFIX-<time>-NNNNN-of-MMMMM)."""
  import glob

  return sorted(glob.glob(os.path.join(glob.escape(folder), f'{FILE_PREFIX}*{FILE_SUFFIX}')))


def write(path: str, logs: Iterable) -> int:
  """Writes PredictionLogs to the TFRecord file `path` (appearing whole or not at all);
  returns how many."""
  import tensorflow as tf

  temporary = f'{path}.partial'
  count = 0
  try:
    with tf.io.TFRecordWriter(temporary) as writer:
      for log in logs:
        writer.write(log.SerializeToString())
        count += 1
    tf.io.gfile.rename(temporary, path, overwrite=True)
  finally:
    if tf.io.gfile.exists(temporary):
      tf.io.gfile.remove(temporary)
  return count


def read(paths: Iterable[str]) -> Iterator[Request]:
  """Every PredictRequest in the PredictionLog TFRecord files `paths` (logs of other kinds, e.g.
  classify or regress, are skipped)."""
  import tensorflow as tf
  from tensorflow_serving.apis import prediction_log_pb2

  for path in paths:
    for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
      log = prediction_log_pb2.PredictionLog.FromString(record)
      if log.WhichOneof('log_type') != 'predict_log':
        continue
      request = log.predict_log.request
      yield Request(
        request.model_spec.signature_name or 'serving_default',
        {name: tf.make_ndarray(tensor) for name, tensor in request.inputs.items()},
      )
