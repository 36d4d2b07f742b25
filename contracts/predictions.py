"""The predictions CSV: what `pipeline.py predict` writes and the DAG's BulkInferrer step
(`run --infer-data`) writes beside its InferenceResult, one row per input:

  id           the input's file path below --data, or `FILE:ROW` for a row of a CSV / a
               record of a TFRecord file (ROW counts data rows from 1, the header excluded)
  class        the predicted class: its name where the model has names, else its id
  probability  the predicted class's probability
  top_k        the K most probable classes, most probable first: `name=0.912;other=0.051;…`
"""

from typing import Dict, Sequence

import numpy as np

ID = 'id'
CLASS = 'class'
PROBABILITY = 'probability'
TOP_K = 'top_k'
HEADER = (ID, CLASS, PROBABILITY, TOP_K)
DEFAULT_TOP_K = 3
FILE_NAME = 'predictions.csv'  # in the InferenceResult step's output and predict's default --out


def row(input_id: str, probabilities: np.ndarray, class_names: Sequence[str], k: int) -> Dict:
  """One CSV row from one input's class probabilities ([num_classes]); class_names[i] names
  class i ('' or a short list: the id is written)."""
  names = [
    class_names[i] if i < len(class_names) and class_names[i] else str(i)
    for i in range(len(probabilities))
  ]
  order = np.argsort(-probabilities, kind='stable')[:k]
  best = int(order[0])
  return {
    ID: input_id,
    CLASS: names[best],
    PROBABILITY: f'{probabilities[best]:.6g}',
    TOP_K: ';'.join(f'{names[i]}={probabilities[i]:.6g}' for i in order),
  }
