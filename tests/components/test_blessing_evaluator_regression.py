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
  improvement = _threshold(built, 'ImprovementOverMedianPredictor')
  assert improvement.value_threshold.lower_bound.value == pytest.approx(0.1)
  explains = _threshold(built, 'RegressionRSquared')  # R² above 0
  assert explains.value_threshold.lower_bound.value == evaluation.MIN_R_SQUARED > 0
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


TRAIN = {'train_mean': 12.5, 'train_median': 10.0, 'train_min': 0.5, 'train_max': 90.0}


def test_the_run_writes_the_train_labels_figures_into_every_regression_metric():
  built = proto_utils.proto_to_json(eval_config.build_regression(0.1, 0.05))
  known = proto_utils.json_to_proto(eval_config.with_train_labels(built, TRAIN), tfma.EvalConfig())
  metrics = [m for s in known.metrics_specs for m in s.metrics]
  assert {m.config for m in metrics} == {json.dumps(TRAIN)}
  assert _threshold(known, 'ImprovementOverMedianPredictor').HasField('value_threshold')
  unknown = proto_utils.json_to_proto(eval_config.with_train_labels(built, {}), tfma.EvalConfig())
  # no median recorded: the improvement is not judged (a NaN would fail any threshold)
  assert not _metric(unknown, 'ImprovementOverMedianPredictor').per_slice_thresholds
  assert _metric(unknown, 'RegressionRootMeanSquaredError').per_slice_thresholds


def test_the_train_labels_figures_are_read_from_the_trainers_training_json(tmp_path):
  recorded = {'label_mean': 7.25, 'label_median': 5.0, 'label_min': 0.0, 'label_max': 80.0}
  (tmp_path / artifacts.TRAINING_FILE).write_text(json.dumps(dict(recorded, label_std=2.0)))
  model_run = types.SimpleNamespace(uri=str(tmp_path))
  assert executor.train_labels({executor.MODEL_RUN_KEY: [model_run]}) == {
    'train_mean': 7.25,
    'train_median': 5.0,
    'train_min': 0.0,
    'train_max': 80.0,
  }
  tail = {'low': -900.0, 'high': 2300.0, 'rows': 6, 'of': 3000}  # a heavy tail: its fences
  (tmp_path / artifacts.TRAINING_FILE).write_text(json.dumps(dict(recorded, label_tail=tail)))
  found = executor.train_labels({executor.MODEL_RUN_KEY: [model_run]})
  assert (found['train_low'], found['train_high']) == (-900.0, 2300.0)
  (tmp_path / artifacts.TRAINING_FILE).write_text(json.dumps({'class_names': ['a']}))
  assert executor.train_labels({executor.MODEL_RUN_KEY: [model_run]}) == {}
  assert executor.train_labels({}) == {}


def _figures(labels, predictions, **train) -> dict:
  """{figure name: value} of every regression metric on the examples, through its TFMA
  computations (the shared sums' combiner, then the derived result)."""
  from tensorflow_model_analysis.metrics import metric_types

  values = {}
  for metric in (
    cls(**train)
    for cls in (
      regression_metrics.RegressionExampleCount,
      regression_metrics.RegressionMeanAbsoluteError,
      regression_metrics.RegressionRootMeanSquaredError,
      regression_metrics.RegressionRSquared,
      regression_metrics.RegressionMeanAbsolutePercentageError,
      regression_metrics.RegressionSmallestLabel,
      regression_metrics.RegressionMapeFloor,
      regression_metrics.RegressionMeanLabel,
      regression_metrics.RegressionMeanPrediction,
      regression_metrics.MedianPredictorMeanAbsoluteError,
      regression_metrics.MeanPredictorRootMeanSquaredError,
      regression_metrics.ImprovementOverMedianPredictor,
      regression_metrics.PredictionsOutsideTrainRange,
      regression_metrics.PredictionsOfOtherSign,
      regression_metrics.ExamplesBeyondFences,
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
  found = _figures(labels, predictions, train_mean=9.5, train_median=8.0)
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
  baseline = np.abs(labels - 8.0).mean()  # the median predictor's, the best constant for MAE
  assert found[evaluation.BASELINE_MAE_KEY] == pytest.approx(baseline)
  assert found[evaluation.BASELINE_RMSE_KEY] == pytest.approx(  # the mean's, for RMSE
    math.sqrt(((labels - 9.5) ** 2).mean())
  )
  assert found[evaluation.IMPROVEMENT_KEY] == pytest.approx(
    1 - found[evaluation.MAE_KEY] / baseline
  )
  with_zero = _figures([0.0, 2.0], [1.0, 2.0])
  assert math.isnan(with_zero[evaluation.MAPE_KEY])  # a label of 0: no MAPE
  assert math.isnan(with_zero[evaluation.BASELINE_MAE_KEY])  # no train median: no baseline
  assert math.isnan(with_zero[evaluation.OUT_OF_RANGE_KEY])  # no train range: not counted
  assert with_zero[evaluation.MAE_KEY] == 0.5


def _failed(figures: dict, min_improvement: float = 0.1) -> set:
  """The thresholds of build_regression a candidate of these figures fails (TFMA's validator, as
  the Evaluator runs it on the whole eval split)."""
  from tensorflow_model_analysis.evaluators import metrics_validator
  from tensorflow_model_analysis.metrics import metric_types

  config = eval_config.build_regression(min_improvement, 0.1)
  metrics = {
    metric_types.MetricKey(name=name, example_weighted=False): value
    for name, value in figures.items()
  }
  result = metrics_validator.validate_metrics(((), metrics), config)
  return {  # no serving model here: its change threshold (TFX drops it) left aside
    f.metric_key.name
    for v in result.metric_validations_per_slice
    for f in v.failures
    if not f.metric_threshold.HasField('change_threshold')
  }


def test_the_validator_finds_the_figures_it_judges():
  assert _failed({evaluation.IMPROVEMENT_KEY: 0.5, evaluation.R2_KEY: 0.5}) == set()
  assert _failed({evaluation.IMPROVEMENT_KEY: 0.05, evaluation.R2_KEY: 0.0}) == {
    evaluation.IMPROVEMENT_KEY,
    evaluation.R2_KEY,  # R² 0 explains nothing: not blessed
  }


def _durations(rng, rows: int, outliers: int) -> np.ndarray:
  """Trip durations in seconds: minutes mostly, `outliers` of 10⁶–3·10⁶ (issue 68)."""
  return rng.permutation(
    np.concatenate([rng.gamma(2.0, 300.0, rows - outliers), rng.uniform(1e6, 3e6, outliers)])
  )


def test_a_model_the_outliers_flatter_is_judged_against_the_median_and_not_blessed():
  rng = np.random.default_rng(68)
  train, labels = _durations(rng, 2400, 5), _durations(rng, 600, 1)
  q1, q3 = np.percentile(train, [25, 75])  # trainer/label_figures.py's far-out fences
  fences = dict(train_low=q1 - 3 * (q3 - q1), train_high=q3 + 3 * (q3 - q1))
  figures = dict(
    train_mean=float(train.mean()),
    train_median=float(np.median(train)),
    train_min=float(train.min()),
    train_max=float(train.max()),
    **fences,
  )
  ordinary = (labels >= fences['train_low']) & (labels <= fences['train_high'])
  # about as wrong as the model, durations below 0 among its predictions
  predicted = np.median(train) + 600.0 + rng.normal(0, 1200.0, labels.size)
  mean_mae = np.abs(labels - train.mean()).mean()
  assert np.abs(labels - predicted).mean() < 0.9 * mean_mae  # the mean predictor let it through
  flattered = _figures(labels, predicted, **figures)
  assert flattered[evaluation.BEYOND_KEY] == np.sum(~ordinary) >= 1  # judged without them
  assert flattered[evaluation.MAE_KEY] == pytest.approx(np.abs(labels - predicted)[ordinary].mean())
  assert flattered[evaluation.BASELINE_MAE_KEY] == pytest.approx(
    np.abs(labels - np.median(train))[ordinary].mean()
  )
  assert flattered[evaluation.IMPROVEMENT_KEY] < 0 and flattered[evaluation.R2_KEY] <= 0
  assert _failed(flattered) == {evaluation.IMPROVEMENT_KEY, evaluation.R2_KEY}
  assert flattered[evaluation.OTHER_SIGN_KEY] == np.sum(predicted < 0) > 0  # every row counted
  from metadata import blessing_reasons

  failures = [
    types.SimpleNamespace(
      metric_key=types.SimpleNamespace(name=name),
      metric_value=types.SimpleNamespace(double_value=types.SimpleNamespace(value=flattered[name])),
      metric_threshold=_threshold(eval_config.build_regression(0.1, 0.1), cls),
    )
    for name, cls in (
      (evaluation.IMPROVEMENT_KEY, 'ImprovementOverMedianPredictor'),
      (evaluation.R2_KEY, 'RegressionRSquared'),
    )
  ]
  said = '; '.join(blessing_reasons.regression_failure(f, flattered) for f in failures)
  assert said == (
    f"{-flattered[evaluation.IMPROVEMENT_KEY]:.0%} above the median predictor's MAE "
    f'{evaluation.figure_text(flattered[evaluation.BASELINE_MAE_KEY])}, 10% below needed '
    f'(--min-improvement); R² {flattered[evaluation.R2_KEY]:.3g}: the model explains none of the '
    "label's spread (R² above 0 needed)"
  )
  # a model of the ordinary durations (within 10 %) that cannot foresee the outlier is blessed:
  # judged on every row, the outlier's error would hold its R² at 0 and swamp its MAE
  good = np.where(ordinary, labels * rng.uniform(0.9, 1.1, labels.size), np.median(train))
  assert _failed(_figures(labels, good, **figures)) == set()
  unfenced = {k: v for k, v in figures.items() if k not in fences}
  assert evaluation.R2_KEY in _failed(_figures(labels, good, **unfenced))


def test_predictions_outside_the_train_range_or_below_0_are_counted():
  found = _figures(
    [10.0, 20.0, 30.0, 40.0],
    [-5.0, 15.0, 120.0, -1.0],
    train_mean=25.0,
    train_median=24.0,
    train_min=2.0,
    train_max=100.0,
  )
  assert found[evaluation.OUT_OF_RANGE_KEY] == 3  # -5, 120, -1
  assert found[evaluation.OTHER_SIGN_KEY] == 2  # every train label ≥ 0: -5 and -1
  below = _figures([-10.0], [3.0], train_min=-50.0, train_max=-2.0, train_median=-9.0)
  assert below[evaluation.OTHER_SIGN_KEY] == 1 and below[evaluation.OUT_OF_RANGE_KEY] == 1


def test_mape_is_left_out_for_a_label_centred_on_0_with_the_reason():
  rng = np.random.default_rng(3)
  train, labels = rng.normal(0, 1, 2000), rng.normal(0, 1, 500)
  floor = evaluation.MAPE_FLOOR * float(np.median(np.abs(train)))
  found = _figures(labels, labels + rng.normal(0, 0.05, 500), mape_floor=floor)
  assert math.isnan(found[evaluation.MAPE_KEY])  # a near-ideal model: it would read ~70 %
  assert found[evaluation.SMALLEST_LABEL_KEY] == pytest.approx(np.abs(labels).min())
  shown = {k: v for k, v in found.items() if not math.isnan(v)}
  assert evaluation.mape_left_out(shown).startswith('labels near 0 (an eval |label| of ')
  fares = rng.uniform(3.0, 60.0, 500)  # bounded away from 0: kept
  kept = _figures(fares, fares * 1.1, mape_floor=evaluation.MAPE_FLOOR * 12.0)
  assert kept[evaluation.MAPE_KEY] == pytest.approx(10.0)
  assert evaluation.mape_left_out(kept) == ''


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


def test_tfma_blesses_lower_is_better_against_the_median_and_the_serving_model(tmp_path):
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
  train_median = float(np.median(y)) + 1.0
  built = eval_config.build_regression(
    0.95, 0.05, max_mae=10.0, slice_features=['city'], label_key=serving.EVAL_LABEL_KEY
  )
  config = proto_utils.json_to_proto(
    eval_config.with_train_labels(
      proto_utils.proto_to_json(built), {'train_mean': 0.0, 'train_median': train_median}
    ),
    tfma.EvalConfig(),
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
  assert found[evaluation.BASELINE_MAE_KEY] == pytest.approx(np.abs(y - train_median).mean(), 1e-4)
  assert 0.8 < found[evaluation.IMPROVEMENT_KEY] < 0.95  # good, and refused at 0.95
  assert found[evaluation.R2_KEY] > 0.95
  # refused: RMSE more than 5 % above the serving model's, and not 95 % below the median's MAE
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
    f'{theirs[evaluation.RMSE_KEY]:.4g}: {found[evaluation.IMPROVEMENT_KEY]:.0%} below the median '
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
