"""AnomalyGate: fails the run before training when ExampleValidator found anomalies.

ExampleValidator records anomalies but never stops a pipeline by itself; the Trainer is made
to depend on this gate, so a failing gate means no model is trained on bad data.
"""

from tfx import v1 as tfx

from components.anomaly_gate import executor


@tfx.dsl.components.component
def AnomalyGate(
  anomalies: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.ExampleAnomalies],
  code_fingerprint: tfx.dsl.components.Parameter[str] = '',
) -> None:
  """Passes clean data on; raises AnomaliesFound otherwise (code_fingerprint: the cache key's)."""
  executor.check(anomalies.uri)
