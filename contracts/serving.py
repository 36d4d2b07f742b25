"""The serving signatures' names, inputs and outputs: what trainer/signatures.py saves with the
model and the Evaluator, the serving check and the run report call (docs/serving.md).

Every prediction signature of a classifier returns PROBABILITIES (one per class, summing to 1),
CLASS_IDS (the top class) and CLASS_NAMES (its name); of a regression model, PREDICTION only (the
number, in the label's units, float32 [batch]; BULK_INFERENCE's as [batch, 1]). TASK_ASSET says
which (`task`).
"""

import json
import re
from typing import Dict, List

SERVING_DEFAULT = 'serving_default'  # EXAMPLES: serialized records as the ExampleGen wrote them
IMAGE_BYTES = 'predict_image_bytes'  # IMAGE_BYTES_INPUT: JPEG/PNG bytes of any size
COLUMNS = 'predict_columns'  # one input per tabular column, named column_input(column)
TEXT = 'predict_text'  # TEXT_INPUT: raw strings
TRANSFORM = 'transform_features'  # EXAMPLES → {EVAL_LABEL_KEY}: TFMA's preprocessing function
# serving_default's answer with CLASS_NAMES as [batch, 1]: TFX's BulkInferrer (tfx-bsl) splits
# every output by row and needs each row to be an array, which a string of a [batch] output is not.
BULK_INFERENCE = 'bulk_inference'
CLASS_NAMES_ASSET = 'labels.txt'  # assets/labels.txt of a SavedModel: line i names class i
# assets/id_columns.txt: the training data's id columns (no input; predict copies them to its rows)
ID_COLUMNS_ASSET = 'id_columns.txt'
# assets/columns.json: {column: dtype} of what a tabular model parses from a record (its features
# and its label; a list column's with its length: `float32[64]`): whether the serving model can
# be scored on another run's data (the Evaluator).
COLUMNS_ASSET = 'columns.json'
# assets/task.txt: 'regression' for a regression model (absent: a classifier, as every model
# saved before regression was built).
TASK_ASSET = 'task.txt'

EXAMPLES_INPUT = 'examples'
IMAGE_BYTES_INPUT = 'image_bytes'
TEXT_INPUT = 'text'

PROBABILITIES = 'probabilities'
CLASS_IDS = 'class_ids'
CLASS_NAMES = 'class_names'
PREDICTION = 'prediction'  # regression: the predicted number, float32 [batch]
EVAL_LABEL_KEY = 'eval_label'  # the label the model is scored against (TRANSFORM's output)

CHECK_EXAMPLES = 64  # eval examples the serving check sends to every signature


def column_input(column: str) -> str:
  """The name of a column's input in COLUMNS and of its Keras input layer: TensorFlow names
  take letters, digits and `_.-` only, Keras no `/` (`speed_km/h` → `speed_km_h`,
  `colour (name)` → `colour__name_`); a name that starts otherwise gets a `c`."""
  name = re.sub(r'[^A-Za-z0-9_.-]', '_', column)
  return name if re.match(r'[A-Za-z0-9.]', name) else 'c' + name


def transformed_label(names, label: str):
  """Which of a transform's outputs (`names`) is the raw label `label` transformed: itself, its
  `_xf` name (TFX's templates), or the only one whose name starts with it; None when none is
  (a module file's model, docs/design/module_files.md)."""
  for name in (label, f'{label}_xf'):
    if name in names:
      return name
  starting = [name for name in names if name.startswith(label)]
  return starting[0] if len(starting) == 1 else None


def class_names(saved_model_dir: str) -> List[str]:
  """The class names saved with a model (CLASS_NAMES_ASSET; line i names class i); [] for a
  model saved without them."""
  return _asset_lines(saved_model_dir, CLASS_NAMES_ASSET)


def id_columns(saved_model_dir: str) -> List[str]:
  """The id columns saved with a model (ID_COLUMNS_ASSET, one a line); [] for none."""
  return _asset_lines(saved_model_dir, ID_COLUMNS_ASSET)


def columns(saved_model_dir: str) -> Dict[str, str]:
  """{column: dtype} a model parses from a record (COLUMNS_ASSET); {} for a model saved without
  them (images and text, whose record layout is the project's; tabular models before issue 60)."""
  return json.loads(''.join(_asset_lines(saved_model_dir, COLUMNS_ASSET)) or '{}')


def task(saved_model_dir: str) -> str:
  """'regression' or 'classification': what a saved model predicts (TASK_ASSET)."""
  lines = _asset_lines(saved_model_dir, TASK_ASSET)
  return lines[0] if lines else 'classification'


def _asset_lines(saved_model_dir: str, asset: str) -> List[str]:
  import tensorflow as tf

  path = f'{saved_model_dir.rstrip("/")}/assets/{asset}'
  if not tf.io.gfile.exists(path):
    return []
  with tf.io.gfile.GFile(path) as f:
    return f.read().splitlines()
