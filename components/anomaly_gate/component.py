"""AnomalyGate: fails the run before training when ExampleValidator found anomalies.

ExampleValidator records anomalies but never stops a pipeline by itself; the Trainer is made
to depend on this gate, so a failing gate means no model is trained on bad data.
"""

from tfx.dsl.component.experimental.annotations import InputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts

from components.anomaly_gate import executor


@component
def AnomalyGate(
  anomalies: InputArtifact[standard_artifacts.ExampleAnomalies],
  code_fingerprint: Parameter[str] = '',
) -> None:
  """Passes clean data on; raises AnomaliesFound otherwise (code_fingerprint: the cache key's)."""
  executor.check(anomalies.uri)
