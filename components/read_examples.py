"""An Examples artifact as a component after ShardCheck reads it: its shards scanned
(records/scan.py) and judged against the records its ExampleGen recorded (records/damage.py),
whether ShardCheck ran or came from TFX's cache. More than `max_damaged_percent` damaged or
missing stops the component in one line; less is read from salvaged copies of the intact
records (Beam's TFRecord reader fails at the first bad one). Shared by the BulkInferrer and the
Evaluator; the Trainer judges its own input (trainer/setup.py)."""

import json
import logging
import os
from typing import List, Optional

from records import damage, scan


def readable(examples, files: List[str], max_damaged_percent: Optional[float], scratch, stopped):
  """`examples` itself when `files` (the shards read) are intact; else an artifact at `scratch`
  holding salvaged copies of them, after damage.judge (max_damaged_percent, default 1) against
  the recorded split_counts raised DamagedShards where too much is lost (`stopped`: what stops,
  'inference stopped')."""
  reports = scan.check_all(files)
  recorded = json.loads(examples.get_string_custom_property('split_counts') or '{}')
  found = damage.totals(reports, recorded)
  limit = 1.0 if max_damaged_percent is None else max_damaged_percent
  damage.judge(found, limit, examples.uri, stopped)
  if all(report.clean for report in reports):
    return examples
  logging.warning('damaged examples read through intact copies: %s', damage.said(found))
  for folder in sorted({os.path.dirname(path) for path in files}):  # one call per split
    split_files = [path for path in files if os.path.dirname(path) == folder]
    target = os.path.join(scratch, os.path.basename(folder))
    scan.check_all(split_files, salvage_dir=target, salvage_clean=True)
  salvaged = type(examples)()
  salvaged.set_mlmd_artifact(examples.mlmd_artifact)
  salvaged.uri = scratch
  return salvaged
