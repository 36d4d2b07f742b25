"""A model a TFX user's module file saved (`run --module-file`; TFX's taxi example): no side
files of the project (columns.json, task.txt), a `serving_default` that takes serialized
tf.Examples (EXAMPLES_INPUT) and returns whatever the user's `run_fn` saved.

Which columns it wants, and as which types, is read from the model itself: the ParseExample op
its serving_default runs (keys and dtypes; a dense key without a default is required, a sparse
one may be absent). Decided over the Transform output's raw schema (found through ML Metadata):
the parse op is what the model really reads, it leaves the label out (the user's serving
function pops it; the raw schema holds it), and it needs no store, so a copied model predicts
too.

What its output means, read from the output's shape and the op that makes it (docs/serving.md):
one output of one value per input made by a Sigmoid is the probability of class 1 (class 0 or
1 and its probability); made by a Dense layer without activation (a `from_logits=True` model)
while transform_features returns an integer label, a logit: its sigmoid is class 1's probability
(the logit itself is never written as one); one of K > 1 values made by a Softmax, class
probabilities; one of K > 1 values made by another op but a Sigmoid, class scores (as the
Evaluator reads any output wider than one): TFX's penguin Keras model's logits (a Dense layer
without activation, trained `from_logits`), its TF-DF model's probabilities (TF-DF's inference
op). Scores are written as they are when each row of a batch is a distribution (in [0, 1],
summing to 1), else their softmax (logits). Anything else a number (the first output's first
value) written as `prediction`."""

import math
from typing import Dict, List, NamedTuple, Optional, Sequence

from contracts import serving
from utils import output_op

SIGMOID, SOFTMAX, SCORES, NUMBER, LOGIT = 'sigmoid', 'softmax', 'scores', 'number', 'logit'
_KIND = {'DT_FLOAT': 'float', 'DT_DOUBLE': 'float', 'DT_INT64': 'int', 'DT_STRING': 'string'}


class Parsed(NamedTuple):
  """What a module model's serving_default reads and returns."""

  kinds: Dict[str, str]  # feature → 'float', 'int' or 'string', in the parse op's order
  required: List[str]  # dense features without a default: a row must hold them
  output: str  # the output read (the first, by name)
  meaning: str  # SIGMOID, SOFTMAX, SCORES, LOGIT or NUMBER


def is_module_model(saved_model_dir: str, signatures) -> bool:
  """A serving_default of serialized tf.Examples and none of the project's side files."""
  function = signatures.get(serving.SERVING_DEFAULT)
  if function is None or serving.COLUMNS in signatures or serving.TEXT in signatures:
    return False
  specs = function.structured_input_signature[1]
  outputs = function.structured_outputs
  project = serving.PROBABILITIES in outputs or serving.PREDICTION in outputs
  return (
    list(specs) == [serving.EXAMPLES_INPUT]
    and specs[serving.EXAMPLES_INPUT].dtype.name == 'string'
    and not project
    and not serving.columns(saved_model_dir)
  )


def _functions(function) -> Dict[str, object]:
  library = function.graph.as_graph_def().library.function
  return {f.signature.name: f for f in library}


def _constant(function_def, name: str):
  import tensorflow as tf

  node = next((n for n in function_def.node_def if n.name == name.split(':')[0]), None)
  while (
    node is not None and node.op in output_op.PASS_THROUGH
  ):  # a default is reshaped to its shape
    node = next((n for n in function_def.node_def if n.name == node.input[0].split(':')[0]), None)
  if node is None or node.op != 'Const':
    return None
  return tf.make_ndarray(node.attr['value'].tensor)


def _parse_ops(function) -> List[tuple]:
  return [
    (f, n) for f in _functions(function).values() for n in f.node_def if n.op == 'ParseExampleV2'
  ]


def parsed_features(function) -> Dict[str, tuple]:
  """{feature: (kind, required)} the signature's ParseExampleV2 ops read; {} when it has none."""
  from tensorflow.core.framework import types_pb2

  found = {}
  for f, node in _parse_ops(function):
    sparse = _constant(f, node.input[2])
    dense = _constant(f, node.input[3])
    if sparse is None or dense is None:
      continue
    sparse_types = node.attr['sparse_types'].list.type
    dense_types = node.attr['Tdense'].list.type
    defaults = node.input[5 : 5 + len(dense)]
    for key, dtype in zip(sparse, sparse_types):
      found[key.decode()] = (_KIND.get(types_pb2.DataType.Name(dtype), 'string'), False)
    for key, dtype, default in zip(dense, dense_types, defaults):
      value = _constant(f, default)
      required = value is None or value.size == 0
      found[key.decode()] = (_KIND.get(types_pb2.DataType.Name(dtype), 'string'), required)
  return found


def _last_op(function) -> str:
  """The op that makes the signature's only output ('' when it cannot be followed)."""
  return output_op.producer(function.graph.as_graph_def(), function.outputs[0].name)


def integer_label(signatures) -> bool:
  """Whether the model's transform_features returns its label as an integer (a classifier's, as
  the Evaluator reads it: components/blessing_evaluator/user_model.py). The label is the raw
  feature transform_features parses and serving_default does not (TFX's templates pop it)."""
  transform = signatures.get(serving.TRANSFORM)
  if transform is None or serving.SERVING_DEFAULT not in signatures:
    return False
  served = parsed_features(signatures[serving.SERVING_DEFAULT])
  outputs = transform.structured_outputs
  raw_labels = [raw for raw in parsed_features(transform) if raw not in served]
  labels = [k for k in (serving.transformed_label(outputs, raw) for raw in raw_labels) if k]
  return len(labels) == 1 and outputs[labels[0]].dtype.is_integer


def meaning(function, signatures=None) -> tuple:
  """(the output read, SIGMOID, SOFTMAX, SCORES, LOGIT or NUMBER) by the output's shape and its
  last op: a one-wide output of a Dense layer without activation (utils/output_op.LINEAR) is a
  LOGIT when the label is an integer (integer_label(signatures)), else a number."""
  outputs = function.structured_outputs
  name = sorted(outputs)[0]
  shape = outputs[name].shape
  width = shape[-1] if shape.rank == 2 else 1 if shape.rank == 1 else None
  if len(outputs) == 1 and outputs[name].dtype.is_floating and width:
    last = _last_op(function)
    if last == output_op.SIGMOID and width == 1:
      return name, SIGMOID
    if last == 'Softmax' and width > 1:
      return name, SOFTMAX
    if last in output_op.LINEAR and width == 1 and integer_label(signatures or {}):
      return name, LOGIT
    if last != output_op.SIGMOID and width > 1:
      return name, SCORES
  return name, NUMBER


def parse(function, signatures=None) -> Optional[Parsed]:
  """What `function` (a module model's serving_default; `signatures`: all the model's) reads
  and returns; None when it runs no ParseExampleV2 op whose keys are constants (its columns
  cannot be told)."""
  features = parsed_features(function)
  if not features:
    return None
  output, what = meaning(function, signatures)
  return Parsed(
    {k: kind for k, (kind, _) in features.items()},
    [k for k, (_, required) in features.items() if required],
    output,
    what,
  )


def encode(values: Dict[str, object], kinds: Dict[str, str], required: Sequence[str]):
  """One CSV row's cells (a number for a 'float', the cell's text otherwise) as a serialized
  tf.Example of the types `kinds` names; an empty or missing cell leaves its feature out.
  (bytes, '') or (None, the reason the row cannot be sent)."""
  import tensorflow as tf

  feature = {}
  for name, kind in kinds.items():
    value = values.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == '':
      if name in required:
        return None, f'column {name}: empty (the model requires it)'
      continue
    if kind == 'float':
      feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(value)]))
    elif kind == 'int':
      try:
        number = float(str(value).strip())
      except ValueError:
        return None, f'column {name}: {str(value)[:40]!r} is not a whole number'
      if not number.is_integer():
        return None, f'column {name}: {value} is not a whole number'
      feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(number)]))
    else:
      text = value if isinstance(value, bytes) else str(value).encode('utf-8')
      feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[text]))
  example = tf.train.Example(features=tf.train.Features(feature=feature))
  return example.SerializeToString(), ''


def standard_outputs(parsed: Parsed, outputs: Dict[str, object]) -> Dict[str, object]:
  """The signature's outputs as the project's: {PROBABILITIES: [B, K]} of a sigmoid, softmax or
  scores (see the module's docstring), {PREDICTION: [B]} of a number."""
  import numpy as np

  values = np.asarray(outputs[parsed.output])
  values = values.reshape(values.shape[0], -1)
  if parsed.meaning == LOGIT:  # class 1's probability is the logit's sigmoid
    values = 1.0 / (1.0 + np.exp(-np.clip(values, -80.0, 80.0)))
  if parsed.meaning in (SIGMOID, LOGIT):
    return {serving.PROBABILITIES: np.concatenate([1.0 - values, values], axis=1)}
  if parsed.meaning == SOFTMAX:
    return {serving.PROBABILITIES: values}
  if parsed.meaning == SCORES:
    return {serving.PROBABILITIES: _probabilities(values)}
  return {serving.PREDICTION: values[:, 0]}


def _probabilities(scores):
  """Class scores as probabilities: as they are when each row is a distribution, else their
  softmax (logits)."""
  import numpy as np

  if ((scores >= 0) & (scores <= 1)).all() and np.allclose(scores.sum(axis=1), 1, atol=1e-3):
    return scores
  shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
  return shifted / shifted.sum(axis=1, keepdims=True)
