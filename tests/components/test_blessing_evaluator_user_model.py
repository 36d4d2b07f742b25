"""A module file's model read from its saved_model.pb as TFX's templates configure TFMA, and a
one-wide sigmoid scored as two classes; a one-wide logit (a Keras Dense(1) of a from_logits
model) told from the graph and scored above 0 as class 1."""

import numpy as np
import pytest
from tensorflow.core.framework import types_pb2
from tensorflow.core.protobuf import saved_model_pb2
import tensorflow_model_analysis as tfma

from components.blessing_evaluator import eval_config, top_class_metrics, user_model
from contracts import evaluation, serving
from tests.support import keras_module_models


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


@pytest.mark.parametrize('logits', [False, True])
def test_a_keras_dense_without_activation_is_read_as_a_logit(tmp_path, logits):
  model_dir = keras_module_models.save(str(tmp_path / 'model'), logits)
  model = user_model.describe(model_dir, keras_module_models.LABEL)
  assert (model.width, model.label_key, model.label_dtype) == (1, 'label_xf', 'DT_INT64')
  assert model.logit(task_regression=False) == logits
  assert model.reading(False) == (
    'a logit of class 1 (above 0: class 1)'
    if logits
    else "class 1's probability (above 0.5: class 1)"
  )
  assert not model.logit(task_regression=True) or model.label_dtype  # the label decides


def test_a_logit_is_class_1_above_0():
  inputs = tfma.metrics.StandardMetricInputs(
    labels=np.array([1]), predictions=np.array([0.3], dtype=np.float32)
  )
  [(_, read_as_logit, _)] = list(
    top_class_metrics.class_scores_label_and_weight(inputs, logit=True)
  )
  [(_, read_as_probability, _)] = list(top_class_metrics.class_scores_label_and_weight(inputs))
  assert int(np.argmax(read_as_logit)) == 1 and int(np.argmax(read_as_probability)) == 0
  assert read_as_logit[1] == pytest.approx(1 / (1 + np.exp(-0.3)))


def _examples(path, xs) -> str:
  import tensorflow as tf

  with tf.io.TFRecordWriter(path) as writer:
    for x in xs:
      feature = {
        'x': tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
        keras_module_models.LABEL: tf.train.Feature(int64_list=tf.train.Int64List(value=[x > 0])),
      }
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )
  return path


@pytest.mark.parametrize('logits', [False, True])
def test_tfma_scores_a_logit_model_as_right_as_a_sigmoid_one(tmp_path, logits):
  """x > 0 is class 1: the sigmoid model and the logit model are both always right, once the
  logit is read as one (read as a probability, its 0 < logit < 0.5 rows would be class 0)."""
  from tfx.utils import proto_utils

  model_dir = keras_module_models.save(str(tmp_path / 'model'), logits)
  model = user_model.describe(model_dir, keras_module_models.LABEL)
  built = eval_config.with_parameters(
    proto_utils.proto_to_json(eval_config.build(0.9, 0.01, label_key=serving.EVAL_LABEL_KEY)),
    0.9,
    model.classes,
  )
  config = user_model.configured(proto_utils.json_to_proto(built, tfma.EvalConfig()), model)
  config = proto_utils.json_to_proto(
    eval_config.with_logit_models(
      proto_utils.proto_to_json(config), [evaluation.CANDIDATE] if model.logit(False) else []
    ),
    tfma.EvalConfig(),
  )
  del config.model_specs[1:]  # no serving model, no comparison with one
  for spec in config.metrics_specs:
    for metric in spec.metrics:
      for threshold in metric.per_slice_thresholds:
        threshold.threshold.ClearField('change_threshold')
  xs = [0.1, 0.15, -0.1, -0.15, 0.05, -0.05]  # logits ±0.15 to ±0.45
  result = tfma.run_model_analysis(
    eval_shared_model=tfma.default_eval_shared_model(
      model_dir, eval_config=config, model_name=evaluation.CANDIDATE
    ),
    eval_config=config,
    data_location=_examples(str(tmp_path / 'eval.tfrecord'), xs),
    output_path=str(tmp_path / 'out'),
  )
  [(_, metrics)] = result.slicing_metrics[:1]
  figures = metrics['']['']
  assert figures[evaluation.ACCURACY_KEY]['doubleValue'] == pytest.approx(1.0)
