"""bench/watch_memory.py's arithmetic (its whole run, a watch over many edits, is not a test:
docs/benchmarks.md has its figures)."""

import pytest

from bench import watch_memory


def test_the_slope_is_the_least_squares_growth_per_edit():
  assert watch_memory.slope([100.0, 112.5, 125.0, 137.5]) == pytest.approx(12.5)
  assert watch_memory.slope([500.0, 480.0, 520.0, 500.0]) == pytest.approx(4.0)
  assert watch_memory.slope([700.0]) == 0.0
