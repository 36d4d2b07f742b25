"""The input check's verdict from its figures: input-bound only when the input cannot keep up."""

import pytest

from contracts import input_check


def _default_run(batch_size=64, step_rate=8769.0, stall=0.083):
  """The default run's figures (digits, cached in memory): input far faster than a 7 ms step."""
  return dict(
    input_examples_per_second=310639.0,
    step_seconds=batch_size / step_rate,
    batch_size=batch_size,
    stall_fraction=stall,
  )


def test_waiting_beside_an_input_far_faster_than_the_step_is_a_per_batch_cost():
  figures = _default_run()
  found = input_check.verdict(**figures)
  assert not found.input_bound
  per_batch_ms = input_check.waited_per_batch(figures['step_seconds'], 0.083) * 1000
  assert f'fixed cost of {per_batch_ms:.2f} ms per batch' in found.words
  assert '--batch-size' in found.words and '35.4x' in found.words


def test_an_input_slower_than_the_step_is_input_bound_even_with_little_waiting():
  # large JPEGs, cache off: 180 examples/s against a 40 ms step of 32 (800 examples/s)
  found = input_check.verdict(180.0, 0.040, 32, 0.02)
  assert found.input_bound and '0.23x' in found.words


def test_an_input_that_keeps_up_without_waiting_is_simply_not_input_bound():
  found = input_check.verdict(**_default_run(stall=0.01))
  assert not found.input_bound and 'fixed cost' not in found.words


@pytest.mark.parametrize('step_seconds,stall', [(0.007, 0.083), (0.1, 0.5), (0.02, 0.0)])
def test_the_wait_per_batch_gives_back_the_stall_of_a_paced_consumer(step_seconds, stall):
  waited = input_check.waited_per_batch(step_seconds, stall)
  assert waited / (waited + step_seconds) == pytest.approx(stall)
