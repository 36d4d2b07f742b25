"""BlessingEvaluator on a regression model: its TFMA configuration, the figures of
regression_metrics.py, and one TFMA run of two tiny saved models (candidate and serving)."""

import json
import math
import types

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_model_analysis as tfma
from tfx.utils import proto_utils

from components.blessing_evaluator import eval_config, executor, regression_metrics
from contracts import artifacts, evaluation, serving
from metadata import artifact_reader


def _metric(config: tfma.EvalConfig, class_name: str):
  (found,) = [m for s in config.metrics_specs for m in s.metrics if m.class_name == class_name]
  return found


def _threshold(config: tfma.EvalConfig, class_name: str):
  (per_slice,) = _metric(config, class_name).per_slice_thresholds
  assert list(per_slice.slicing_specs) == [tfma.SlicingSpec()]  # the whole eval split only
  return per_slice.threshold


def test_a_regression_config_scores_the_prediction_lower_is_better():
  built = eval_config.build_regression(
    0.1, 0.05, max_mae=3.0, slice_features=['city'], label_key=serving.EVAL_LABEL_KEY
  )
  tfma.utils.verify_eval_config(built)
  assert {s.prediction_key for s in built.model_specs} == {serving.PREDICTION}
  assert {s.label_key for s in built.model_specs} == {serving.EVAL_LABEL_KEY}
  assert [list(s.feature_keys) for s in built.slicing_specs] == [[], ['city']]
  assert {m.module for s in built.metrics_specs for m in s.metrics} == {
    evaluation.REGRESSION_METRICS_MODULE
  }
  improvement = _threshold(built, 'ImprovementOverMeanPredictor')
  assert improvement.value_threshold.lower_bound.value == pytest.approx(0.1)
  rmse = _threshold(built, 'RegressionRootMeanSquaredError')
  assert rmse.change_threshold.direction == tfma.MetricDirection.LOWER_IS_BETTER
  assert rmse.change_threshold.relative.value == pytest.approx(0.05)
  assert not rmse.HasField('value_threshold')  # no --max-rmse
  assert _threshold(built, 'RegressionMeanAbsoluteError').value_threshold.upper_bound.value == 3.0
  plain = eval_config.build_regression(0.1, 0.05, max_rmse=2.5)
  assert not _metric(plain, 'RegressionMeanAbsoluteError').per_slice_thresholds  # no --max-mae
  assert (
    _threshold(plain, 'RegressionRootMeanSquaredError').value_threshold.upper_bound.value == 2.5
  )


def test_the_run_writes_the_train_mean_into_every_regression_metric():
  built = proto_utils.proto_to_json(eval_config.build_regression(0.1, 0.05))
  known = proto_utils.json_to_proto(eval_config.with_train_mean(built, 12.5), tfma.EvalConfig())
  metrics = [m for s in known.metrics_specs for m in s.metrics]
  assert {m.config for m in metrics} == {json.dumps({'train_mean': 12.5})}
  assert _threshold(known, 'ImprovementOverMeanPredictor').HasField('value_threshold')
  unknown = proto_utils.json_to_proto(eval_config.with_train_mean(built, None), tfma.EvalConfig())
  # no mean recorded: the improvement is not judged (a NaN would fail any threshold)
  assert not _metric(unknown, 'ImprovementOverMeanPredictor').per_slice_thresholds
  assert _metric(unknown, 'RegressionRootMeanSquaredError').per_slice_thresholds


def test_the_train_mean_is_read_from_the_trainers_training_json(tmp_path):
  (tmp_path / artifacts.TRAINING_FILE).write_text(json.dumps({'label_mean': 7.25}))
  model_run = types.SimpleNamespace(uri=str(tmp_path))
  assert executor.train_mean({executor.MODEL_RUN_KEY: [model_run]}) == 7.25
  (tmp_path / artifacts.TRAINING_FILE).write_text(json.dumps({'class_names': ['a']}))
  assert executor.train_mean({executor.MODEL_RUN_KEY: [model_run]}) is None
  assert executor.train_mean({}) is None


def _figures(labels, predictions, train_mean=None) -> dict:
  """{figure name: value} of every regression metric on the examples, through its TFMA
  computations (the shared sums' combiner, then the derived result)."""
  from tensorflow_model_analysis.metrics import metric_types

  values = {}
  for metric in (
    cls(train_mean=train_mean)
    for cls in (
      regression_metrics.RegressionExampleCount,
      regression_metrics.RegressionMeanAbsoluteError,
      regression_metrics.RegressionRootMeanSquaredError,
      regression_metrics.RegressionRSquared,
      regression_metrics.RegressionMeanAbsolutePercentageError,
      regression_metrics.RegressionMeanLabel,
      regression_metrics.RegressionMeanPrediction,
      regression_metrics.MeanPredictorMeanAbsoluteError,
      regression_metrics.ImprovementOverMeanPredictor,
    )
  ):
    combined, derived = metric.computations()
    sums = combined.combiner.create_accumulator()
    for label, prediction in zip(labels, predictions):
      inputs = metric_types.StandardMetricInputs(
        labels=np.array([label]),
        predictions=np.array([prediction]),
        example_weights=np.array([1.0]),
      )
      sums = combined.combiner.add_input(sums, inputs)
    for key, value in derived.result(combined.combiner.extract_output(sums)).items():
      values[key.name] = value
  return values


def test_the_figures_equal_scikit_learns():
  from sklearn import metrics

  rng = np.random.default_rng(5)
  labels = rng.gamma(2.0, 5.0, 300)
  predictions = labels + rng.normal(0, 2.0, 300)
  found = _figures(labels, predictions, train_mean=9.5)
  assert found[evaluation.MAE_KEY] == pytest.approx(
    metrics.mean_absolute_error(labels, predictions)
  )
  assert found[evaluation.RMSE_KEY] == pytest.approx(
    math.sqrt(metrics.mean_squared_error(labels, predictions))
  )
  assert found[evaluation.R2_KEY] == pytest.approx(metrics.r2_score(labels, predictions))
  assert found[evaluation.MAPE_KEY] == pytest.approx(
    100 * metrics.mean_absolute_percentage_error(labels, predictions)
  )
  assert found[evaluation.MEAN_LABEL_KEY] == pytest.approx(labels.mean())
  assert found[evaluation.MEAN_PREDICTION_KEY] == pytest.approx(predictions.mean())
  assert found[evaluation.EXAMPLE_COUNT_KEY] == 300
  baseline = np.abs(labels - 9.5).mean()
  assert found[evaluation.BASELINE_MAE_KEY] == pytest.approx(baseline)
  assert found[evaluation.IMPROVEMENT_KEY] == pytest.approx(
    1 - found[evaluation.MAE_KEY] / baseline
  )
  with_zero = _figures([0.0, 2.0], [1.0, 2.0])
  assert math.isnan(with_zero[evaluation.MAPE_KEY])  # a label of 0: no MAPE
  assert math.isnan(with_zero[evaluation.BASELINE_MAE_KEY])  # no train mean: no baseline
  assert with_zero[evaluation.MAE_KEY] == 0.5


class _Linear(tf.Module):
  """A regression model as the Trainer saves one: serving_default's PREDICTION from records,
  transform_features' eval label."""

  def __init__(self, offset: float):
    super().__init__()
    self.offset = offset

  def _parsed(self, examples):
    features = {name: tf.io.FixedLenFeature([], tf.float32) for name in ('x', 'y')}
    return tf.io.parse_example(examples, features)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)])
  def serve(self, examples):
    return {serving.PREDICTION: 2.0 * self._parsed(examples)['x'] + 1.0 + self.offset}

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)])
  def transform(self, examples):
    return {serving.EVAL_LABEL_KEY: self._parsed(examples)['y']}


def _saved(folder, offset: float) -> str:
  model = _Linear(offset)
  signatures = {serving.SERVING_DEFAULT: model.serve, serving.TRANSFORM: model.transform}
  tf.saved_model.save(model, str(folder), signatures=signatures)
  return str(folder)


def test_tfma_blesses_lower_is_better_against_the_mean_and_the_serving_model(tmp_path):
  rng = np.random.default_rng(0)
  x = rng.uniform(0, 10, 200)
  y = 2 * x + 1 + rng.normal(0, 0.5, 200)
  city = np.where(x < 5, 'a', 'b')
  with tf.io.TFRecordWriter(str(tmp_path / 'eval.tfrecord')) as writer:
    for values in zip(x, y, city):
      feature = {
        'x': tf.train.Feature(float_list=tf.train.FloatList(value=[values[0]])),
        'y': tf.train.Feature(float_list=tf.train.FloatList(value=[values[1]])),
        'city': tf.train.Feature(bytes_list=tf.train.BytesList(value=[values[2].encode()])),
      }
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )
  train_mean = float(y.mean()) + 1.0
  built = eval_config.build_regression(
    0.95, 0.05, max_mae=10.0, slice_features=['city'], label_key=serving.EVAL_LABEL_KEY
  )
  config = proto_utils.json_to_proto(
    eval_config.with_train_mean(proto_utils.proto_to_json(built), train_mean), tfma.EvalConfig()
  )
  models = [
    tfma.default_eval_shared_model(
      _saved(tmp_path / name, offset), eval_config=config, model_name=name
    )
    for name, offset in ((evaluation.CANDIDATE, 0.5), (evaluation.BASELINE, 0.0))
  ]
  out = tmp_path / 'evaluation'
  tfma.run_model_analysis(
    eval_shared_model=models,
    eval_config=config,
    data_location=str(tmp_path / 'eval.tfrecord'),
    output_path=str(out),
  )
  figures = artifact_reader.regression_figures(types.SimpleNamespace(uri=str(out)))
  found, theirs = figures[evaluation.CANDIDATE], figures[evaluation.BASELINE]
  prediction = 2 * x + 1.5
  assert found[evaluation.MAE_KEY] == pytest.approx(np.abs(y - prediction).mean(), rel=1e-4)
  rmse = math.sqrt(((y - prediction) ** 2).mean())
  assert found[evaluation.RMSE_KEY] == pytest.approx(rmse, rel=1e-4)
  assert theirs[evaluation.RMSE_KEY] == pytest.approx(
    math.sqrt(((y - 2 * x - 1) ** 2).mean()), 1e-4
  )
  assert found[evaluation.BASELINE_MAE_KEY] == pytest.approx(np.abs(y - train_mean).mean(), 1e-4)
  assert 0.8 < found[evaluation.IMPROVEMENT_KEY] < 0.95  # good, and refused at 0.95
  assert found[evaluation.R2_KEY] > 0.95
  # refused: RMSE more than 5 % above the serving model's, and not 95 % below the mean's MAE
  failed = {
    failure.metric_key.name
    for per_slice in tfma.load_validation_result(str(out)).metric_validations_per_slice
    for failure in per_slice.failures
  }
  assert failed == {evaluation.RMSE_KEY, evaluation.IMPROVEMENT_KEY}
  slices = artifact_reader.slice_metrics(types.SimpleNamespace(uri=str(out)))
  for name in ('a', 'b'):  # the candidate's own figures, not its difference to the serving model
    rows = city == name
    assert slices[f'city = {name}']['examples'] == rows.sum()
    assert slices[f'city = {name}'][evaluation.MAE_KEY] == pytest.approx(
      np.abs(y[rows] - prediction[rows]).mean(), rel=1e-4
    )
  from metadata import blessing_reasons

  said = blessing_reasons.regression_reason(
    types.SimpleNamespace(uri=str(out)), False, found, theirs
  )
  assert said == (
    f'MAE {found[evaluation.MAE_KEY]:.4g}, RMSE {rmse:.4g}, serving model '
    f'{theirs[evaluation.RMSE_KEY]:.4g}: {found[evaluation.IMPROVEMENT_KEY]:.0%} below the mean '
    f"predictor's MAE {found[evaluation.BASELINE_MAE_KEY]:.4g}, 95% below needed "
    "(--min-improvement); RMSE more than 5% above the serving model's (--max-error-increase)"
  )


def _assets(folder, **assets) -> str:
  """A SavedModel folder holding only assets (name: text)."""
  (folder / 'assets').mkdir(parents=True)
  for name, text in assets.items():
    (folder / 'assets' / name).write_text(text)
  return str(folder)


def test_a_serving_model_of_the_other_task_or_other_columns_is_not_compared(tmp_path):
  columns = json.dumps({'x': 'float32', 'y': 'float32'})
  regressor = _assets(
    tmp_path / 'r', **{serving.TASK_ASSET: 'regression', serving.COLUMNS_ASSET: columns}
  )
  classifier = _assets(tmp_path / 'c', **{serving.COLUMNS_ASSET: columns})
  assert executor.why_not_compared(regressor, classifier, True) == ('', None, 'classification')
  assert executor.why_not_compared(classifier, regressor, False) == ('', None, 'regression')
  other = _assets(
    tmp_path / 'o',
    **{serving.TASK_ASSET: 'regression', serving.COLUMNS_ASSET: json.dumps({'z': 'int64'})},
  )
  assert executor.why_not_compared(regressor, regressor, True) == ('', None, '')
  said, classes, task = executor.why_not_compared(regressor, other, True)
  assert said.startswith('trained on other columns: it reads z') and (classes, task) == (None, '')


def test_a_model_of_the_other_task_than_the_evaluator_judges_is_one_line(tmp_path):
  from contracts.errors import UnusableModel
  from tests.support import regression_model

  saved = regression_model.save(str(tmp_path / 'model'))
  executor.check_task(saved, regression=True)
  with pytest.raises(
    UnusableModel, match='made a regression model, but .+ judges classes: compile'
  ):
    executor.check_task(saved, regression=False)
