"""TFX's BulkInferrer executor with live progress: `BulkInferrer: D of T examples inferred, R/s`,
counted after TFX's RunInference step of each split (components/beam_progress.py) of the
records of the splits its DataSpec selects (all of them when it names none)."""

import os

from tfx.components.bulk_inferrer import executor as bulk_inferrer_executor
from tfx.dsl.io import fileio
from tfx.proto import bulk_inferrer_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components import beam_progress
from contracts import artifacts


def inferred_files(input_dict, exec_properties) -> list:
  """The shard files of the splits BulkInferrer reads."""
  examples = input_dict[standard_component_specs.EXAMPLES_KEY]
  data_spec = proto_utils.json_to_proto(
    exec_properties[standard_component_specs.DATA_SPEC_KEY], bulk_inferrer_pb2.DataSpec()
  )
  names = artifact_utils.decode_split_names(
    artifact_utils.get_single_instance(examples).split_names
  )
  chosen = [
    split for split in names if not data_spec.example_splits or split in data_spec.example_splits
  ]
  uris = [artifact_utils.get_split_uri(examples, split) for split in chosen]
  return sorted(path for uri in uris for path in fileio.glob(os.path.join(uri, '*')))


class Executor(beam_progress.CountedBeamExecutor, bulk_inferrer_executor.Executor):
  COUNTED_STEPS = ('RunInference',)  # TFX's step per split: one PredictionLog per example

  def Do(self, input_dict, output_dict, exec_properties):
    records = lambda: artifacts.record_count(inferred_files(input_dict, exec_properties))
    with beam_progress.watch(
      self, 'BulkInferrer', records, 'examples inferred', outputs=output_dict
    ):
      super().Do(input_dict, output_dict, exec_properties)
