"""LabelCheck: between the schema and the Trainer, for CSV and TFRecord data."""

import os

from tensorflow_metadata.proto.v0 import schema_pb2
from tfx import v1 as tfx
from tfx.utils import io_utils

from components.label_check import executor


@tfx.dsl.components.component
def LabelCheck(
  schema: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Schema],
  label: tfx.dsl.components.Parameter[str],
  code_fingerprint: tfx.dsl.components.Parameter[str] = '',
) -> None:
  """Raises executor.LabelMissing when `label` is not a (context) feature of the schema
  (code_fingerprint: only for the cache key, contracts/fingerprint.py)."""
  executor.check(
    io_utils.parse_pbtxt_file(os.path.join(schema.uri, 'schema.pbtxt'), schema_pb2.Schema()), label
  )
