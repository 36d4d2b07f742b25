"""LabelCheck: between the schema and the Trainer, for CSV and TFRecord data."""

import logging
import os

import tensorflow_data_validation as tfdv
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.dsl.component.experimental.annotations import InputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts
from tfx.utils import io_utils

from components.label_check import executor
from contracts import artifacts, splits


@component
def LabelCheck(
  schema: InputArtifact[standard_artifacts.Schema],
  statistics: InputArtifact[standard_artifacts.ExampleStatistics],
  label: Parameter[str],
  label_default: Parameter[str] = '',
  label_threshold: Parameter[float] = None,
  task: Parameter[str] = 'classification',
  code_fingerprint: Parameter[str] = '',
) -> None:
  """Raises executor.LabelMissing when `label` is not a (context) feature of the schema, and
  UnusableData when the train split's label values cannot train the model of `task`
  (classification or regression; label_threshold: --label-threshold, None when not given;
  code_fingerprint: only for the cache key,
  utils/fingerprint.py)."""
  executor.check(
    io_utils.parse_pbtxt_file(os.path.join(schema.uri, 'schema.pbtxt'), schema_pb2.Schema()), label
  )
  train = tfdv.load_stats_binary(artifacts.statistics_path(statistics.uri, splits.TRAIN))
  defaulted = executor.check_values(train.datasets[0], label, label_threshold, label_default, task)
  if defaulted:
    logging.info(
      "LabelCheck: %d train examples without a '%s' value train as %r (--label-default)",
      defaulted,
      label,
      label_default,
    )
