"""A module file's model read from its saved_model.pb as TFX's templates configure TFMA, and a
one-wide sigmoid scored as two classes."""

import numpy as np
import pytest
from tensorflow.core.framework import types_pb2
from tensorflow.core.protobuf import saved_model_pb2
import tensorflow_model_analysis as tfma

from components.blessing_evaluator import eval_config, top_class_metrics, user_model
from contracts import serving


def _saved_model(tmp_path, outputs: dict, transform: dict = None) -> str:
  """A saved_model.pb holding only signatures: {output: (dtype, width)}."""
  saved = saved_model_pb2.SavedModel()
  graph = saved.meta_graphs.add()
  for name, answers in ((serving.SERVING_DEFAULT, outputs), (serving.TRANSFORM, transform)):
    if answers is None:
      continue
    signature = graph.signature_def[name]
    for key, (dtype, width) in answers.items():
      info = signature.outputs[key]
      info.dtype = dtype
      info.tensor_shape.dim.add().size = -1
      if width:
        info.tensor_shape.dim.add().size = width
  (tmp_path / 'saved_model.pb').write_bytes(saved.SerializeToString())
  return str(tmp_path)


def test_taxi_model_is_two_classes_scored_against_tips_xf(tmp_path):
  model_dir = _saved_model(
    tmp_path,
    {'outputs': (types_pb2.DT_FLOAT, 1)},
    {'tips_xf': (types_pb2.DT_INT64, 0), 'fare_xf': (types_pb2.DT_FLOAT, 0)},
  )
  assert user_model.is_user_model(model_dir)
  model = user_model.describe(model_dir, 'tips')
  assert (model.prediction_key, model.label_key, model.transform) == ('outputs', 'tips_xf', True)
  assert not model.regression(task_regression=True) and model.classes == 2


def test_float_label_regresses_and_wide_output_is_classes(tmp_path):
  regression = user_model.describe(
    _saved_model(tmp_path, {'y': (types_pb2.DT_FLOAT, 1)}, {'fare_xf': (types_pb2.DT_FLOAT, 0)}),
    'fare',
  )
  assert regression.regression(task_regression=False) and regression.label_key == 'fare_xf'
  (tmp_path / 'wide').mkdir()
  wide = user_model.describe(
    _saved_model(tmp_path / 'wide', {'logits': (types_pb2.DT_FLOAT, 3)}), 'species'
  )
  assert (wide.classes, wide.label_key, wide.transform) == (3, 'species', False)
  assert not wide.regression(task_regression=True)


def test_project_model_is_not_a_user_model(tmp_path):
  model_dir = _saved_model(tmp_path, {serving.PROBABILITIES: (types_pb2.DT_FLOAT, 3)})
  assert not user_model.is_user_model(model_dir)


def test_configured_reads_the_model_as_tfx_templates_do():
  config = eval_config.build(0.5, 0.01, label_key=serving.EVAL_LABEL_KEY)
  model = user_model.UserModel('outputs', 1, 'tips_xf', 'DT_INT64', True)
  for spec in user_model.configured(config, model).model_specs:
    assert (spec.signature_name, spec.prediction_key, spec.label_key) == (
      serving.SERVING_DEFAULT,
      'outputs',
      'tips_xf',
    )
    assert list(spec.preprocessing_function_names) == [serving.TRANSFORM]


@pytest.mark.parametrize('probability, top', [(0.8, 1), (0.3, 0)])
def test_one_wide_sigmoid_is_two_class_scores(probability, top):
  inputs = tfma.metrics.StandardMetricInputs(
    labels=np.array([1]), predictions=np.array([probability], dtype=np.float32)
  )
  [(label, prediction, _)] = list(top_class_metrics.class_scores_label_and_weight(inputs))
  assert prediction.shape == (2,) and int(np.argmax(prediction)) == top and int(label) == 1
