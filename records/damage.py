"""What a reader of an Examples artifact lost, against the records its ExampleGen recorded.

A scan counts the intact records it finds and the damage it can see (corrupt records, truncated
tail bytes); a truncated shard hides how many records its lost tail held. The ExampleGen's
per-split counts (the artifact's `split_counts`) say it: records missing = recorded - read. Both
ShardCheck and the Trainer judge `--max-damaged-percent` by this, so the bound holds whether
ShardCheck ran or came from TFX's cache (issue 60).
"""

import os
from typing import Dict, List, Optional

from records import scan

SPLIT_PREFIX = 'Split-'


class DamagedShards(RuntimeError):
  """More of the data is damaged or missing than the run allows; training must not start."""


def split_of(path: str) -> str:
  """The split a shard belongs to: its Split-<name> folder ('' outside one)."""
  folder = os.path.basename(os.path.dirname(path))
  return folder[len(SPLIT_PREFIX) :] if folder.startswith(SPLIT_PREFIX) else ''


def totals(reports: List[scan.ShardReport], recorded: Optional[Dict[str, int]] = None) -> dict:
  """scan.totals(), plus `read` {split: intact records} and, for the splits `recorded` counts,
  `recorded` {split: records}, `missing` (recorded and not read) and a lost_fraction at least
  missing / recorded."""
  sums = scan.totals(reports)
  read: Dict[str, int] = {}
  for report in reports:
    read[split_of(report.path)] = read.get(split_of(report.path), 0) + report.good
  sums['read'] = read
  known = {split: int(n) for split, n in (recorded or {}).items() if split in read}
  sums['recorded'] = known
  sums['missing'] = sum(max(0, n - read[split]) for split, n in known.items())
  if known:
    sums['lost_fraction'] = max(
      sums['lost_fraction'], sums['missing'] / max(1, sum(known.values()))
    )
  return sums


def said(damage: dict) -> str:
  """'190 of 241 recorded records missing, 0 corrupt, 34 truncated bytes in 1 of 2 shards'."""
  recorded = sum(damage.get('recorded', {}).values())
  missing = f'{damage["missing"]} of {recorded} recorded records missing, ' if recorded else ''
  return (
    f'{missing}{damage["corrupt"]} corrupt, {damage["truncated_bytes"]} truncated bytes in '
    f'{damage["damaged_shards"]} of {damage["shards"]} shards'
  )


def judge(damage: dict, max_damaged_percent: float, where: str, stopped: str) -> None:
  """Raises DamagedShards when more than max_damaged_percent of the records are lost."""
  lost = damage['lost_fraction'] * 100
  if lost > max_damaged_percent:
    raise DamagedShards(
      f'{lost:.2f}% of the records in {where} are damaged or missing ({said(damage)}), more '
      f'than --max-damaged-percent {max_damaged_percent:g}: {stopped}; see `pipeline.py verify '
      f'{where}`'
    )
