"""The pushed model predict sends its inputs to: where it is, which signature fits the data,
the signature's inputs, whether it predicts classes or a number, and the model's class names."""

import os
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from contracts import serving, trainer_options
from inference import inputs, module_model
from utils import saved_model_ops

SIGNATURE_FOR = {inputs.IMAGES: serving.IMAGE_BYTES, inputs.TFRECORDS: serving.SERVING_DEFAULT}


class Problem(ValueError):
  """No model, or none that takes this data (cli/predict.py: a UserError)."""


class Served(NamedTuple):
  path: str  # the SavedModel folder (…/serving/<version>)
  signature: str
  kinds: Dict[str, str]  # the signature's inputs: name → 'float' (float32: models pushed
  # before predict_columns took float64), 'double', 'int' or 'string'
  class_names: List[str]  # index = class id (serving.class_names; [] for an older model)
  id_columns: Sequence[str] = ()  # the training data's id columns (serving.id_columns)
  image_size: Tuple[int, int] = (0, 0)  # (height, width) images are resized to; (0, 0): unknown
  regression: bool = False  # a number (serving.PREDICTION) per input, not class probabilities
  features: Sequence[str] = ()  # a tabular model's input columns as records name them
  module: Optional[object] = None  # a module file's model: module_model.Parsed (CSV rows are
  # encoded as the tf.Examples its serving_default parses), else None


def _is_saved_model(path: str) -> bool:
  return os.path.isfile(os.path.join(path, 'saved_model.pb'))


def newest_version(serving_dir: str) -> str:
  """The newest <version> folder (the largest number, as TensorFlow Serving picks) holding a
  SavedModel under `serving_dir`; '' when there is none."""
  try:
    names = os.listdir(serving_dir)
  except OSError:
    return ''
  versions = [
    int(n) for n in names if n.isdigit() and _is_saved_model(os.path.join(serving_dir, n))
  ]
  return os.path.join(serving_dir, str(max(versions))) if versions else ''


def find(model: str, output: str) -> str:
  """`--model` (a SavedModel folder, or a serving folder of versions), else the newest version
  under <output>/serving."""
  if model:
    if _is_saved_model(model):
      return os.path.abspath(model)
    newest = newest_version(model)
    if newest:
      return os.path.abspath(newest)
    raise Problem(f'--model {model}: no SavedModel there (saved_model.pb), nor versions of one')
  serving_dir = os.path.join(output, 'serving')
  newest = newest_version(serving_dir)
  if not newest:
    raise Problem(
      f'no pushed model under {serving_dir} (run the pipeline with --output {output} first, or '
      'give --model DIR)'
    )
  return os.path.abspath(newest)


def _dtype(spec) -> str:
  if spec.dtype.is_floating:
    return 'double' if spec.dtype.name == 'float64' else 'float'
  return 'string' if spec.dtype.name == 'string' else 'int'


def _image_size(function) -> Tuple[int, int]:
  """(height, width) an image signature brings every image to: the element shape of its batch
  of uint8 pixels (trainer/image_input.decode_encoded's map_fn stacks them); (0, 0) when the
  signature has none (a model not built by the project)."""
  import tensorflow as tf

  for inner in function.graph.as_graph_def().library.function:
    constants = {node.name: node for node in inner.node_def if node.op == 'Const'}
    for node in inner.node_def:
      if (
        node.op != 'TensorListStack' or node.attr['element_dtype'].type != tf.uint8.as_datatype_enum
      ):
        continue
      shape = constants.get(node.input[1].split(':')[0])
      value = tf.make_ndarray(shape.attr['value'].tensor) if shape else ()
      if len(value) == 3 and min(value) > 0:
        return int(value[0]), int(value[1])
  return 0, 0


def _input_columns(path: str, signatures) -> List[str]:
  """A tabular model's input columns as records name them: the columns it parses
  (serving.columns) that are predict_columns inputs, the label not; [] for a model without
  predict_columns (images, text) or saved without its columns (before issue 60)."""
  if serving.COLUMNS not in signatures:
    return []
  inputs = set(signatures[serving.COLUMNS].structured_input_signature[1])
  return sorted(c for c in serving.columns(path) if serving.column_input(c) in inputs)


def load(path: str, kind: str):
  """(the loaded model, Served) for data of `kind`; raises Problem when the model has no
  signature that takes it."""
  try:
    loaded = saved_model_ops.load(path)
  except Exception as e:  # a damaged or foreign folder: one line
    raise Problem(f'{path}: not a loadable SavedModel ({str(e).splitlines()[0][:200]})') from None
  signatures = dict(loaded.signatures)
  if kind != inputs.IMAGES and module_model.is_module_model(path, signatures):
    return loaded, _module_served(path, signatures)
  if kind == inputs.CSV:
    wanted = [s for s in (serving.TEXT, serving.COLUMNS) if s in signatures]
  else:
    wanted = [SIGNATURE_FOR[kind]] if SIGNATURE_FOR[kind] in signatures else []
  if not wanted:
    needed = {
      inputs.CSV: f'{serving.COLUMNS} or {serving.TEXT}',
      inputs.IMAGES: serving.IMAGE_BYTES,
      inputs.TFRECORDS: serving.SERVING_DEFAULT,
    }[kind]
    raise Problem(
      f'{path}: the model has no {needed} signature for {kind} data (it has '
      f'{", ".join(sorted(signatures)) or "none"}): was it trained on another kind of data?'
    )
  function = signatures[wanted[0]]
  specs = function.structured_input_signature[1]
  lists = {name: spec.shape[1] for name, spec in specs.items() if spec.shape.rank == 2}
  if lists:  # a list column (trainer/signatures.py: [B, N]): a CSV cell holds one value
    name, length = next(iter(lists.items()))
    raise Problem(
      f"{path}: the model takes column '{name}' as a list of {length} values a row, which a CSV "
      'cell cannot hold: predict on TFRecords'
    )
  regression = serving.task(path) == trainer_options.REGRESSION
  output = serving.PREDICTION if regression else serving.PROBABILITIES
  if output not in function.structured_outputs:
    raise Problem(f'{path}: signature {wanted[0]} returns no {output}')
  names = serving.class_names(path)
  kinds = {name: _dtype(spec) for name, spec in specs.items()}
  size = _image_size(function) if kind == inputs.IMAGES else (0, 0)
  features = _input_columns(path, signatures) if kind == inputs.TFRECORDS else []
  served = Served(
    path, wanted[0], kinds, names, serving.id_columns(path), size, regression, features
  )
  return loaded, served


def _module_served(path: str, signatures) -> Served:
  """Served for a module file's model (inference/module_model.py)."""
  parsed = module_model.parse(signatures[serving.SERVING_DEFAULT], signatures)
  if parsed is None:
    raise Problem(
      f'{path}: its {serving.SERVING_DEFAULT} parses no tf.Example features that can be read '
      '(no ParseExampleV2 op with constant keys): which columns it takes cannot be told'
    )
  regression = parsed.meaning == module_model.NUMBER
  kinds = {serving.EXAMPLES_INPUT: 'string'}
  return Served(path, serving.SERVING_DEFAULT, kinds, [], regression=regression, module=parsed)
