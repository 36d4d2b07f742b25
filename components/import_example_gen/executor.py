"""TFX's ImportExampleGen executor (TFRecord input) with live progress: `ImportExampleGen: D of T
records imported, R/s`, counted after TFX's InputToRecord step (components/beam_progress.py) of
the records tf.data counts in the input files first (GZIP by their .gz name, as TFX reads them)."""

import os

from tfx.components.example_gen.import_example_gen import executor as import_executor
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import standard_component_specs
from tfx.utils import proto_utils

from components import beam_progress
from contracts import artifacts


def input_files(exec_properties) -> list:
  """Every input split's files (their patterns resolved by TFX's driver)."""
  input_config = proto_utils.json_to_proto(
    exec_properties[standard_component_specs.INPUT_CONFIG_KEY], example_gen_pb2.Input()
  )
  base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
  return [
    p for s in input_config.splits for p in sorted(fileio.glob(os.path.join(base, s.pattern)))
  ]


class Executor(beam_progress.CountedBeamExecutor, import_executor.Executor):
  COUNTED_STEPS = ('InputToRecord',)  # TFX's step (per input split): one record each

  def Do(self, input_dict, output_dict, exec_properties):
    records = lambda: artifacts.record_count(input_files(exec_properties))
    with beam_progress.watch(self, 'ImportExampleGen', records, 'records imported'):
      super().Do(input_dict, output_dict, exec_properties)
