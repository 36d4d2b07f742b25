"""A module file's model (--module-file: TFX's run_fn trained it) as the Evaluator reads it,
configured as TFX's templates configure TFMA: serving_default on the raw eval examples,
`preprocessing_function_names=['transform_features']` when the model has that signature, the
label as that signature returns it (the raw label's transformed output, e.g. the taxi example's
`tips_xf`). What the model predicts is read from the SavedModel, without loading it: an output
wider than one is class scores (the top class predicted); a one-wide output is the probability of
class 1 when the label it is scored against is an integer, else a number (regression). Without
`transform_features`, the label is the raw column and a one-wide output regresses when the run's
task is regression. A one-wide classifier's output made by a Dense layer without activation
(its last op a BiasAdd or MatMul, utils/output_op.py: a `from_logits=True` model) is a logit:
class 1 when it is above 0 (top_class_metrics.py applies the sigmoid); made by a Sigmoid, or by an
op that cannot be told (TF-DF's), class 1's probability. Runs without TFX.
"""

import dataclasses
import os
from typing import Dict

from tensorflow.core.framework import types_pb2
from tensorflow.core.protobuf import saved_model_pb2
from tfx.dsl.io import fileio

from contracts import serving
from utils import output_op

INTEGERS = (types_pb2.DT_INT64, types_pb2.DT_INT32, types_pb2.DT_INT16, types_pb2.DT_INT8)
INTEGER_NAMES = {types_pb2.DataType.Name(t) for t in INTEGERS}


@dataclasses.dataclass(frozen=True)
class UserModel:
  prediction_key: str  # serving_default's output scored
  width: int  # its last dimension (1: one number, or class 1's probability)
  label_key: str  # the label TFMA scores against
  label_dtype: str  # its type as transform_features returns it ('' without it)
  transform: bool  # the model has transform_features
  output_op: str = ''  # the op that makes the output scored ('' when it cannot be followed)

  def regression(self, task_regression: bool) -> bool:
    """Whether the model predicts a number (see the module's docstring)."""
    if self.width != 1:
      return False
    if self.label_dtype:
      return self.label_dtype not in INTEGER_NAMES
    return task_regression

  def logit(self, task_regression: bool) -> bool:
    """A one-wide classifier's output that is a logit (see the module's docstring)."""
    return (
      not self.regression(task_regression)
      and self.width == 1
      and self.output_op in (output_op.LINEAR)
    )

  def reading(self, task_regression: bool) -> str:
    """What the output is read as, in words (the blessing's MODEL_READING, the summary)."""
    if self.regression(task_regression):
      return 'a number'
    if self.width != 1:
      return f'scores of {self.width} classes (the top one)'
    if self.logit(task_regression):
      return 'a logit of class 1 (above 0: class 1)'
    return "class 1's probability (above 0.5: class 1)"

  @property
  def classes(self) -> int:
    return 2 if self.width == 1 else self.width


def _meta_graph(saved_model_dir: str):
  saved = saved_model_pb2.SavedModel()
  with fileio.open(os.path.join(saved_model_dir, 'saved_model.pb'), 'rb') as f:
    saved.ParseFromString(f.read())
  return saved.meta_graphs[0]


def _signatures(saved_model_dir: str) -> dict:
  return _meta_graph(saved_model_dir).signature_def


def is_user_model(saved_model_dir: str) -> bool:
  """A model that is not of the project's contract: its serving_default answers neither
  probabilities nor a prediction (contracts/serving.py); False for a folder without one."""
  if not fileio.exists(os.path.join(saved_model_dir, 'saved_model.pb')):
    return False
  outputs = _signatures(saved_model_dir)[serving.SERVING_DEFAULT].outputs
  return serving.PROBABILITIES not in outputs and serving.PREDICTION not in outputs


def prediction_output(outputs) -> str:
  """The output scored: the project's names first, else the only (or first) output."""
  for name in (serving.PROBABILITIES, serving.PREDICTION):
    if name in outputs:
      return name
  return sorted(outputs)[0]


def width(outputs, name: str) -> int:
  dims = outputs[name].tensor_shape.dim
  return dims[-1].size if len(dims) > 1 and dims[-1].size > 0 else 1


def describe(saved_model_dir: str, label: str) -> UserModel:
  meta_graph = _meta_graph(saved_model_dir)
  signatures = meta_graph.signature_def
  outputs = signatures[serving.SERVING_DEFAULT].outputs
  key = prediction_output(outputs)
  transform: Dict = {}
  if serving.TRANSFORM in signatures:
    transform = signatures[serving.TRANSFORM].outputs
  label_key = serving.transformed_label(transform, label) if transform else None
  return UserModel(
    prediction_key=key,
    width=width(outputs, key),
    label_key=label_key or label,
    label_dtype=types_pb2.DataType.Name(transform[label_key].dtype) if label_key else '',
    transform=bool(transform),
    output_op=output_op.producer(meta_graph.graph_def, outputs[key].name),
  )


def configured(eval_config, model: UserModel):
  """eval_config (a tfma.EvalConfig) whose model specs read `model` as TFX's templates do."""
  for spec in eval_config.model_specs:
    spec.prediction_key = model.prediction_key
    spec.label_key = model.label_key
    spec.preprocessing_function_names[:] = [serving.TRANSFORM] if model.transform else []
  return eval_config
