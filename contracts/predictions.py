"""The predictions CSV: what `pipeline.py predict` writes and the DAG's BulkInferrer step
(`run --infer-data`) writes beside its InferenceResult, one row per input:

  id           the input's file path below --data, or `FILE:ROW` for a row of a CSV / a
               record of a TFRecord file (ROW counts data rows from 1, the header excluded)
  class        the predicted class: its name where the model has names, else its id
  probability  the predicted class's probability
  top_k        the K most probable classes, most probable first: `name=0.912;other=0.051;…`

A regression model's (contracts/serving.task) has `prediction`, the predicted number in the
label's units (float32, written as its shortest exact text), instead of class, probability and
top_k.

A model trained with id columns (contracts/serving.ID_COLUMNS_ASSET) adds one column per id
column after `id`, holding the input's value (named as in the data; `input_<name>` where that name
is one of the above).
"""

from typing import Dict, Sequence, Tuple

import numpy as np

ID = 'id'
CLASS = 'class'
PROBABILITY = 'probability'
TOP_K = 'top_k'
PREDICTION = 'prediction'
HEADER = (ID, CLASS, PROBABILITY, TOP_K)
REGRESSION_HEADER = (ID, PREDICTION)
DEFAULT_TOP_K = 3
FILE_NAME = 'predictions.csv'  # in the InferenceResult step's output and predict's default --out


def carried(column: str) -> str:
  """The predictions CSV's name for an id column of the input."""
  return f'input_{column}' if column in HEADER + REGRESSION_HEADER else column


def header(id_columns: Sequence[str] = (), regression: bool = False) -> Tuple[str, ...]:
  """HEADER (REGRESSION_HEADER for a regression model) with the model's id columns after ID."""
  answer = REGRESSION_HEADER[1:] if regression else HEADER[1:]
  return (ID, *(carried(c) for c in id_columns), *answer)


def is_header(line: str) -> bool:
  """Whether `line` is a predictions CSV's header, with id columns or not."""
  cells = line.strip().split(',')
  return cells[:1] == [ID] and (
    cells[-3:] == list(HEADER[1:]) or (len(cells) > 1 and cells[-1] == PREDICTION)
  )


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


def regression_row(input_id: str, prediction: float) -> Dict:
  """One CSV row of a regression model: the number as float32 writes it shortest."""
  return {ID: input_id, PREDICTION: str(np.float32(prediction))}
