"""The serving signatures' names, inputs and outputs: what trainer/signatures.py saves with the
model and the Evaluator, the serving check and the run report call (docs/serving.md).

Every prediction signature returns PROBABILITIES (one per class, summing to 1), CLASS_IDS (the
top class) and CLASS_NAMES (its name).
"""

SERVING_DEFAULT = 'serving_default'  # EXAMPLES: serialized records as the ExampleGen wrote them
IMAGE_BYTES = 'predict_image_bytes'  # IMAGE_BYTES_INPUT: JPEG/PNG bytes of any size
COLUMNS = 'predict_columns'  # one input per tabular column, by its name
TEXT = 'predict_text'  # TEXT_INPUT: raw strings
TRANSFORM = 'transform_features'  # EXAMPLES → {EVAL_LABEL_KEY}: TFMA's preprocessing function

EXAMPLES_INPUT = 'examples'
IMAGE_BYTES_INPUT = 'image_bytes'
TEXT_INPUT = 'text'

PROBABILITIES = 'probabilities'
CLASS_IDS = 'class_ids'
CLASS_NAMES = 'class_names'
EVAL_LABEL_KEY = 'eval_label'  # the label the model is scored against (TRANSFORM's output)

CHECK_EXAMPLES = 64  # eval examples the serving check sends to every signature
