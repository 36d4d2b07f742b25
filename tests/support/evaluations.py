"""What the Evaluator and ExampleGen leave behind, made by hand for the readers' and the report's
tests: TFMA's metrics and validation files, an eval split (the tiny regression SavedModel that
scores it: tests/support/regression_model.py)."""

import os
from typing import Dict, Sequence, Tuple

import tensorflow as tf


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


def eval_split(examples_uri: str, records: Sequence[bytes]) -> str:
  """Split-eval/ of serialized records (tests/support/regression_model.record) under
  examples_uri, as an ExampleGen writes it; returns examples_uri."""
  folder = os.path.join(examples_uri, 'Split-eval')
  os.makedirs(folder, exist_ok=True)
  with tf.io.TFRecordWriter(os.path.join(folder, 'data_tfrecord-00000-of-00001')) as writer:
    for record in records:
      writer.write(record)
  return examples_uri
