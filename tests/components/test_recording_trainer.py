"""RecordingTrainer's executor: a real (short) training run on a damaged split."""

import json
import os

import pytest
from tfx.types import standard_artifacts

from components.recording_trainer import executor
from contracts import artifacts, image_record
from records import damage as damage_module
from tests.support import shards


def _artifact(kind, uri):
  artifact = kind()
  artifact.uri = str(uri)
  return artifact


def test_damage_in_the_training_data_is_recorded_on_the_model(tmp_path):
  records = shards.digit_records(200)
  examples = _artifact(standard_artifacts.Examples, tmp_path / 'examples')
  examples.split_names = json.dumps(['train', 'eval'])
  examples.set_string_custom_property('split_counts', json.dumps({'train': 200, 'eval': 50}))
  for split in ('train', 'eval'):
    os.makedirs(tmp_path / 'examples' / f'Split-{split}')
  train = shards.write_shard(
    str(tmp_path / 'examples' / 'Split-train' / 'data-00000-of-00001'), records
  )
  shards.write_shard(
    str(tmp_path / 'examples' / 'Split-eval' / 'data-00000-of-00001'), records[:50]
  )
  start = shards.record_offset(open(train, 'rb').read(), shards.DAMAGED_INDEX)
  shards.damage(train, start + 25)
  (tmp_path / 'examples' / artifacts.IMAGE_META_FILE).write_text(
    json.dumps(
      {
        'most_common_size': [16, 16],
        'uniform_size': False,
        'channels_seen': [1],
        'labels': [str(i) for i in range(10)],
        'encoding': image_record.ENCODED,
      }
    )
  )
  model = _artifact(standard_artifacts.Model, tmp_path / 'model')
  model_run = _artifact(standard_artifacts.ModelRun, tmp_path / 'model_run')
  schema = _artifact(standard_artifacts.Schema, tmp_path / 'schema')
  os.makedirs(tmp_path / 'schema')
  (tmp_path / 'schema' / 'schema.pbtxt').write_text('')  # image runs do not read it

  properties = {
    'run_fn': 'trainer.task.run_fn',
    'train_args': json.dumps({'num_steps': 20}),
    'eval_args': json.dumps({'num_steps': 2}),
    'custom_config': json.dumps({'data_kind': 'image', 'batch_size': 16}),
  }
  inputs = {'examples': [examples], 'schema': [schema]}
  executor.Executor().Do(inputs, {'model': [model], 'model_run': [model_run]}, properties)

  assert model.get_int_custom_property('input_corrupt_records') == 1
  assert model.get_int_custom_property('input_damaged_shards') == 1
  assert model.get_int_custom_property('input_lost_bytes') == 16 + len(
    records[shards.DAMAGED_INDEX]
  )
  assert abs(model.get_float_custom_property('input_lost_fraction') - 1 / 250) < 1e-9
  with open(tmp_path / 'model_run' / artifacts.DAMAGE_FILE) as f:
    damage = json.load(f)
  assert damage['good'] == 249 and [d['path'] for d in damage['damaged']] == [train]
  assert damage['read'] == {'train': 199, 'eval': 50} and damage['missing'] == 1
  assert model.get_int_custom_property('input_missing_records') == 1
  assert os.path.isfile(tmp_path / 'model' / 'Format-Serving' / 'saved_model.pb')
  assert os.listdir(tmp_path / 'model_run' / 'input_damage')  # TensorBoard scalars

  # The train shard cut inside its 41st record: 39 intact (one corrupt before), 161 of the 250
  # recorded missing. No ShardCheck ran (in a run it may come from the cache, from before the
  # damage): the Trainer itself stops before training.
  with open(train, 'rb') as f:
    data = f.read()
  with open(train, 'wb') as f:
    f.write(data[: shards.record_offset(data, 40) + 5])
  again = _artifact(standard_artifacts.Model, tmp_path / 'model-2')
  with pytest.raises(damage_module.DamagedShards, match=r'161 of 250 recorded records missing'):
    executor.Executor().Do(
      inputs,
      {'model': [again], 'model_run': [_artifact(standard_artifacts.ModelRun, tmp_path / 'r2')]},
      properties,
    )
  assert not os.path.exists(tmp_path / 'model-2' / 'Format-Serving')


def test_parameters_fold_into_train_args_and_custom_config():
  folded = executor.with_parameters(
    {
      'train_args': json.dumps({'num_steps': 600}),
      'custom_config': json.dumps({'learning_rate': 0.001, 'batch_size': 64}),
      'train_steps': 150,
      'learning_rate': 0.01,
    }
  )
  assert json.loads(folded['train_args']) == {'num_steps': 150}
  assert json.loads(folded['custom_config']) == {'learning_rate': 0.01, 'batch_size': 64}


def test_component_records_the_defaults_and_takes_parameters():
  from tfx.orchestration.data_types import RuntimeParameter
  from tfx.types.channel import Channel

  from components.recording_trainer.component import RecordingTrainer

  steps = RuntimeParameter(name='train_steps', ptype=int, default=321)
  trainer = RecordingTrainer(
    run_fn='trainer.task.run_fn',
    examples=Channel(type=standard_artifacts.Examples),
    schema=Channel(type=standard_artifacts.Schema),
    train_steps=steps,
    learning_rate=0.5,
    eval_steps=None,
    custom_config={'batch_size': 8},
  )
  properties = trainer.exec_properties
  assert properties['train_steps'] is steps and properties['learning_rate'] == 0.5
  assert json.loads(properties['train_args']) == {'num_steps': 321}
  assert json.loads(properties['custom_config']) == {'batch_size': 8, 'learning_rate': 0.5}


def test_a_module_files_raw_examples_reach_run_fn_as_file_patterns(tmp_path):
  """After Transform, the raw Examples' splits go to run_fn in custom_config (the leakage rules
  judge their columns: trainer/module_file.check_leakage)."""
  from contracts import trainer_options

  raw = standard_artifacts.Examples()
  raw.uri = str(tmp_path / 'raw')
  raw.split_names = '["train", "eval"]'
  folded = executor.with_parameters(
    {'custom_config': json.dumps({'label_key': 'tips'})}, {executor.RAW_EXAMPLES_KEY: [raw]}
  )
  found = json.loads(folded['custom_config'])[trainer_options.RAW_SPLITS_KEY]
  assert found == {
    'train': [str(tmp_path / 'raw' / 'Split-train' / '*')],
    'eval': [str(tmp_path / 'raw' / 'Split-eval' / '*')],
  }
