"""The Trainer's live progress: step of total, loss, examples/s and time left, as records of
utils/progress.py (the terminal shows them as the run goes; the run log keeps them all)."""

import time

import keras

from utils import progress

NODE = 'Trainer'
REPORTS = 20  # records per phase: one every total/REPORTS steps, and the last step's


class TrainingProgress(keras.callbacks.Callback):
  """Reports every total/REPORTS steps; reads the loss only then, so that Keras keeps
  dispatching steps ahead of the host in between (async_safe)."""

  def __init__(self, total_steps: int, batch_size: int, phase: str):
    super().__init__()
    self.async_safe = True
    self._total, self._batch_size, self._phase = total_steps, batch_size, phase
    self._every = max(1, total_steps // REPORTS)
    self._step, self._started = 0, time.monotonic()

  def on_train_begin(self, logs=None):
    self._step, self._started = 0, time.monotonic()

  def on_train_batch_end(self, batch, logs=None):
    self._step += 1
    if self._step % self._every and self._step < self._total:
      return
    elapsed = max(time.monotonic() - self._started, 1e-9)
    loss = (logs or {}).get('loss')
    progress.report(
      NODE,
      f'{self._phase} step {self._step}/{self._total}'
      + (f', loss {float(loss):.4f}' if loss is not None else '')
      + f', {self._step * self._batch_size / elapsed:,.0f} examples/s'
      + f', {(self._total - self._step) * elapsed / self._step:.0f} s left',
      final=self._step >= self._total,
    )
