"""`pipeline.py verify PATH…`: every TFRecord shard's records checked, damage reported, salvage.

Exit codes: 0 every shard clean, 1 damage found (and salvaged with --repair), 2 bad input.
"""

import argparse
import os
import sys
from typing import List

from components.shard_check import scan
from contracts.errors import UserError

HELP = 'check TFRecord shards record by record; salvage the intact records'
DESCRIPTION = (
  'Check every record of TFRecord shards (plain or GZIP) against its CRCs, in '
  'parallel, and report per shard: good records, corrupt records, truncated tail '
  'bytes. Exit codes: 0 clean, 1 damage found, 2 bad input.'
)
SHARD_SUFFIXES = ('.tfrecord', '.tfrecords', '.tfrecord.gz', '.tfrecords.gz', '.gz')


def _is_shard(path: str) -> bool:
  name = os.path.basename(path)
  return (
    name.endswith(SHARD_SUFFIXES)
    or name.startswith('data-')
    or (os.path.basename(os.path.dirname(path)).startswith('Split-'))
  )


def find_shards(paths: List[str]) -> List[str]:
  """Files as given; folders searched for shards (Examples artifacts, *.tfrecord[.gz], …)."""
  found = []
  for path in paths:
    if os.path.isfile(path):
      found.append(os.path.abspath(path))
    elif os.path.isdir(path):
      found += sorted(
        os.path.abspath(os.path.join(folder, name))
        for folder, _, names in os.walk(path)
        for name in names
        if _is_shard(os.path.join(folder, name))
      )
    else:
      raise UserError(f'{path}: no such file or folder')
  if not found:
    raise UserError(f'no TFRecord shards under {" ".join(paths)}')
  return found


def describe(report: scan.ShardReport) -> str:
  if report.clean:
    return f'{report.path}: ok, {report.good} records'
  parts = [
    f'{report.good} good',
    f'{report.corrupt} corrupt ({report.lost_bytes} bytes lost)',
    f'{report.truncated_bytes} truncated tail bytes',
  ]
  if report.gzip_damaged:
    parts.append('GZIP stream damaged: records after the damage are unreadable')
  return f'{report.path}: DAMAGED: ' + ', '.join(parts)


def add_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument(
    'paths',
    nargs='+',
    metavar='PATH',
    help='shard files, or folders to search (e.g. an Examples artifact)',
  )
  parser.add_argument(
    '--repair',
    metavar='OUT_DIR',
    default='',
    help='write salvaged copies of every shard (every intact record and '
    'nothing else) under OUT_DIR, keeping relative paths',
  )
  parser.add_argument(
    '--workers', type=int, default=0, help='parallel scans (default: one per core)'
  )


def main(args: argparse.Namespace) -> int:
  return run(args.paths, args.repair, args.workers)


def run(paths: List[str], repair_dir: str = '', workers: int = 0) -> int:
  shards = find_shards(paths)
  if repair_dir:
    repair_dir = os.path.abspath(repair_dir)
    if any(s.startswith(repair_dir + os.sep) for s in shards):
      raise UserError(f'--repair {repair_dir}: must not contain the shards being verified')
    if os.path.isdir(repair_dir) and os.listdir(repair_dir):
      raise UserError(f'--repair {repair_dir}: folder exists and is not empty')
  print(
    f'verifying {len(shards)} shard(s) with {workers or min(len(shards), os.cpu_count() or 1)}'
    ' worker(s)',
    flush=True,
  )
  reports = scan.check_all(
    shards, salvage_dir=repair_dir, salvage_clean=True, workers=workers, processes=True
  )
  for report in reports:
    print(describe(report))
  totals = scan.totals(reports)
  print(
    f'total: {totals["shards"]} shard(s), {totals["damaged_shards"]} damaged; '
    f'{totals["good"]} good records, {totals["corrupt"]} corrupt, '
    f'{totals["lost_bytes"]} bytes lost, {totals["truncated_bytes"]} truncated tail bytes'
  )
  if repair_dir:
    print(f'salvaged shards (every intact record, nothing else) written under {repair_dir}')
  if totals['damaged_shards']:
    print(f'damage found in {totals["damaged_shards"]} shard(s)', file=sys.stderr)
    return 1
  return 0
