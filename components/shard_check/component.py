"""ShardCheck: scans the ExampleGen output before training (CRCs of every record).

A few damaged records are tolerated (the Trainer reads around them); more than
`max_damaged_percent` of the records stops the run before the Trainer starts.
"""

from tfx import v1 as tfx

from components.shard_check import executor


@tfx.dsl.components.component
def ShardCheck(
  examples: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Examples],
  max_damaged_percent: tfx.dsl.components.Parameter[float] = 1.0,
  code_fingerprint: tfx.dsl.components.Parameter[str] = '',
) -> tfx.dsl.components.OutputDict(records=int, damaged_records=int):
  """Counts intact and damaged records; raises executor.DamagedShards above the threshold
  (code_fingerprint: only for the cache key, contracts/fingerprint.py)."""
  totals = executor.check(examples.uri, max_damaged_percent)
  return {'records': totals['good'], 'damaged_records': totals['corrupt']}
