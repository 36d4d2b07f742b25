"""`compile` builds the very pipeline `run` builds from the same flags, for every data kind."""

import json
import os
import shutil

import pytest
from tfx.orchestration.data_types import RuntimeParameter

from cli import compile as compile_command
from cli import config_builder
from cli import main as cli_main
import config as cfg
import pipeline
from tests.support.tfx_data import PENGUIN_TRAIN, SEQUENCE_TESTDATA, TAXI_CSV
from utils import data_index

FLAGS = [
  '--train-steps',
  '321',
  '--eval-steps',
  '7',
  '--batch-size',
  '16',
  '--learning-rate',
  '0.01',
  '--eval-percent',
  '30',
  '--min-accuracy',
  '0.5',
  '--max-accuracy-drop',
  '0.02',
  '--max-damaged-percent',
  '2',
  '--augment',
  '--image-size',
  '16',
  '12',
  '--image-channels',
  '3',
  '--shard-size-mb',
  '3',
  '--encoding',
  'raw',
  '--compression',
  'gzip',
  '--no-cache',
]


def _data(kind, tmp_path, digits_subset):
  if kind == cfg.IMAGES:
    return digits_subset, []
  if kind == cfg.CSV:
    return TAXI_CSV, ['--label', 'tips', '--label-threshold', '0']
  if kind == cfg.TFRECORDS:
    shutil.copy(PENGUIN_TRAIN, tmp_path / 'penguins.tfrecord.gz')
    return str(tmp_path / 'penguins.tfrecord.gz'), ['--label', 'species']
  if kind == cfg.TEXT:
    rows = ''.join(f'{i % 2},"word{i} and some more words here"\n' for i in range(20))
    (tmp_path / 'reviews.csv').write_text('label,review\n' + rows)
    return str(tmp_path / 'reviews.csv'), []
  return os.path.join(SEQUENCE_TESTDATA, os.listdir(SEQUENCE_TESTDATA)[0]), ['--label', 'i']


def _properties(built):
  """{component id: exec properties}, a pipeline parameter as its default."""
  return {
    component.id: {
      key: value.default if isinstance(value, RuntimeParameter) else value
      for key, value in component.exec_properties.items()
    }
    for component in built.components
  }


@pytest.mark.parametrize('kind', [cfg.IMAGES, cfg.CSV, cfg.TFRECORDS, cfg.TEXT, cfg.SEQUENCES])
def test_compiled_components_are_configured_as_the_local_run_s(kind, tmp_path, digits_subset):
  data, extra = _data(kind, tmp_path, digits_subset)
  parser = cli_main.parser()
  local = config_builder.build_config(
    parser.parse_args(['run', '--data', data, '--output', str(tmp_path / 'out'), *FLAGS, *extra])
  )
  assert local.data_kind == kind
  schema = ['--schema', local.schema] if local.schema else []
  text = ['--text-column', local.text_column] if local.text_column else []
  compiled = compile_command.compile_config(
    parser.parse_args(
      [
        'compile',
        '--pipeline-root',
        str(tmp_path / 'out' / 'pipeline_root'),
        '--data',
        local.data,
        '--data-kind',
        kind,
        '--data-pattern',
        local.data_pattern,
        *FLAGS,
        *extra,
        *schema,
        *text,
      ]
    )
  )
  run_side = _properties(pipeline.create_pipeline(local))
  compiled_pipeline = pipeline.create_pipeline(compiled, parameters=True)
  compile_side = _properties(compiled_pipeline)
  assert run_side.keys() == compile_side.keys()
  with_data = []
  for component, properties in run_side.items():
    if component == 'Pusher':  # the serving folder: <output>/serving locally, the root's remotely
      properties.pop('push_destination')
      compile_side[component].pop('push_destination')
    # The local data's content, in the ExampleGen's key: a compiled spec's data is a parameter.
    digests = json.loads(properties.get('code_fingerprint') or '{}')
    if any(key.startswith(data_index.DATA_KEY) for key in digests):
      with_data.append(component)
      code = {k: v for k, v in digests.items() if not k.startswith(data_index.DATA_KEY)}
      properties['code_fingerprint'] = json.dumps(code, sort_keys=True, separators=(',', ':'))
    assert properties == compile_side[component], component
  assert with_data == [name for name in run_side if name.endswith('ExampleGen')]
  parameters = {
    value.name
    for component in compiled_pipeline.components
    for value in component.exec_properties.values()
    if isinstance(value, RuntimeParameter)
  }
  assert parameters == set(pipeline.PARAMETERS)
