"""components/read_examples.py: an Examples artifact judged against its recorded counts, read
around damage; the Evaluator's eval split through it."""

import json
import os

import pytest
from tfx.types import standard_artifacts

from components import read_examples
from components.blessing_evaluator import executor as evaluator
from records import damage
from tests.support import shards


def _eval_examples(tmp_path, records, cut_at=None):
  """A Split-eval shard of `records`, cut inside record `cut_at` (None: whole)."""
  examples = standard_artifacts.Examples()
  examples.uri = str(tmp_path / 'examples')
  examples.split_names = json.dumps(['train', 'eval'])
  examples.set_string_custom_property('split_counts', json.dumps({'eval': len(records)}))
  os.makedirs(tmp_path / 'examples' / 'Split-eval')
  path = shards.write_shard(
    str(tmp_path / 'examples' / 'Split-eval' / 'data-00000-of-00001'), records
  )
  if cut_at is not None:
    with open(path, 'rb') as f:
      data = f.read()
    with open(path, 'wb') as f:
      f.write(data[: shards.record_offset(data, cut_at) + 5])
  return examples


def test_the_evaluators_eval_split_is_judged_by_the_recorded_count_and_read_around(tmp_path):
  records = shards.digit_records(50)
  examples = _eval_examples(tmp_path, records, cut_at=45)
  files = evaluator.eval_files({'examples': [examples]})
  with pytest.raises(damage.DamagedShards, match=r'5 of 50 recorded records missing.*evaluation'):
    read_examples.readable(examples, files, 1.0, str(tmp_path / 'scratch'), 'evaluation stopped')
  read = read_examples.readable(examples, files, 20.0, str(tmp_path / 'scratch'), 'stopped')
  assert read.uri == str(tmp_path / 'scratch') and read.split_names == examples.split_names
  (copy,) = evaluator.eval_files({'examples': [read]})
  assert shards.read_all(copy) == records[:45]


def test_intact_examples_are_read_as_they_are(tmp_path):
  examples = _eval_examples(tmp_path, shards.digit_records(20))
  files = evaluator.eval_files({'examples': [examples]})
  assert read_examples.readable(examples, files, None, str(tmp_path / 's'), 'x') is examples
