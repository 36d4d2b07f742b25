"""The Trainer's input check on a pipeline far slower than the model."""

import logging
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from contracts import input_check
from trainer import diagnosis


def _model():
  model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
  model.compile(optimizer='adam', loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
  return model


def _dataset(delay_s: float) -> tf.data.Dataset:
  def slow(x, y):
    time.sleep(delay_s)
    return x, y

  base = tf.data.Dataset.from_tensors((np.ones((8, 4), np.float32), np.zeros(8, np.int64)))
  return base.repeat().map(lambda x, y: tf.numpy_function(slow, [x, y], (tf.float32, tf.int64)))


def test_a_starved_model_is_reported_input_bound_with_the_hint(caplog):
  with caplog.at_level(logging.INFO):
    check = diagnosis.check_input(_model(), _dataset(0.05), 8, 'the first thing to try')
  assert check['stall_fraction'] > input_check.INPUT_BOUND  # 50 ms per batch against a ~1 ms step
  assert check['input_bound'] and check['input_examples_per_second'] < 8 / 0.05
  (line,) = [r for r in caplog.records if 'input check' in r.getMessage()]
  assert line.levelno == logging.WARNING
  assert 'input check: input-bound: the input alone delivers' in line.getMessage()
  assert 'First thing to try: the first thing to try' in line.getMessage()


def test_step_time_does_not_change_the_weights():
  model = _model()
  before = [w.numpy().copy() for w in model.weights]
  x, y = np.ones((8, 4), np.float32), np.zeros(8, np.int64)
  assert diagnosis.step_seconds(model, tf.constant(x), tf.constant(y)) > 0
  assert all((a == b.numpy()).all() for a, b in zip(before, model.weights))


class _Clock:
  """A fake time module: monotonic() reads it, sleep() and the work below advance it."""

  def __init__(self):
    self.now = 0.0

  def monotonic(self):
    return self.now

  def sleep(self, seconds):
    self.now += seconds


def test_dropping_a_batch_is_the_consumers_step_not_waiting_for_input(monkeypatch):
  clock = _Clock()
  monkeypatch.setattr(diagnosis, 'time', clock)

  class Batch:
    def __del__(self):  # freeing a large batch takes 0.3 s on this clock
      clock.now += 0.3

  def batches():
    while True:
      clock.now += 0.1  # the wait for each batch
      yield Batch()

  pulled, waited, wall = diagnosis.pull(batches(), seconds=10.0, step_seconds=1.0)
  assert waited == pytest.approx(0.1 * pulled)  # the 0.3 s of freeing is not in it
  assert wall == pytest.approx(1.1 * pulled)  # it is inside each 1 s step


def test_the_input_alone_is_measured_once_per_input(monkeypatch):
  monkeypatch.setattr(diagnosis, 'MEASURE_SECONDS', 0.05)
  monkeypatch.setattr(diagnosis, 'RATES', {})
  model = _model()
  first, again, other = (
    diagnosis.check_input(model, _dataset(0.0), 8, 'hint', input_key=key) for key in 'aab'
  )
  assert [c['input_rate_reused'] for c in (first, again, other)] == [False, True, False]
  assert again['input_examples_per_second'] == first['input_examples_per_second']
  assert list(diagnosis.RATES) == ['b']  # one input remembered
