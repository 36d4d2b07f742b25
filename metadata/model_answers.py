"""A saved model's answers on serialized tf.Examples and the labels they are scored against, as
the Evaluator (TFMA) scored its eval split: the one reader of the run report's predictions
(eval_predictions.py) and of monitoring's figures (monitoring/performance.py: the error on
labelled rows; monitoring/regression.py: the predictions' shift). Called in batches.

- The project's models (contracts/serving.py): serving_default's PREDICTION (a number) or
  CLASS_IDS (the top class), and the TRANSFORM signature's EVAL_LABEL_KEY.
- A module file's model (`run --module-file`), read as the Evaluator reads it
  (components/blessing_evaluator/user_model.py): serving_default's output by name (the only, or
  the first); one value a row is the number, or class 1's probability (class 1 above 0.5, as TFMA
  reads a binary classifier's score) — or its logit when a Dense layer without activation makes
  it (utils/output_op: class 1 above 0, as the Evaluator reads it) —, more are class scores (the top class); the label is the raw
  label as its transform_features returns it (serving.transformed_label: `tips` → `tips_xf`) or,
  without that signature, the raw label's number in the record.
"""

from typing import List, NamedTuple, Optional, Tuple

import numpy as np

from contracts import serving
from utils import output_op, saved_model_ops

BATCH_SIZE = 256
THRESHOLD = 0.5  # a one-wide classifier's class 1 above it (TFMA's binary reading)
LOGIT_THRESHOLD = 0.0  # the same for a logit (its sigmoid above 0.5)


class Answers(NamedTuple):
  """A loaded model's serving_default and transform_features, and what to read of them."""

  signatures: object  # the loaded model's signatures (kept: the functions need it alive)
  output: str  # serving_default's output read
  project: bool  # the project's contract (PREDICTION / CLASS_IDS, EVAL_LABEL_KEY)
  regression: bool
  label: str  # the raw label (a module file's model: its transformed output is scored)
  threshold: float = THRESHOLD  # a one-wide classifier's class 1 above it


def load(saved_model_dir: str, regression: bool, label: str = '') -> Optional[Answers]:
  """The model's reader; None when its serving_default does not take serialized tf.Examples
  or (the project's models) lacks the output `regression` asks for."""
  signatures = saved_model_ops.load(saved_model_dir).signatures
  serve = signatures.get(serving.SERVING_DEFAULT)
  if serve is None or list(serve.structured_input_signature[1]) != [serving.EXAMPLES_INPUT]:
    return None
  outputs = serve.structured_outputs
  project = serving.PROBABILITIES in outputs or serving.PREDICTION in outputs
  if project:
    output = serving.PREDICTION if regression else serving.CLASS_IDS
    if output not in outputs:
      return None
    return Answers(signatures, output, project, regression, label)
  output = sorted(outputs)[0]
  made_by = output_op.producer(serve.graph.as_graph_def(), serve.outputs[0].name)  # sorted first
  threshold = LOGIT_THRESHOLD if made_by in output_op.LINEAR else THRESHOLD
  return Answers(signatures, output, project, regression, label, threshold)


def _answers(function, key: str, records: List[bytes]) -> np.ndarray:
  """`function`'s output `key` of each record as floats [rows, width], in batches; a record it
  cannot read (a value its parsing requires is missing) is a row of NaN, found one by one in
  the batch that failed."""
  import tensorflow as tf

  def call(chunk):
    values = function(**{serving.EXAMPLES_INPUT: tf.constant(chunk)})[key]
    return np.asarray(values, np.float64).reshape(len(chunk), -1)

  found = []
  for start in range(0, len(records), BATCH_SIZE):
    chunk = records[start : start + BATCH_SIZE]
    try:
      found.append(call(chunk))
      continue
    except tf.errors.InvalidArgumentError:
      pass
    rows = []
    for record in chunk:
      try:
        rows.append(call([record]))
      except tf.errors.InvalidArgumentError:
        rows.append(None)
    width = max((row.shape[1] for row in rows if row is not None), default=1)
    found += [row if row is not None else np.full([1, width], np.nan) for row in rows]
  return np.concatenate(found) if found else np.zeros([0, 1])


def predicted(answers: Answers, records: List[bytes]) -> np.ndarray:
  """The number (regression) or top class id of each record, as floats (NaN: a record the model
  cannot read)."""
  values = _answers(answers.signatures[serving.SERVING_DEFAULT], answers.output, records)
  unread = np.isnan(values).any(axis=1)
  if answers.project or answers.regression:  # CLASS_IDS, PREDICTION, a module's number
    return values[:, 0]
  if values.shape[1] == 1:  # class 1's probability
    classes = (values[:, 0] > answers.threshold).astype(float)
  else:
    classes = values.argmax(1).astype(float)
  return np.where(unread, np.nan, classes)


def actual(answers: Answers, records: List[bytes]) -> Optional[np.ndarray]:
  """The label each record is scored against, as floats (a class id: -1 for a class the train
  split did not have; NaN: a record the model cannot read); None when it cannot be told (no
  transform_features and a raw label that is not a number)."""
  transform = answers.signatures.get(serving.TRANSFORM)
  if transform is None:
    return None if answers.project else raw_labels(records, answers.label)
  outputs = transform.structured_outputs
  key = serving.EVAL_LABEL_KEY if answers.project else None
  key = key or serving.transformed_label(outputs, answers.label)
  if key not in outputs:
    return None
  return _answers(transform, key, records)[:, 0]


def raw_labels(records: List[bytes], label: str) -> Optional[np.ndarray]:
  """`label`'s first value in each record as a number (NaN where it has none); None when one is
  text that is not a number."""
  import tensorflow as tf

  values = []
  for serialized in records:
    feature = tf.train.Example.FromString(serialized).features.feature.get(label)
    kind = feature.WhichOneof('kind') if feature is not None else None
    found = list(getattr(feature, kind).value) if kind else []
    try:
      values.append(float(found[0]) if found else np.nan)
    except ValueError:
      return None
  return np.asarray(values, np.float64)


def scored(
  saved_model_dir: str, records: List[bytes], regression: bool, label: str = ''
) -> Optional[Tuple[np.ndarray, np.ndarray]]:
  """(predicted, actual) of `records`; None when the model cannot be scored on them."""
  answers = load(saved_model_dir, regression, label)
  labels = actual(answers, records) if answers else None
  if labels is None:
    return None
  return predicted(answers, records), labels
