"""DriftCheck: stops the run before training when a new data version drifted from the previous.

The previous version's statistics come from a Resolver (the latest ExampleStatistics published
before this run); on the first run there are none and the check passes. Only comparators the
curated schema configures are applied.
"""

from tfx.dsl.component.experimental.annotations import InputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts

from components.drift_check import executor

_Statistics = standard_artifacts.ExampleStatistics


@component
def DriftCheck(
  statistics: InputArtifact[_Statistics],
  schema: InputArtifact[standard_artifacts.Schema],
  previous_statistics: InputArtifact[_Statistics] = None,
  code_fingerprint: Parameter[str] = '',
) -> None:
  """Raises executor.DriftFound when the schema's drift comparators fire (code_fingerprint: only
  for the cache key, utils/fingerprint.py)."""
  executor.check(
    statistics.uri, previous_statistics.uri if previous_statistics else None, schema.uri
  )
