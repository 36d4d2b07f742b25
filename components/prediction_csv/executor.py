"""Thin: the predictions CSV from an InferenceResult's folder (predictions.py does the work)."""

from typing import Tuple

from components.prediction_csv import predictions
from contracts import serving, trainer_options


def write(inference_uri: str, model_uri: str, out_dir: str) -> Tuple[str, int]:
  """(the CSV's path, its rows); model_uri: the Trainer's Model artifact."""
  from tfx.utils import path_utils

  path = path_utils.serving_model_path(model_uri)
  return predictions.write(
    inference_uri,
    out_dir,
    serving.class_names(path),
    serving.id_columns(path),
    regression=serving.task(path) == trainer_options.REGRESSION,
  )
