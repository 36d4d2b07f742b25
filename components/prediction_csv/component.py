"""PredictionCsv: the BulkInferrer's InferenceResult (PredictionLogs) as predictions.csv
(contracts/predictions.py) in its own output artifact, with the row count as a property."""

from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import artifact, standard_artifacts

from components.prediction_csv import executor

ROWS_PROPERTY = 'rows'  # int custom property of the output: the CSV's rows (inputs inferred)


class Predictions(artifact.Artifact):
  """A folder holding predictions.csv."""

  TYPE_NAME = 'tfrp.Predictions'  # KFP v2 wants <namespace>.<Name> for custom types


@component
def PredictionCsv(
  inference_result: InputArtifact[standard_artifacts.InferenceResult],
  model: InputArtifact[standard_artifacts.Model],
  predictions: OutputArtifact[Predictions],
  code_fingerprint: Parameter[str] = '',
) -> None:
  """Writes predictions.csv under predictions.uri, classes named as the model names them
  (code_fingerprint: the cache key's)."""
  _, count = executor.write(inference_result.uri, model.uri, predictions.uri)
  predictions.set_int_custom_property(ROWS_PROPERTY, count)
