"""Running an ExampleGen executor in this process, as TFX's launcher would (in_memory Beam)."""

from tfx.dsl.components.base import base_beam_executor
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifacts
from tfx.utils import proto_utils

from components import file_based
import config as cfg


def run_executor(
  executor_class, input_base, out, splits=(('single_split', '*.csv'),), eval_percent=20, **more
):
  """Runs an executor in this process; returns its Examples artifact. more: exec properties."""
  examples = standard_artifacts.Examples()
  examples.uri = str(out)
  context = base_beam_executor.BaseBeamExecutor.Context(
    tmp_dir=f'{out}.tmp',
    unique_id='1',
    beam_pipeline_args=['--direct_running_mode=in_memory', cfg.LOCAL_ENVIRONMENT],
  )
  input_config = example_gen_pb2.Input(
    splits=[example_gen_pb2.Input.Split(name=name, pattern=pattern) for name, pattern in splits]
  )
  output_config = file_based.output_config(eval_percent) if len(splits) == 1 else None
  properties = {
    'input_base': str(input_base),
    'input_config': proto_utils.proto_to_json(input_config),
    'output_config': proto_utils.proto_to_json(output_config or example_gen_pb2.Output()),
    'output_data_format': example_gen_pb2.FORMAT_TF_EXAMPLE,
    'output_file_format': example_gen_pb2.FORMAT_TFRECORDS_GZIP,
    **more,
  }
  executor_class(context).Do({}, {'examples': [examples]}, properties)
  return examples
