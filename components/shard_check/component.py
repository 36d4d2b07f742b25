"""ShardCheck: scans the ExampleGen output before training (CRCs of every record).

A few damaged records are tolerated (the Trainer reads around them); more than
`max_damaged_percent` of the records stops the run before the Trainer starts.
"""

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
  """Counts intact and damaged records; raises executor.DamagedShards above the threshold
  (code_fingerprint: only for the cache key, utils/fingerprint.py)."""
  totals = executor.check(examples.uri, max_damaged_percent)
  return {'records': totals['good'], 'damaged_records': totals['corrupt']}
