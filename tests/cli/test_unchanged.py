"""cli/unchanged.py: a run whose data, code, options, store and serving model are the last
finished run's is answered with that run's summary; any change sends it through TFX."""

import dataclasses
import json
import os
import time

import pytest

from cli import unchanged
import config as cfg
from contracts.trainer_options import TrainerOptions
from tests.support import files
from utils import data_index


@pytest.fixture
def finished(tmp_path):
  """A config (with unlabeled data, a curated schema and a weights file), and the state and
  summary a finished run of it left."""
  data = tmp_path / 'data'
  (data / 'cats').mkdir(parents=True)
  (data / 'cats' / 'a.png').write_bytes(b'png')
  (tmp_path / 'new').mkdir()
  (tmp_path / 'new' / 'b.png').write_bytes(b'png')
  (tmp_path / 'schema.pbtxt').write_text('feature { name: "image" }')
  (tmp_path / 'w.weights.h5').write_bytes(b'weights-1')
  config = cfg.PipelineConfig(
    data=str(data),
    data_kind=cfg.IMAGES,
    output=str(tmp_path / 'out'),
    infer_data=str(tmp_path / 'new'),
    schema=str(tmp_path / 'schema.pbtxt'),
    trainer=TrainerOptions(model='resnet50', weights=str(tmp_path / 'w.weights.h5')),
  )
  os.makedirs(config.output)
  with open(config.metadata_path, 'w') as f:
    f.write('store')
  with open(os.path.join(config.local_dir, unchanged.SUMMARY_FILE), 'w') as f:
    json.dump({'run_id': 'run-1', 'blessed': True}, f)
  unchanged.record(config)
  return config


def test_nothing_changed_answers_with_the_last_summary(finished):
  assert unchanged.previous_result(finished) == {'run_id': 'run-1', 'blessed': True}


def _touched(path: str) -> None:
  later = time.time() + 10
  os.utime(path, (later, later))


def _trainer(config: cfg.PipelineConfig, **options) -> cfg.PipelineConfig:
  return dataclasses.replace(config, trainer=dataclasses.replace(config.trainer, **options))


# Each input of the nothing-changed state (docs/design/running.md) and a change to it.
CHANGES = {
  'config': lambda c: dataclasses.replace(c, train_steps=c.train_steps + 1),  # an option
  'config (model file)': lambda c: _trainer(c, model_source='# edited\n'),
  'config (--no-cache)': lambda c: dataclasses.replace(c, enable_cache=False),
  'data': lambda c: (files.replaced(os.path.join(c.data, 'cats', 'a.png'), b'PNG'), c)[1],
  'data (one more)': lambda c: (open(os.path.join(c.data, 'cats', 'b.png'), 'wb').close(), c)[1],
  'infer_data': lambda c: (files.replaced(os.path.join(c.infer_data, 'b.png'), b'PNG'), c)[1],
  'files (schema)': lambda c: (files.replaced(c.schema, b'feature { name: "label" }'), c)[1],
  'files (weights)': lambda c: (files.replaced(c.trainer.weights, b'weights-2'), c)[1],
  'store': lambda c: (_touched(c.metadata_path), c)[1],  # another command wrote to the store
  'serving': lambda c: (os.makedirs(os.path.join(c.serving_dir, '2')), c)[1],  # another model
}


@pytest.mark.parametrize('change', list(CHANGES.values()), ids=list(CHANGES))
def test_any_change_sends_the_run_through_tfx(finished, change):
  assert unchanged.previous_result(change(finished)) is None


def test_labels_flipped_in_place_with_size_and_time_set_back_are_seen(finished, monkeypatch):
  """`touch -r`: the same size and modification time; the change time and content differ."""
  monkeypatch.setattr(data_index, 'RACY_NS', 0)  # the files were just written: indexed anyway
  rows = os.path.join(finished.data, 'cats', 'rows.csv')
  with open(rows, 'w') as f:
    f.write('x,label\n1,0\n2,1\n')
  unchanged.record(finished)  # the index now knows every file by its stat fields
  assert unchanged.previous_result(finished) is not None
  time.sleep(0.05)  # past the file system's clock tick: the edit gets a new change time
  files.replaced(rows, b'x,label\n1,1\n2,0\n')
  assert unchanged.previous_result(finished) is None


def test_data_saved_again_with_the_same_content_is_unchanged(finished):
  _touched(os.path.join(finished.data, 'cats', 'a.png'))
  assert unchanged.previous_result(finished) == {'run_id': 'run-1', 'blessed': True}


def test_every_input_of_the_state_has_a_change_tested(finished, monkeypatch):
  tested = {name.split(' ')[0] for name in CHANGES} | {'code'}  # code: the test below
  assert set(unchanged.current(finished)) == tested
  assert (
    set(unchanged.current(finished)['files'])
    == set(finished.input_files)
    == {
      'schema',
      'weights',
    }
  )


def test_an_option_naming_a_file_in_object_storage_never_takes_this_path(finished):
  remote = _trainer(finished, weights='s3://bucket/w.weights.h5')
  assert unchanged.current(remote) is None


def test_a_run_that_failed_or_was_forgotten_is_not_taken(finished):
  with open(os.path.join(finished.local_dir, unchanged.SUMMARY_FILE), 'w') as f:
    json.dump({'run_id': 'run-2', 'error': 'Trainer failed'}, f)
  assert unchanged.previous_result(finished) is None
  unchanged.forget(finished)
  assert not os.path.exists(os.path.join(finished.local_dir, unchanged.STATE_FILE))


def test_the_project_s_code_is_part_of_the_state(finished, monkeypatch):
  monkeypatch.setattr(unchanged, 'code_digest', lambda: 'another checkout')
  assert unchanged.previous_result(finished) is None


def test_a_csv_s_data_is_the_file_its_pattern_names_not_its_folder(tmp_path):
  """A CSV's folder is handed to the ExampleGen with the file's name as the pattern: other files
  there (here the output folder itself) are not its data."""
  (tmp_path / 'rows.csv').write_text('x,label\n1,0\n')
  config = cfg.PipelineConfig(
    data=str(tmp_path), data_pattern='rows.csv', data_kind=cfg.CSV, output=str(tmp_path / 'out')
  )
  os.makedirs(config.output)
  with open(os.path.join(config.local_dir, unchanged.SUMMARY_FILE), 'w') as f:
    json.dump({'run_id': 'run-1'}, f)
  unchanged.record(config)
  (tmp_path / 'notes.txt').write_text('not data')
  assert unchanged.previous_result(config) == {'run_id': 'run-1'}
  (tmp_path / 'rows.csv').write_text('x,label\n1,1\n')
  assert unchanged.previous_result(config) is None
