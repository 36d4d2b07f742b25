"""ShardCheck: scans the ExampleGen output before training (CRCs of every record).

A few damaged records are tolerated (the Trainer reads around them); more than
`max_damaged_percent` of the records (damaged, or missing against the counts the ExampleGen
recorded) stops the run before the Trainer starts. The Trainer judges the same bound on what it
reads (trainer/task.py), so a cached ShardCheck does not let damage made since through.
"""

import json

from tfx.dsl.component.experimental.annotations import InputArtifact, OutputDict, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts

from components.shard_check import executor


@component
def ShardCheck(
  examples: InputArtifact[standard_artifacts.Examples],
  max_damaged_percent: Parameter[float] = 1.0,
  code_fingerprint: Parameter[str] = '',
) -> OutputDict(records=int, damaged_records=int):
  """Counts intact, damaged and missing records (against the ExampleGen's split_counts, where it
  recorded them); raises records.damage.DamagedShards above the threshold (code_fingerprint:
  only for the cache key, utils/fingerprint.py)."""
  counts = examples.get_string_custom_property('split_counts')
  totals = executor.check(examples.uri, max_damaged_percent, json.loads(counts or '{}'))
  return {'records': totals['good'], 'damaged_records': totals['corrupt'] + totals['missing']}
