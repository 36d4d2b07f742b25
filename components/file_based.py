"""What the project's ExampleGens share: the spec's parameters and arguments of the
FileBasedExampleGen subclasses (image_example_gen, text_example_gen, csv_example_gen, and
StockExampleGen: TFX's own ExampleGens run by the project's executors), and for every ExampleGen
the split (contracts/splits.py) and span pinning."""

import json
import os
from typing import Dict, List, Optional, Sequence

from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.components.util import examples_utils
from tfx.dsl.components.base import base_beam_component, base_beam_executor
from tfx.proto import example_gen_pb2, range_config_pb2
from tfx.types import (
  artifact_utils,
  channel,
  component_spec,
  standard_artifacts,
  standard_component_specs,
)

from components import specs
from contracts import splits


def span_range(span: int):
  """A RangeConfig that pins one span (any ExampleGen), or None (the latest) for 0."""
  if not span:
    return None
  return range_config_pb2.RangeConfig(
    static_range=range_config_pb2.StaticRange(start_span_number=span, end_span_number=span)
  )


def output_config(eval_percent: int) -> example_gen_pb2.Output:
  """The train/eval split as TFX records it (hash buckets in the proportions of eval_percent)."""
  return example_gen_pb2.Output(
    split_config=example_gen_pb2.SplitConfig(
      splits=[
        example_gen_pb2.SplitConfig.Split(name=name, hash_buckets=share)
        for name, share in splits.shares(eval_percent)
      ]
    )
  )


def file_format(gzip: bool) -> int:
  """What the executor writes, as TFX records it: GZIP or plain TFRecords (TFX's FileFormat has
  no value for plain TFRecords: FILE_FORMAT_UNSPECIFIED)."""
  return example_gen_pb2.FORMAT_TFRECORDS_GZIP if gzip else example_gen_pb2.FILE_FORMAT_UNSPECIFIED


def spec_parameters(**extra_types) -> Dict[str, component_spec.ExecutionParameter]:
  """FileBasedExampleGen's parameters, the code fingerprint (utils/fingerprint.py) and the
  component's own (name=type)."""
  return specs.parameters(
    standard_component_specs.FileBasedExampleGenSpec,
    **{name: component_spec.ExecutionParameter(type=kind) for name, kind in extra_types.items()},
  )


def input_files(exec_properties) -> List[str]:
  """Every input split's files, in order (their patterns as TFX's driver resolved them)."""
  from tfx.dsl.io import fileio
  from tfx.utils import proto_utils

  input_config = proto_utils.json_to_proto(
    exec_properties[standard_component_specs.INPUT_CONFIG_KEY], example_gen_pb2.Input()
  )
  base = exec_properties[standard_component_specs.INPUT_BASE_KEY]
  return [
    p for s in input_config.splits for p in sorted(fileio.glob(os.path.join(base, s.pattern)))
  ]


def drop_empty_shards(split_uri: str, empty=None) -> None:
  """Removes a split's empty shard files (a split that holds fewer examples than the size-based
  shard count: a tiny --shard-size-mb, or duplicates grouped into the other split) and numbers
  the rest again. empty: the paths known to be empty (default: those of 0 bytes)."""
  from tfx.dsl.io import fileio

  files = sorted(fileio.glob(os.path.join(split_uri, 'data-*-of-*')))
  is_empty = (
    (lambda path: path in empty)
    if empty is not None
    else (lambda path: fileio.stat(path).length == 0)
  )
  kept = [path for path in files if not is_empty(path)] or files[:1]
  if len(kept) == len(files):
    return
  for path in set(files) - set(kept):
    fileio.remove(path)
  for index, path in enumerate(kept):  # the new -of- count differs: no name is taken twice
    suffix = '.gz' if path.endswith('.gz') else ''
    fileio.rename(path, os.path.join(split_uri, f'data-{index:05d}-of-{len(kept):05d}{suffix}'))


def given_arguments(
  input_base: str,
  input_config: example_gen_pb2.Input,
  output_config: example_gen_pb2.Output,
  range_config,
  gzip: bool,
  payload_format: int = example_gen_pb2.FORMAT_TF_EXAMPLE,
) -> dict:
  """The FileBasedExampleGen part of a spec from the configs TFX's ExampleGens take, and what the
  executor writes: `payload_format` records, GZIP or plain TFRecords (file_format)."""
  return dict(
    input_base=input_base,
    input_config=input_config,
    output_config=output_config,
    output_data_format=payload_format,
    output_file_format=file_format(gzip),
    range_config=range_config,
    examples=channel.Channel(type=standard_artifacts.Examples),
  )


def spec_arguments(
  input_base: str,
  split_name: str,
  pattern: str,
  span: int,
  payload_format: int,
  eval_percent: int,
  gzip: bool,
) -> dict:
  """The FileBasedExampleGen part of the spec: one input split matched by `pattern` (TFX's
  driver resolves {SPAN}/{VERSION} in it and fingerprints the files), and what the executor
  writes: the eval_percent split, GZIP or plain TFRecords (file_format)."""
  return given_arguments(
    input_base,
    example_gen_pb2.Input(splits=[example_gen_pb2.Input.Split(name=split_name, pattern=pattern)]),
    output_config(eval_percent),
    span_range(span),
    gzip,
    payload_format,
  )


class ExampleGenSpec(component_spec.ComponentSpec):
  """The project's ExampleGens' spec: no input, the Examples out; TFX's FileBasedExampleGen
  parameters and the code fingerprint, and a subclass's own (its PARAMETERS: spec_parameters)."""

  PARAMETERS = spec_parameters()
  INPUTS = {}
  OUTPUTS = {'examples': component_spec.ChannelParameter(type=standard_artifacts.Examples)}


class StockExampleGenSpec(ExampleGenSpec):
  """ExampleGenSpec with how duplicates are split (components/grouped_split.py)."""

  PARAMETERS = spec_parameters(label_key=str, label_default=str, id_columns=str, duplicates=str)


class StockExampleGen(FileBasedExampleGen):
  """A TFX ExampleGen (CsvExampleGen, ImportExampleGen) run by a subclass of its executor (live
  progress, components/beam_progress.py): the subclass names it in EXECUTOR_SPEC. GZIP shards, as
  TFX writes them."""

  SPEC_CLASS = StockExampleGenSpec

  def __init__(
    self,
    input_base: str,
    input_config: example_gen_pb2.Input,
    output_config: example_gen_pb2.Output,
    range_config: Optional[range_config_pb2.RangeConfig] = None,
    payload_format: int = example_gen_pb2.FORMAT_TF_EXAMPLE,
    label_key: str = '',
    id_columns: Sequence[str] = (),
    duplicates: str = 'group',
    code_fingerprint: str = '',
    label_default: str = '',
  ):
    """As TFX's ImportExampleGen, plus: label_key and id_columns, left out of a record's content;
    label_default: what a record without a label takes ('': such records stop the run,
    components/label_gaps.py); duplicates: components/duplicates.py MODES; code_fingerprint: the executor's code, for the
    cache key."""
    spec = StockExampleGenSpec(
      **given_arguments(
        input_base, input_config, output_config, range_config, True, payload_format
      ),
      label_key=label_key,
      label_default=label_default,
      id_columns=json.dumps(list(id_columns)),
      duplicates=duplicates,
      code_fingerprint=code_fingerprint,
    )
    # FileBasedExampleGen.__init__ would build TFX's spec, without the fingerprint.
    base_beam_component.BaseBeamComponent.__init__(self, spec=spec)


class ExampleGenExecutor(base_beam_executor.BaseBeamExecutor):
  """The TFX entry of the project's own ExampleGens' executors: `write` fills the one Examples
  artifact; then its payload and file format are recorded as TFX's readers take them."""

  PAYLOAD_FORMAT = example_gen_pb2.FORMAT_TF_EXAMPLE

  def Do(self, input_dict, output_dict, exec_properties) -> None:
    examples = artifact_utils.get_single_instance(output_dict['examples'])
    self.write(examples, exec_properties)
    examples_utils.set_payload_format(examples, self.PAYLOAD_FORMAT)
    examples_utils.set_file_format(examples, 'tfrecords_gzip')  # tfx_bsl reads either, by suffix

  def write(self, examples, exec_properties: Dict[str, object]) -> None:
    raise NotImplementedError
