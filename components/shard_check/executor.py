"""Scans an Examples artifact's shards before training and stops the run when too much is lost."""

import logging
import os
from typing import List

from tfx.dsl.io import fileio

from records import scan


class DamagedShards(RuntimeError):
  """More of the data is damaged than the run allows; training must not start."""


def shard_paths(examples_uri: str) -> List[str]:
  """Every file in the artifact's Split-* folders (side files sit beside them)."""
  return sorted(
    path
    for split in fileio.glob(os.path.join(examples_uri, 'Split-*'))
    for path in fileio.glob(os.path.join(split, '*'))
    if not fileio.isdir(path)
  )


def check(examples_uri: str, max_damaged_percent: float) -> dict:
  """Scans every shard; returns scan.totals(), raising DamagedShards above the threshold."""
  reports = scan.check_all(shard_paths(examples_uri))
  for report in reports:
    if not report.clean:
      logging.warning('damaged shard %s', report.summary())
  totals = scan.totals(reports)
  lost = totals['lost_fraction'] * 100
  if lost > max_damaged_percent:
    raise DamagedShards(
      f'{lost:.2f}% of the records in {examples_uri} are damaged ({totals["corrupt"]} corrupt, '
      f'{totals["truncated_bytes"]} truncated bytes in {totals["damaged_shards"]} of '
      f'{totals["shards"]} shards), more than --max-damaged-percent {max_damaged_percent:g}: '
      f'training stopped; see `pipeline.py verify {examples_uri}`'
    )
  return totals
