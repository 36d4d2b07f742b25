"""trainer/task.py: a Ctrl-C that Keras swallowed still stops training."""

import keras
import numpy as np
import pytest

from trainer import task
from utils import interrupt


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
