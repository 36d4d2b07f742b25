"""Before training: can the input pipeline keep up with this model on this machine?

A short warm-up measures the input pipeline alone (examples/s) and one training step of the model
(forward + backward on a real batch, weights not updated), then replays the pipeline against a
consumer that takes each batch for exactly that step time and counts the share of wall time spent
waiting in next(). contracts/input_check.py gives the verdict from these figures: input-bound
only when the input alone is slower than the step; waiting above 5% with an input that keeps up is
named as the fixed cost per batch it is. The consumer sleeps instead of computing, so on a
CPU-only machine, where the model and the input pipeline share the cores, real training can wait
more than measured here.

The input alone's rate depends on the input, not on the model: a warm process (`run --watch`)
that trains again on the same input (a model-file edit) reuses the rate it measured last
(RATES), and measures the step and the waiting anew.
"""

import logging
import time
from typing import Dict, Hashable, Optional

import tensorflow as tf

from contracts import input_check

MEASURE_SECONDS = 0.5
RATES: Dict[Hashable, float] = {}  # the last input's key → its examples/s alone, in this process


def pull(iterator, seconds: float, step_seconds: float = 0.0):
  """(batches pulled, seconds waiting in next(), wall seconds) over `seconds`; with step_seconds,
  a consumer that takes each batch for that long. Dropping a batch (freeing megabytes of decoded
  images) is the consumer's work, so it happens inside the step, not in the wait: counted as
  waiting, it read as ~4 % of stall at half the pipeline's rate on 2 cores."""
  batches, waited, started = 0, 0.0, time.monotonic()
  while time.monotonic() - started < seconds:
    before = time.monotonic()
    batch = next(iterator)
    taken = time.monotonic()
    waited += taken - before
    batches += 1
    del batch
    if step_seconds:
      time.sleep(max(0.0, step_seconds - (time.monotonic() - taken)))
  return batches, waited, time.monotonic() - started


def step_seconds(model, features, labels) -> float:
  """Median time of 5 forward + backward passes on one batch (after a tracing run)."""

  @tf.function
  def step():
    with tf.GradientTape() as tape:
      loss = model.compute_loss(x=features, y=labels, y_pred=model(features, training=True))
    return tape.gradient(loss, model.trainable_variables)

  step()
  times = []
  for _ in range(5):
    started = time.monotonic()
    for gradient in step():  # wait for every gradient (embeddings give IndexedSlices)
      if gradient is not None:
        (gradient.values if isinstance(gradient, tf.IndexedSlices) else gradient).numpy()
    times.append(time.monotonic() - started)
  return sorted(times)[len(times) // 2]


def check_input(
  model,
  dataset: tf.data.Dataset,
  batch_size: int,
  hint: str,
  service: str = '',
  cache: str = '',
  input_key: Optional[Hashable] = None,
) -> dict:
  """Logs the diagnosis line (a warning when input-bound); returns the measured figures.

  service: the tf.data service the input comes through ('' : this process).
  cache: what trainer/input_cache.py decided, in words ('' : nothing to say).
  input_key: what the input alone's rate depends on (None: measured every time); the rate
  measured last for the same key is reused.
  """
  iterator = iter(dataset)
  features, labels = next(iterator)  # also fills the pipeline's buffers
  reused = input_key is not None and input_key in RATES
  if reused:
    input_rate = RATES[input_key]
  else:
    batches, _, wall = pull(iterator, MEASURE_SECONDS)
    input_rate = batches * batch_size / wall
    RATES.clear()  # one input remembered: memory stays flat over any number of runs
    if input_key is not None:
      RATES[input_key] = input_rate
  step = step_seconds(model, features, labels)
  _, waited, wall = pull(iterator, MEASURE_SECONDS, step)
  stall = waited / wall
  found = input_check.verdict(input_rate, step, batch_size, stall)
  source = f'input from tf.data service {service}' if service else 'input pipeline'
  facts = (
    (
      f'{source} alone {input_rate:,.0f} examples/s; one training step '
      f'{step * 1000:.1f} ms ({batch_size / step:,.0f} examples/s); at that pace training '
      f'waited for input {stall:.1%} of the time'
    )
    + (f'; {cache}' if cache else '')
    + ('; input rate as measured last on this input' if reused else '')
  )
  if found.input_bound:
    logging.warning('input check: %s (%s). First thing to try: %s', found.words, facts, hint)
  else:
    logging.info('input check: %s (%s)', found.words, facts)
  return {
    'input_examples_per_second': input_rate,
    'step_seconds': step,
    'stall_fraction': stall,
    'input_bound': found.input_bound,
    'hint': hint,
    'input_service': service,
    'input_rate_reused': reused,
  }
