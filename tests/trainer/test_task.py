"""trainer/task.py: the batch is capped by the train split the guard counted; a Ctrl-C that Keras
swallowed still stops training."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from contracts import interrupt
from metadata import summary
from trainer import input_pipeline, task


def _shards(folder, *counts):
  paths = []
  for i, count in enumerate(counts):
    paths.append(str(folder / f'data-{i:05d}-of-{len(counts):05d}'))
    with tf.io.TFRecordWriter(paths[-1]) as writer:
      for _ in range(count):
        writer.write(b'record')
  return paths


def test_a_batch_bigger_than_the_train_split_is_capped_and_said(tmp_path):
  train = _shards(tmp_path, 20, 9)
  guard = input_pipeline.ShardGuard(str(tmp_path / 'salvage'))
  assert task._capped_batch(100000, guard, train) == (
    29,
    {'asked': 100000, 'train_examples': 29},
  )
  assert task._capped_batch(29, guard, train) == (29, None)
  assert task._capped_batch(8, guard, train) == (8, None)
  shown = summary.render(
    {
      'batch_capped': {'asked': 100000, 'train_examples': 29},
      'components': {},
      'executed': [],
      'cached': [],
      'wall_seconds': 1.0,
    }
  )
  assert (
    'batch:      29, the whole train split (--batch-size 100000 is more than it holds)' in shown
  )


def test_a_ctrl_c_keras_swallowed_stops_training_at_the_next_batch():
  model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
  model.compile(optimizer='sgd', loss='mse')
  x = np.zeros((64, 1), np.float32)
  seen = []
  count = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
  interrupt.REQUESTED.set()  # what cli/run.py's SIGINT handler does before raising
  try:
    with pytest.raises(KeyboardInterrupt):
      model.fit(
        x, x, batch_size=8, epochs=3, verbose=0, callbacks=[count, task.stop_on_interrupt()]
      )
  finally:
    interrupt.REQUESTED.clear()
  assert seen == [0]  # stopped after the first batch, not after 24
