"""Which eval classes a model never predicts: read from TFMA's confusion matrix, without TFX.

A model that always answers the majority class of 990:10 labels has accuracy 0.99 and is useless
for the minority class. The confusion matrix (threshold 0: the top class) says it directly: no
example of that class lands on the diagonal.
"""

from typing import Dict, List

import tensorflow_model_analysis as tfma

from contracts import evaluation


def confusion_rows(evaluation_uri: str) -> Dict[int, Dict[int, float]]:
  """{true class id: {predicted class id: examples}} of the candidate on the whole eval split."""
  for for_slice in tfma.load_plots(evaluation_uri):
    if for_slice.slice_key.single_slice_keys:
      continue
    for key_and_value in for_slice.plot_keys_and_values:
      if key_and_value.key.model_name not in ('', evaluation.CANDIDATE):
        continue
      matrices = key_and_value.value.multi_class_confusion_matrix_at_thresholds.matrices
      if matrices:
        rows: Dict[int, Dict[int, float]] = {}
        for entry in matrices[0].entries:
          row = rows.setdefault(entry.actual_class_id, {})
          row[entry.predicted_class_id] = (
            row.get(entry.predicted_class_id, 0.0) + entry.num_weighted_examples
          )
        return rows
  return {}


def missed_classes(rows: Dict[int, Dict[int, float]]) -> List[dict]:
  """[{'class_id': c, 'examples': n}] for each class with eval examples none of which the model
  predicts as c, by class id."""
  return [
    {'class_id': class_id, 'examples': int(round(sum(row.values())))}
    for class_id, row in sorted(rows.items())
    if class_id >= 0 and sum(row.values()) > 0 and not row.get(class_id)
  ]
