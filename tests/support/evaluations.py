"""What the Evaluator and the Trainer leave behind, made by hand for the readers' and the report's
tests: TFMA's metrics and validation files, a tiny regression SavedModel, eval records."""

import os
from typing import Dict, Sequence, Tuple

import tensorflow as tf

from contracts import serving

# The tiny regression model: prediction = SLOPE * x + INTERCEPT, scored against y.
FEATURE, LABEL, SLOPE, INTERCEPT = 'x', 'y', 2.0, 1.0


def write_metrics(
  folder: str,
  overall: Dict[Tuple[str, str, bool], float],
  slices: Dict[Tuple[str, str], Dict[str, float]] = None,
) -> str:
  """TFMA's metrics file in `folder` (as tfma.load_metrics reads it): overall {(model name, metric
  name, is_diff): value} on the whole eval split, slices {(column, value): {metric: value}} of
  the candidate."""
  from tensorflow_model_analysis.proto import metrics_for_slice_pb2

  protos = [metrics_for_slice_pb2.MetricsForSlice()]
  for (model, name, is_diff), value in overall.items():
    entry = protos[0].metric_keys_and_values.add()
    entry.key.name, entry.key.model_name, entry.key.is_diff = name, model, is_diff
    entry.value.double_value.value = value
  for (column, value), figures in (slices or {}).items():
    proto = metrics_for_slice_pb2.MetricsForSlice()
    proto.slice_key.single_slice_keys.add(column=column, bytes_value=value.encode())
    for name, figure in figures.items():
      entry = proto.metric_keys_and_values.add()
      entry.key.name, entry.key.model_name = name, 'candidate'
      entry.value.double_value.value = figure
    protos.append(proto)
  os.makedirs(folder, exist_ok=True)
  with tf.io.TFRecordWriter(os.path.join(folder, 'metrics-00000-of-00001.tfrecord')) as writer:
    for proto in protos:
      writer.write(proto.SerializeToString())
  return folder


def write_validation(folder: str, failures: Sequence[str]) -> str:
  """TFMA's validation result in `folder`: each failure a MetricThreshold-bearing
  ValidationFailure in text format ('metric_key {…} metric_threshold {…} metric_value {…}')."""
  from google.protobuf import text_format
  from tensorflow_model_analysis.proto import validation_result_pb2

  result = validation_result_pb2.ValidationResult(validation_ok=not failures)
  if failures:
    per_slice = result.metric_validations_per_slice.add()
    for failure in failures:
      text_format.Parse(failure, per_slice.failures.add())
  os.makedirs(folder, exist_ok=True)
  with tf.io.TFRecordWriter(os.path.join(folder, 'validations.tfrecord')) as writer:
    writer.write(result.SerializeToString())
  return folder


def eval_records(examples_uri: str, rows: Sequence[Tuple[float, float]]) -> str:
  """Split-eval/data.tfrecord of tf.Examples {FEATURE: x, LABEL: y} under examples_uri."""
  folder = os.path.join(examples_uri, 'Split-eval')
  os.makedirs(folder, exist_ok=True)
  with tf.io.TFRecordWriter(os.path.join(folder, 'data_tfrecord-00000-of-00001')) as writer:
    for x, y in rows:
      example = tf.train.Example()
      example.features.feature[FEATURE].float_list.value.append(x)
      example.features.feature[LABEL].float_list.value.append(y)
      writer.write(example.SerializeToString())
  return examples_uri


def regression_model(model_dir: str) -> str:
  """A SavedModel with a regression model's signatures (contracts/serving.py): serving_default
  → {PREDICTION: SLOPE * x + INTERCEPT}, TRANSFORM → {EVAL_LABEL_KEY: y}, assets/task.txt."""
  spec = {
    FEATURE: tf.io.FixedLenFeature([], tf.float32),
    LABEL: tf.io.FixedLenFeature([], tf.float32),
  }
  examples = tf.TensorSpec([None], tf.string)

  @tf.function(input_signature=[examples])
  def predict(examples):
    parsed = tf.io.parse_example(examples, spec)
    return {serving.PREDICTION: SLOPE * parsed[FEATURE] + INTERCEPT}

  @tf.function(input_signature=[examples])
  def transform(examples):
    return {serving.EVAL_LABEL_KEY: tf.io.parse_example(examples, spec)[LABEL]}

  tf.saved_model.save(
    tf.Module(),
    model_dir,
    signatures={serving.SERVING_DEFAULT: predict, serving.TRANSFORM: transform},
  )
  os.makedirs(os.path.join(model_dir, 'assets'), exist_ok=True)
  with open(os.path.join(model_dir, 'assets', serving.TASK_ASSET), 'w') as f:
    f.write('regression\n')
  return model_dir
