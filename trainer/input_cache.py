"""Whether the Trainer holds its decoded input in memory (decoded once, read every epoch).

`--input-cache auto` (the default) caches when the decoded train and eval splits fit
MEMORY_FRACTION of this machine's memory (the smaller of physical memory and the container's
limit); `memory` caches whatever the size; `off` never does. Decoded means what the model is fed:
uint8 pixels at the model's input size for images (224x224x3 is 150 KB per image, against ~15 KB
as JPEG), parsed columns for tabular rows (estimated at twice their serialized size). Sequences
are not cached (their windows are cut anew every pass). Epoch 2+ from memory against a ceiling of
iterating the same data already in memory: docs/benchmarks.md (Input pipeline: the cache).
"""

import dataclasses
import os

from contracts.trainer_options import AUTO, CACHE_MEMORY, CACHE_OFF

MEMORY_FRACTION = 0.25
TABULAR_PARSED_PER_SERIALIZED_BYTE = 2
_CGROUP_LIMITS = ('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes')


@dataclasses.dataclass(frozen=True)
class CacheDecision:
  used: bool
  decoded_mb: float
  budget_mb: float
  mode: str  # the --input-cache asked for
  why_not: str = ''  # set when the data kind or the route rules the cache out

  def describe(self) -> str:
    """The words the input check adds to its line."""
    size = f'{self.decoded_mb:,.{0 if self.decoded_mb >= 10 else 1}f} MB decoded'
    if self.used:
      return f'input held in memory, decoded once ({size}; --input-cache {self.mode})'
    if self.why_not:
      return f'input not cached ({self.why_not})'
    if self.mode == CACHE_OFF:
      return 'input not cached (--input-cache off)'
    return (
      f'input not cached ({size}, above the {self.budget_mb:,.0f} MB budget: '
      f'{MEMORY_FRACTION:.0%} of memory; --input-cache memory forces it)'
    )

  def to_json(self) -> dict:
    return dict(dataclasses.asdict(self), note=self.describe())


def memory_bytes() -> int:
  """This machine's memory, or the container's limit when that is lower."""
  physical = os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')
  for path in _CGROUP_LIMITS:
    try:
      with open(path) as f:
        text = f.read().strip()
    except OSError:
      continue
    if text.isdigit():
      return min(physical, int(text))
  return physical


def decide(mode: str, decoded_bytes: int, budget_bytes: int = 0) -> CacheDecision:
  """mode: AUTO, CACHE_MEMORY or CACHE_OFF; budget_bytes 0: MEMORY_FRACTION of memory."""
  if mode not in (AUTO, CACHE_MEMORY, CACHE_OFF):
    raise ValueError(f'input cache {mode!r}: expected auto, memory or off')
  budget = budget_bytes or int(memory_bytes() * MEMORY_FRACTION)
  used = mode == CACHE_MEMORY or (mode == AUTO and decoded_bytes <= budget)
  return CacheDecision(used, decoded_bytes / 1e6, budget / 1e6, mode)


def not_cached(mode: str, why: str) -> CacheDecision:
  """For input that is never cached here, whatever the size (why: in a few words)."""
  return CacheDecision(False, 0.0, 0.0, mode, why)


def image_bytes(records: int, height: int, width: int, channels: int) -> int:
  """Decoded uint8 images at the model's size, plus an int64 label each."""
  return records * (height * width * channels + 8)


def tabular_bytes(serialized_bytes: int) -> int:
  return serialized_bytes * TABULAR_PARSED_PER_SERIALIZED_BYTE
