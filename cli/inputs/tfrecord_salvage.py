"""A damaged TFRecord input read through intact copies of its files."""

import json
import os
from typing import Optional, Tuple

from cli.inputs import data_layout
import config as cfg
from contracts import artifacts
from utils import atomic

SALVAGED_INPUT = 'salvaged_input'  # <output>/…: intact copies of a damaged TFRecord input


def salvage_tfrecords(
  source: data_layout.DataSource, destination: str
) -> Tuple[data_layout.DataSource, Optional[dict]]:
  """Scans a local TFRecord input with the project's shard scan. Clean: (source, None). Damaged:
  every file is copied below `destination` with its intact records only (same layout; a copy
  newer than its original is kept, so re-runs stay cached), and the source read from there;
  with the scan's totals, also written to `destination`/DAMAGE_FILE for the summary."""
  from records import scan

  if cfg.is_remote(source.root):
    return source, None
  files = data_layout.local_files(source)
  reports = scan.check_all(files)  # in parallel; copies are written below, for damage only
  if all(report.clean for report in reports):
    return source, None
  for path in files:
    target = os.path.join(destination, os.path.relpath(path, source.root))
    if not (os.path.exists(target) and os.path.getmtime(target) >= os.path.getmtime(path)):
      scan.check(path, target, salvage_clean=True)
  totals = dict(scan.totals(reports), damaged=[r.summary() for r in reports if not r.clean])
  atomic.write(os.path.join(destination, artifacts.DAMAGE_FILE), json.dumps(totals, indent=2))
  return source._replace(root=destination), totals
