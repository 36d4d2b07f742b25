"""Scans an Examples artifact's shards before training and stops the run when too much is lost."""

import logging
import os
from typing import Dict, List, Optional

from tfx.dsl.io import fileio

from records import damage, scan


def shard_paths(examples_uri: str) -> List[str]:
  """Every file in the artifact's Split-* folders (side files sit beside them)."""
  return sorted(
    path
    for split in fileio.glob(os.path.join(examples_uri, 'Split-*'))
    for path in fileio.glob(os.path.join(split, '*'))
    if not fileio.isdir(path)
  )


def check(
  examples_uri: str, max_damaged_percent: float, recorded: Optional[Dict[str, int]] = None
) -> dict:
  """Scans every shard; returns damage.totals() against the `recorded` split counts, raising
  damage.DamagedShards above the threshold."""
  reports = scan.check_all(shard_paths(examples_uri))
  for report in reports:
    if not report.clean:
      logging.warning('damaged shard %s', report.summary())
  totals = damage.totals(reports, recorded)
  damage.judge(totals, max_damaged_percent, examples_uri, 'training stopped')
  return totals
