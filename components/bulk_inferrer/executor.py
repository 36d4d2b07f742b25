"""TFX's BulkInferrer executor with live progress: `BulkInferrer: D of T examples inferred, R/s`,
counted after TFX's RunInference step of each split (components/beam_progress.py) of the
records of the splits its DataSpec selects (all of them when it names none).

Before it, the shards it reads are judged against the records the ExampleGen recorded and read
through intact copies where damaged (components/read_examples.py)."""

import os
import shutil
import tempfile

from tfx.components.bulk_inferrer import executor as bulk_inferrer_executor
from tfx.dsl.io import fileio
from tfx.proto import bulk_inferrer_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components import beam_progress, read_examples
from contracts import artifacts
from utils import saved_model_ops


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


def readable_examples(input_dict, exec_properties, scratch: str) -> dict:
  """input_dict with its examples as read_examples.readable reads them."""
  examples = artifact_utils.get_single_instance(input_dict[standard_component_specs.EXAMPLES_KEY])
  files = inferred_files(input_dict, exec_properties)
  limit = exec_properties.get('max_damaged_percent')
  read = read_examples.readable(examples, files, limit, scratch, 'inference stopped')
  return dict(input_dict, **{standard_component_specs.EXAMPLES_KEY: [read]})


class Executor(beam_progress.CountedBeamExecutor, bulk_inferrer_executor.Executor):
  COUNTED_STEPS = ('RunInference',)  # TFX's step per split: one PredictionLog per example

  def Do(self, input_dict, output_dict, exec_properties):
    # tfx-bsl loads the model here (in_memory) or in Beam's workers
    self._beam_pipeline_args = saved_model_ops.with_beam_args(self._beam_pipeline_args)
    scratch = tempfile.mkdtemp(prefix='bulk-inferrer-salvaged-')
    try:
      readable = readable_examples(input_dict, exec_properties, scratch)
      records = lambda: artifacts.record_count(inferred_files(readable, exec_properties))
      with beam_progress.watch(
        self, 'BulkInferrer', records, 'examples inferred', outputs=output_dict
      ):
        super().Do(readable, output_dict, exec_properties)
    finally:
      shutil.rmtree(scratch, ignore_errors=True)
