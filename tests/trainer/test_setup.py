"""trainer/setup.py: the batch is capped by the train split the guard counted."""

import tensorflow as tf

from metadata import summary_text
from metadata.run_result import RunResult
from trainer import setup, shards


def _write_shards(folder, *counts):
  paths = []
  for i, count in enumerate(counts):
    paths.append(str(folder / f'data-{i:05d}-of-{len(counts):05d}'))
    with tf.io.TFRecordWriter(paths[-1]) as writer:
      for _ in range(count):
        writer.write(b'record')
  return paths


def test_a_batch_bigger_than_the_train_split_is_capped_and_said(tmp_path):
  train = _write_shards(tmp_path, 20, 9)
  guard = shards.ShardGuard(str(tmp_path / 'salvage'))
  assert setup._capped_batch(100000, guard, train) == (
    29,
    {'asked': 100000, 'train_examples': 29},
  )
  assert setup._capped_batch(29, guard, train) == (29, None)
  assert setup._capped_batch(8, guard, train) == (8, None)
  shown = summary_text.render(
    RunResult(batch_capped={'asked': 100000, 'train_examples': 29}, wall_seconds=1.0)
  )
  assert (
    'batch:      29, the whole train split (--batch-size 100000 is more than it holds)' in shown
  )
