"""What the project's FileBasedExampleGen subclasses (image_example_gen, text_example_gen) share:
their spec's parameters and arguments, and span pinning."""

from typing import Dict

from tfx.components.example_gen import utils
from tfx.proto import example_gen_pb2, range_config_pb2
from tfx.types import channel, component_spec, standard_artifacts, standard_component_specs


def span_range(span: int):
  """A RangeConfig that pins one span (any ExampleGen), or None (the latest) for 0."""
  if not span:
    return None
  return range_config_pb2.RangeConfig(
    static_range=range_config_pb2.StaticRange(start_span_number=span, end_span_number=span)
  )


def spec_parameters(**extra_types) -> Dict[str, component_spec.ExecutionParameter]:
  """FileBasedExampleGen's parameters, the code fingerprint (contracts/fingerprint.py) and the
  component's own (name=type)."""
  return dict(
    standard_component_specs.FileBasedExampleGenSpec.PARAMETERS,
    code_fingerprint=component_spec.ExecutionParameter(type=str),
    **{name: component_spec.ExecutionParameter(type=kind) for name, kind in extra_types.items()},
  )


def spec_arguments(
  input_base: str, split_name: str, pattern: str, span: int, payload_format: int
) -> dict:
  """The FileBasedExampleGen part of the spec: one input split matched by `pattern` (TFX's
  driver resolves {SPAN}/{VERSION} in it and fingerprints the files)."""
  input_config = example_gen_pb2.Input(
    splits=[example_gen_pb2.Input.Split(name=split_name, pattern=pattern)]
  )
  return dict(
    input_base=input_base,
    input_config=input_config,
    output_config=utils.make_default_output_config(input_config),
    output_data_format=payload_format,
    output_file_format=example_gen_pb2.FORMAT_TFRECORDS_GZIP,
    range_config=span_range(span),
    examples=channel.Channel(type=standard_artifacts.Examples),
  )
