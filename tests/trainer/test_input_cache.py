"""trainer/input_cache.py: whether decoded input is held in memory."""

import os

import pytest

from trainer import input_cache


@pytest.mark.parametrize(
  'mode, decoded, expected',
  [('auto', 100, True), ('auto', 101, False), ('memory', 10**12, True), ('off', 1, False)],
)
def test_cache_decision_follows_the_mode_and_the_budget(mode, decoded, expected):
  decision = input_cache.decide(mode, decoded, budget_bytes=100)
  assert decision.used is expected
  words = decision.describe()
  assert words.startswith('input held in memory' if expected else 'input not cached')
  if mode == 'auto' and not expected:
    assert 'above the 0 MB budget' in words and '--input-cache memory' in words


def test_cache_budget_is_a_share_of_real_memory():
  assert 0 < input_cache.memory_bytes() <= os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')
  with pytest.raises(ValueError, match='auto, memory or off'):
    input_cache.decide('sometimes', 1)
