"""DriftCheck: stops the run before training when a new data version drifted from the previous.

The previous version's statistics come from a Resolver (the latest ExampleStatistics published
before this run); on the first run there are none and the check passes. Only comparators the
curated schema configures are applied.
"""

from tfx import v1 as tfx

from components.drift_check import executor

_Statistics = tfx.types.standard_artifacts.ExampleStatistics


@tfx.dsl.components.component
def DriftCheck(
  statistics: tfx.dsl.components.InputArtifact[_Statistics],
  schema: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Schema],
  previous_statistics: tfx.dsl.components.InputArtifact[_Statistics] = None,
  code_fingerprint: tfx.dsl.components.Parameter[str] = '',
) -> None:
  """Raises executor.DriftFound when the schema's drift comparators fire (code_fingerprint: only
  for the cache key, contracts/fingerprint.py)."""
  executor.check(
    statistics.uri, previous_statistics.uri if previous_statistics else None, schema.uri
  )
