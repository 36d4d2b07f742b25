"""pipeline.py: every file a component reads is in its TFX cache key (an execution property), by
content: a file replaced by another of the same size changes the key of the component that reads
it, and of no other (cli/unchanged.py's state is tested in tests/cli/test_unchanged.py)."""

import json
import os

import pytest

import config as cfg
from contracts.trainer_options import TrainerOptions
import pipeline
from tests.support import files as changed
from utils import data_index


@pytest.fixture
def files(tmp_path):
  (tmp_path / 'data' / 'cats').mkdir(parents=True)
  (tmp_path / 'data' / 'cats' / 'a.png').write_bytes(b'png')
  (tmp_path / 'schema.pbtxt').write_text('feature { name: "image" }')
  (tmp_path / 'w.weights.h5').write_bytes(b'weights-1')
  return tmp_path


def _keys(tmp_path, **fields) -> dict:
  """{component id: what of its execution properties holds file content}."""
  given = dict(
    data=str(tmp_path / 'data'),
    data_kind=cfg.IMAGES,
    output=str(tmp_path / 'out'),
    schema=str(tmp_path / 'schema.pbtxt'),
  )
  trainer = {'model': 'resnet50', 'weights': str(tmp_path / 'w.weights.h5'), **fields}
  config = cfg.PipelineConfig(**given, trainer=TrainerOptions(**trainer))
  keys = {}
  for component in pipeline.create_pipeline(config).components:
    properties = dict(component.exec_properties)
    if component.id == 'Trainer':  # inside its custom_config
      properties = json.loads(properties['custom_config'])
    if properties.get('code_fingerprint'):
      keys[component.id] = properties['code_fingerprint']
  return keys


@pytest.mark.parametrize(
  'name,content,component',
  [
    ('w.weights.h5', b'weights-2', 'Trainer'),
    ('schema.pbtxt', b'feature { name: "label" }', 'ImportSchemaGen'),
  ],
)
def test_a_file_replaced_by_one_of_the_same_size_changes_its_component_s_key(
  files, name, content, component
):
  before = _keys(files)
  changed.replaced(files / name, content)
  after = _keys(files)
  assert {node for node in before if before[node] != after[node]} == {component}
  assert str(files / name) in json.loads(after[component])


def test_data_edited_with_its_size_and_time_set_back_changes_the_example_gen_s_key(
  files, monkeypatch
):
  """TFX's own input fingerprint is size and modification time: `touch -r` would keep it. The
  data's index is read, not written: building the DAG writes nothing (cli/prepare_run.py does)."""
  monkeypatch.setattr(data_index, 'RACY_NS', 0)  # the files would be indexed at once
  (files / 'out').mkdir()
  before = _keys(files)
  changed.replaced(files / 'data' / 'cats' / 'a.png', b'PNG')
  after = _keys(files)
  assert {node for node in before if before[node] != after[node]} == {'ImageExampleGen'}
  assert data_index.DATA_KEY + str(files / 'data') in json.loads(after['ImageExampleGen'])
  assert not os.listdir(files / 'out')


def test_a_model_file_s_project_imports_are_in_the_trainer_s_key(files):
  source = 'from contracts import limits  # nothing of the Trainer imports it\n\ndef build_model(spec, hp):\n  pass\n'
  model = str(files / 'my_model.py')
  (files / 'my_model.py').write_text(source)
  keys = _keys(files, model=model, model_source=source)
  assert {'contracts/limits.py', model} <= set(json.loads(keys['Trainer']))


@pytest.mark.parametrize('stats', ['sample', 'transform'])
def test_tabular_stats_transform_puts_an_analysis_only_transform_before_the_trainer(
  tmp_path, stats
):
  """--tabular-stats transform: TFX's Transform with the project's preprocessing_fn, nothing
  materialized; the Trainer reads the raw examples and the transform graph."""
  (tmp_path / 'rows.csv').write_text('x,y\n' + ''.join(f'{i},{i % 2}\n' for i in range(40)))
  config = cfg.PipelineConfig(
    data=str(tmp_path / 'rows.csv'),
    data_kind=cfg.CSV,
    output=str(tmp_path / 'out'),
    label='y',
    trainer=TrainerOptions(tabular_stats=stats),
  )
  components = {c.id: c for c in pipeline.create_pipeline(config).components}
  trainer = components['Trainer']
  if stats == 'sample':
    assert 'Transform' not in components and 'transform_graph' not in trainer.inputs
    return
  transform = components['Transform']
  assert transform.exec_properties['preprocessing_fn'] == 'trainer.tabular_stats.preprocessing_fn'
  assert 'transformed_examples' not in transform.outputs
  assert json.loads(transform.exec_properties['custom_config'])['label_key'] == 'y'
  assert (
    trainer.inputs['examples'].producer_component_id
    == components['Transform'].inputs['examples'].producer_component_id
  )
  assert trainer.inputs['transform_graph'].producer_component_id == 'Transform'
