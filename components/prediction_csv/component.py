"""PredictionCsv: the BulkInferrer's InferenceResult (PredictionLogs) as predictions.csv
(contracts/predictions.py) in its own output artifact, with the row count as a property."""

from tfx import v1 as tfx
from tfx.types import artifact

from components.prediction_csv import executor

ROWS_PROPERTY = 'rows'  # int custom property of the output: the CSV's rows (inputs inferred)


class Predictions(artifact.Artifact):
  """A folder holding predictions.csv."""

  TYPE_NAME = 'tfrp.Predictions'  # KFP v2 wants <namespace>.<Name> for custom types


@tfx.dsl.components.component
def PredictionCsv(
  inference_result: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.InferenceResult],
  model: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Model],
  predictions: tfx.dsl.components.OutputArtifact[Predictions],
  code_fingerprint: tfx.dsl.components.Parameter[str] = '',
) -> None:
  """Writes predictions.csv under predictions.uri, classes named as the model names them
  (code_fingerprint: the cache key's)."""
  _, count = executor.write(inference_result.uri, model.uri, predictions.uri)
  predictions.set_int_custom_property(ROWS_PROPERTY, count)
