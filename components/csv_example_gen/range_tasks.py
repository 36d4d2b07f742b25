"""The ArrowCsvExampleGen's work as tasks: each input file's byte ranges (csv_ranges.ranges), with
its split, column names and dialect (contracts/csv_dialect.py: the files of one run share a
delimiter, those of one split a header), numbered into the shards they are written as."""

import mmap
import os
from typing import Dict, List, Tuple

from tfx.dsl.io import fileio

from components.csv_example_gen import csv_ranges
from contracts import csv_dialect
from contracts.errors import UnusableData

# (input split, file, begin, end, line of begin, shard index, shard count)
Task = Tuple[str, str, int, int, int, int, int]


def _header_and_ranges(
  path: str,
) -> Tuple[csv_dialect.Dialect, List[str], List[Tuple[int, int, int]]]:
  """The file's dialect and column names (csv_dialect.header) and byte ranges
  (csv_ranges.ranges), from a local map of the file or, on object storage, its bytes."""
  with fileio.open(path, 'rb') as f:
    first = f.readline()
  dialect, names = csv_dialect.header(first)
  if not os.path.exists(path):  # gs://, s3://: read once here, by range in the workers
    with fileio.open(path, 'rb') as f:
      return dialect, names, csv_ranges.ranges(f.read(), len(first))
  with open(path, 'rb') as f:
    if os.fstat(f.fileno()).st_size == 0:
      return dialect, [], []
    with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
      return dialect, names, csv_ranges.ranges(data, len(first))


def numbered_tasks(input_base: str, input_config, per_output_split: bool):
  """(tasks, column names per input split, CSV bytes per task, the files' one dialect)."""
  tasks, names, dialects = [], {}, {}
  for split in input_config.splits:
    files = sorted(fileio.glob(os.path.join(input_base, split.pattern)))
    if not files:
      raise UnusableData(f'no CSV files match {os.path.join(input_base, split.pattern)}')
    found = []
    for path in files:
      dialect, header, cuts = _header_and_ranges(path)
      _one_dialect(dialects, path, dialect)
      if names.setdefault(split.name, header) != header:
        raise UnusableData(
          f"{path}: its header differs from {files[0]}'s; CSV files of one split share a header"
        )
      found += [(split.name, path, begin, end, line) for begin, end, line in cuts]
    tasks.append(found)
  if per_output_split:
    numbered = [t + (i, len(ts)) for ts in tasks for i, t in enumerate(ts)]
  else:
    flat = [t for ts in tasks for t in ts]
    numbered = [t + (i, len(flat)) for i, t in enumerate(flat)]
  dialect = next(iter(dialects), csv_dialect.Dialect())
  return numbered, names, [t[3] - t[2] for t in numbered], dialect


def _one_dialect(seen: Dict[csv_dialect.Dialect, str], path: str, dialect) -> None:
  """Records `path`'s dialect in `seen` (dialect → its first file); raises UnusableData for a
  delimiter other than the first file's: one run reads its files alike."""
  for other, first in seen.items():
    if other.delimiter != dialect.delimiter:
      raise UnusableData(
        f'{path} is {csv_dialect.NAMES[dialect.delimiter]}-separated, {first} '
        f'{csv_dialect.NAMES[other.delimiter]}-separated: save the CSV files of one run alike'
      )
  seen.setdefault(dialect, path)
