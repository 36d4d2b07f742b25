"""`pipeline.py verify PATH…`: every TFRecord shard's records checked, damage reported, salvage;
what the artifact records (shard numbering, splits, record counts) checked against what is there.

Exit codes: 0 every shard clean and nothing missing, 1 damage found (and salvaged with --repair)
or shards, splits or records missing, 2 bad input.
"""

import argparse
import collections
import contextlib
import dataclasses
import json
import os
import re
import sys
import types
from typing import Dict, Iterator, List, Optional, Tuple

import config as cfg
from contracts import artifacts
from contracts.errors import UserError
from metadata import recorded_splits
from records import scan

HELP = 'check TFRecord shards record by record; salvage the intact records'
DESCRIPTION = (
  'Check every record of TFRecord shards (plain or GZIP) against its CRCs, in '
  'parallel, and report per shard: good records, corrupt records, truncated tail '
  'bytes. In the folders searched, also report what is missing: shards of a numbered '
  'set (data-00001-of-00002), and the splits and record counts an Examples artifact '
  'records (ML Metadata, image_meta.json, text_meta.json, StatisticsGen). '
  'Exit codes: 0 clean, 1 damage found or something missing, 2 bad input.'
)
SHARD_SUFFIXES = ('.tfrecord', '.tfrecords', '.tfrecord.gz', '.tfrecords.gz', '.gz')
# TFX writes protos beside shards in the Split-* folders of other artifacts (StatisticsGen's
# FeatureStats.pb, ExampleValidator's SchemaDiff.pb): not TFRecords.
NOT_SHARDS = ('.pb', '.pbtxt')
# Beam's (and so TFX ExampleGens') and the project's shard names: data_tfrecord-00001-of-00002.gz,
# data-00001-of-00002.gz, metrics-00000-of-00001.tfrecord.
NUMBERED = re.compile(r'^(?P<prefix>.+)-(?P<index>\d+)-of-(?P<count>\d+)(?P<suffix>\.[^-]*)?$')
META_FILES = (artifacts.IMAGE_META_FILE, artifacts.TEXT_META_FILE)


def _is_shard(path: str) -> bool:
  name = os.path.basename(path)
  if name.endswith(NOT_SHARDS):
    return False
  return (
    name.endswith(SHARD_SUFFIXES)
    or name.startswith('data-')
    or (os.path.basename(os.path.dirname(path)).startswith('Split-'))
  )


def _search(paths: List[str]) -> Tuple[List[str], List[str]]:
  """(shards, folders searched): files as given; folders walked for shards."""
  found, folders = [], []
  for path in paths:
    if os.path.isfile(path):
      found.append(os.path.abspath(path))
    elif os.path.isdir(path):
      walked = []
      for folder, _, names in os.walk(os.path.abspath(path)):
        folders.append(folder)
        walked += [os.path.join(folder, n) for n in names if _is_shard(os.path.join(folder, n))]
      found += sorted(walked)
    else:
      raise UserError(f'{path}: no such file or folder')
  return list(dict.fromkeys(found)), list(dict.fromkeys(folders))


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


@dataclasses.dataclass
class Finding:
  """Something the artifact or the shard numbering says should be there and is not."""

  kind: str  # 'shard', 'split', 'records' (fewer than recorded), 'extra' (more than recorded)
  line: str
  amount: int = 1  # shards, splits or records


def missing_shards(shards: List[str], folders: List[str]) -> List[Finding]:
  """Every index absent from a numbered set <prefix>-NNNNN-of-MMMMM[suffix] of a folder searched."""
  searched = set(folders)
  sets = collections.defaultdict(set)
  for path in shards:
    folder, name = os.path.split(path)
    match = NUMBERED.match(name)
    if folder in searched and match:
      key = (folder, match['prefix'], match['count'], match['suffix'] or '', len(match['index']))
      sets[key].add(int(match['index']))
  findings = []
  for (folder, prefix, count, suffix, width), present in sorted(sets.items()):
    total = int(count)
    for index in sorted(set(range(total)) - present):
      name = f'{prefix}-{index:0{width}d}-of-{count}{suffix}'
      findings.append(
        Finding(
          'shard',
          f'{os.path.join(folder, name)}: missing ({len(present)} of {total} shards present)',
        )
      )
  return findings


def _split_folders(folder: str) -> List[str]:
  try:
    return sorted(n for n in os.listdir(folder) if n.startswith('Split-'))
  except OSError:
    return []


def _from_meta_file(folder: str) -> Optional[recorded_splits.Recorded]:
  for name in META_FILES:
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
      continue
    try:
      with open(path) as f:
        counts = json.load(f)['split_counts']
      counts = {str(split): int(n) for split, n in counts.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
      continue
    return recorded_splits.Recorded(list(counts), counts, name, f'recorded in {name}')
  return None


def _artifact_folders(shards: List[str], folders: List[str]) -> List[str]:
  """Folders searched that look like an Examples artifact: Split-* folders holding shards, or
  image_meta.json / text_meta.json (the splits may all be gone)."""
  with_shards = {
    os.path.dirname(os.path.dirname(p))
    for p in shards
    if os.path.basename(os.path.dirname(p)).startswith('Split-')
  }
  return [
    f
    for f in folders
    if f in with_shards or any(os.path.isfile(os.path.join(f, n)) for n in META_FILES)
  ]


def missing_splits_and_records(
  shards: List[str], folders: List[str], reports: Dict[str, scan.ShardReport]
) -> List[Finding]:
  """Per Examples artifact searched: recorded splits without a folder or shards, and splits
  whose shards hold other than the recorded number of records (intact records, on a damaged
  split: a truncated shard's lost tail says nothing of how many records it held)."""
  metadata, findings = recorded_splits.Reader(cfg.METADATA_FILE), []
  per_split = collections.defaultdict(list)
  for path in shards:
    per_split[os.path.dirname(path)].append(path)
  for folder in _artifact_folders(shards, folders):
    recorded = metadata.recorded(folder) or _from_meta_file(folder)
    present = [name[len('Split-') :] for name in _split_folders(folder)]
    splits = recorded.splits if recorded else present
    for split in splits:
      split_folder = os.path.join(folder, f'Split-{split}')
      where = f"split '{split}' recorded in {recorded.source}" if recorded else ''
      if not os.path.isdir(split_folder):
        findings.append(Finding('split', f'{split_folder}: missing ({where})'))
        continue
      split_shards = per_split.get(split_folder, [])
      if not split_shards:
        findings.append(
          Finding(
            'split',
            f'{split_folder}: missing (the folder holds no shards'
            + (f'; {where})' if where else ')'),
          )
        )
        continue
      if not recorded or split not in recorded.counts:
        continue
      damaged = not all(reports[p].clean for p in split_shards if p in reports)
      counted = sum(reports[p].good for p in split_shards if p in reports)
      expected = recorded.counts[split]
      if counted < expected:  # on a damaged split: what its damage (above) cost in records
        findings.append(
          Finding(
            'records',
            f'{split_folder}: {expected - counted} records missing ({counted} '
            f'{"intact " if damaged else ""}of {expected} {recorded.counts_source})',
            expected - counted,
          )
        )
      elif counted > expected:
        findings.append(
          Finding(
            'extra',
            f'{split_folder}: {counted - expected} records more than recorded ({counted}, '
            f'{expected} {recorded.counts_source})',
            counted - expected,
          )
        )
  return findings


def summarise(findings: List[Finding]) -> str:
  """One line: what is missing, in all."""
  amounts = collections.Counter()
  for finding in findings:
    amounts[finding.kind] += finding.amount
  parts = [
    f'{amounts[kind]} {noun}(s)'
    for kind, noun in (('shard', 'shard'), ('split', 'split'), ('records', 'record'))
    if amounts[kind]
  ]
  line = f'incomplete: {", ".join(parts)} missing' if parts else 'incomplete:'
  if amounts['extra']:
    line += ('; ' if parts else ' ') + f'{amounts["extra"]} record(s) more than recorded'
  return line


@contextlib.contextmanager
def _plain_workers() -> Iterator[None]:
  """Spawned scan workers are fresh interpreters that first import `__main__` again: pipeline.py,
  run as a script, would import TFX and TensorFlow in each (seconds apiece, and a dozen
  FutureWarnings on the terminal that the parent's warnings filter does not reach). The scan needs
  none of it: the workers start from an empty `__main__`, and with PYTHONWARNINGS quieting what
  they import themselves (TensorFlow for gs:// shards)."""
  main, saved = sys.modules.get('__main__'), os.environ.get('PYTHONWARNINGS')
  sys.modules['__main__'] = types.ModuleType('__main__')
  quiet = 'ignore::FutureWarning,ignore::DeprecationWarning'
  os.environ['PYTHONWARNINGS'] = f'{quiet},{saved}' if saved else quiet
  try:
    yield
  finally:
    if main is not None:
      sys.modules['__main__'] = main
    if saved is None:
      os.environ.pop('PYTHONWARNINGS', None)
    else:
      os.environ['PYTHONWARNINGS'] = saved


def add_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument(
    'paths',
    nargs='+',
    metavar='PATH',
    help='shard files, or folders to search (e.g. an Examples artifact, or an output folder)',
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
  shards, folders = _search(paths)
  if not shards and not missing_splits_and_records([], folders, {}):
    raise UserError(f'no TFRecord shards under {" ".join(paths)}')
  if repair_dir:
    repair_dir = os.path.abspath(repair_dir)
    if any(s.startswith(repair_dir + os.sep) for s in shards):
      raise UserError(f'--repair {repair_dir}: must not contain the shards being verified')
    if os.path.isdir(repair_dir) and os.listdir(repair_dir):
      raise UserError(f'--repair {repair_dir}: folder exists and is not empty')
  print(
    f'verifying {len(shards)} shard(s) with '
    f'{workers or min(len(shards), os.cpu_count() or 1) or 1} worker(s)',
    flush=True,
  )
  with _plain_workers():
    reports = scan.check_all(
      shards, salvage_dir=repair_dir, salvage_clean=True, workers=workers, processes=True
    )
  for report in reports:
    print(describe(report))
  findings = missing_shards(shards, folders) + missing_splits_and_records(
    shards, folders, {r.path: r for r in reports}
  )
  for finding in findings:
    print(finding.line)
  totals = scan.totals(reports)
  print(
    f'total: {totals["shards"]} shard(s), {totals["damaged_shards"]} damaged; '
    f'{totals["good"]} good records, {totals["corrupt"]} corrupt, '
    f'{totals["lost_bytes"]} bytes lost, {totals["truncated_bytes"]} truncated tail bytes'
  )
  if repair_dir and reports:
    print(f'salvaged shards (every intact record, nothing else) written under {repair_dir}')
  if totals['damaged_shards']:
    print(f'damage found in {totals["damaged_shards"]} shard(s)', file=sys.stderr)
  if findings:
    print(summarise(findings), file=sys.stderr)
  return 1 if totals['damaged_shards'] or findings else 0
