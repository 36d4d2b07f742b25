"""cli/unchanged.py: a run whose data, code, options, store and serving model are the last
finished run's is answered with that run's summary; any change sends it through TFX."""

import dataclasses
import json
import os
import time

import pytest

from cli import unchanged
import config as cfg


@pytest.fixture
def finished(tmp_path):
  """A config, and the state and summary a finished run of it left."""
  data = tmp_path / 'data'
  (data / 'cats').mkdir(parents=True)
  (data / 'cats' / 'a.png').write_bytes(b'png')
  config = cfg.PipelineConfig(data=str(data), data_kind=cfg.IMAGES, output=str(tmp_path / 'out'))
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


@pytest.mark.parametrize(
  'change',
  [
    lambda c: (_touched(os.path.join(c.data, 'cats', 'a.png')), c)[1],  # a data file saved again
    lambda c: (open(os.path.join(c.data, 'cats', 'b.png'), 'wb').close(), c)[1],  # one more
    lambda c: (_touched(c.metadata_path), c)[1],  # another command wrote to the store
    lambda c: (os.makedirs(os.path.join(c.serving_dir, '2')), c)[1],  # another model serves
    lambda c: dataclasses.replace(c, train_steps=c.train_steps + 1),  # an option
    lambda c: dataclasses.replace(c, model_source=c.model_source + '# edited\n'),  # the model
    lambda c: dataclasses.replace(c, enable_cache=False),  # --no-cache
  ],
)
def test_any_change_sends_the_run_through_tfx(finished, change):
  assert unchanged.previous_result(change(finished)) is None


def test_a_run_that_failed_or_was_forgotten_is_not_taken(finished):
  with open(os.path.join(finished.local_dir, unchanged.SUMMARY_FILE), 'w') as f:
    json.dump({'run_id': 'run-2', 'error': 'Trainer failed'}, f)
  assert unchanged.previous_result(finished) is None
  unchanged.forget(finished)
  assert not os.path.exists(os.path.join(finished.local_dir, unchanged.STATE_FILE))


def test_the_project_s_code_is_part_of_the_state(finished, monkeypatch):
  monkeypatch.setattr(unchanged, '_code_digest', lambda: 'another checkout')
  assert unchanged.previous_result(finished) is None
