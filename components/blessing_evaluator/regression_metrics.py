"""A regression model's figures (contracts/evaluation.py's names), all derived from one set of
sums per slice: custom TFMA metrics (eval_config.py names this module); runs without TFX.

TFMA's MeanAbsoluteError, MeanSquaredError, MeanAbsolutePercentageError, MeanLabel and
MeanPrediction are one per-example combiner each, and it has no R² or mean-predictor baseline;
here one combiner adds up each example's errors (every example counted for the Evaluator's
progress, as top_class_metrics.py does), and each figure is a few sums:
- MAE, RMSE, R² (1 - squared error / the labels' squared deviation from their mean), the mean
  label and the mean prediction;
- MAPE in percent (TFMA's), only when no label is 0 (NaN otherwise: no figure);
- the mean predictor's MAE (BASELINE_MAE_KEY): predicting `train_mean`, the train split's mean
  label, for every example; and IMPROVEMENT_KEY, 1 - MAE / that: what --min-improvement bounds.
`train_mean` is each metric's config (the executor writes it in, `eval_config.with_train_mean`);
without it, the two are NaN.
"""

import dataclasses
import math
from typing import Callable, Dict, Optional

import apache_beam as beam
from tensorflow_model_analysis.metrics import metric_types, metric_util

from components.blessing_evaluator import top_class_metrics
from contracts import evaluation

SUMS = '_regression_sums'  # the shared computation's key ('_': TFMA does not output it)


@dataclasses.dataclass
class Sums:
  """Weighted sums over a slice's examples."""

  weight: float = 0.0
  absolute_error: float = 0.0
  squared_error: float = 0.0
  label: float = 0.0
  squared_label: float = 0.0
  prediction: float = 0.0
  percent_error: float = 0.0  # 100 |error| / |label|, over labels that are not 0
  zero_labels: float = 0.0
  mean_predictor_error: float = 0.0  # |label - train_mean|
  train_mean: Optional[float] = None

  def add(self, label: float, prediction: float, weight: float = 1.0) -> None:
    error = abs(label - prediction)
    self.weight += weight
    self.absolute_error += weight * error
    self.squared_error += weight * error * error
    self.label += weight * label
    self.squared_label += weight * label * label
    self.prediction += weight * prediction
    if label:
      self.percent_error += weight * 100.0 * error / abs(label)
    else:
      self.zero_labels += weight
    if self.train_mean is not None:
      self.mean_predictor_error += weight * abs(label - self.train_mean)

  def merge(self, other: 'Sums') -> None:
    for field in dataclasses.fields(self):
      if field.name != 'train_mean':
        setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


def _mean(total: float, sums: Sums) -> float:
  return total / sums.weight if sums.weight else math.nan


def mae(sums: Sums) -> float:
  return _mean(sums.absolute_error, sums)


def rmse(sums: Sums) -> float:
  return math.sqrt(_mean(sums.squared_error, sums))


def r_squared(sums: Sums) -> float:
  """1 - squared error / the labels' squared deviation from their mean (NaN for one label)."""
  deviation = sums.squared_label - sums.label * sums.label / sums.weight if sums.weight else 0.0
  return 1.0 - sums.squared_error / deviation if deviation > 0 else math.nan


def mape(sums: Sums) -> float:
  return math.nan if sums.zero_labels else _mean(sums.percent_error, sums)


def mean_label(sums: Sums) -> float:
  return _mean(sums.label, sums)


def mean_prediction(sums: Sums) -> float:
  return _mean(sums.prediction, sums)


def mean_predictor_mae(sums: Sums) -> float:
  return math.nan if sums.train_mean is None else _mean(sums.mean_predictor_error, sums)


def improvement(sums: Sums) -> float:
  """How much lower the MAE is than the mean predictor's, as a share of it (0.1: 10 % lower)."""
  baseline = mean_predictor_mae(sums)
  return 1.0 - mae(sums) / baseline if baseline else math.nan


def example_count(sums: Sums) -> float:
  return sums.weight


class _SumsCombiner(beam.CombineFn):
  """A slice's Sums (each example counted for the Evaluator's progress)."""

  def __init__(self, key, eval_config, example_weighted: bool, train_mean: Optional[float]):
    self._key = key
    self._eval_config = eval_config
    self._example_weighted = example_weighted
    self._train_mean = train_mean

  def create_accumulator(self) -> Sums:
    return Sums(train_mean=self._train_mean)

  def add_input(self, sums: Sums, element) -> Sums:
    for label, prediction, weight in top_class_metrics.counted_label_prediction_and_weight(
      element,
      eval_config=self._eval_config,
      model_name=self._key.model_name,
      output_name=self._key.output_name,
      example_weighted=self._example_weighted,
    ):
      sums.add(
        metric_util.safe_to_scalar(label),
        metric_util.safe_to_scalar(prediction),
        metric_util.safe_to_scalar(weight),
      )
    return sums

  def merge_accumulators(self, accumulators) -> Sums:
    accumulators = iter(accumulators)
    merged = next(accumulators)
    for sums in accumulators:
      merged.merge(sums)
    return merged

  def extract_output(self, sums: Sums) -> Dict:
    return {self._key: sums}


def _metric(figure):
  """A TFMA computations function: the shared sums, then MetricKey(name) = figure(sums)."""

  def computations(
    name,
    eval_config=None,
    model_name='',
    output_name='',
    example_weighted=False,
    train_mean: Optional[float] = None,
  ):
    keys = {
      key_name: metric_types.MetricKey(
        name=key_name,
        model_name=model_name,
        output_name=output_name,
        example_weighted=example_weighted,
      )
      for key_name in (SUMS, name)
    }
    combined = metric_types.MetricComputation(
      keys=[keys[SUMS]],
      preprocessors=None,
      combiner=_SumsCombiner(keys[SUMS], eval_config, example_weighted, train_mean),
    )
    derived = metric_types.DerivedMetricComputation(
      keys=[keys[name]], result=lambda metrics: {keys[name]: figure(metrics[keys[SUMS]])}
    )
    return [combined, derived]

  return metric_util.merge_per_key_computations(computations)


class _Figure(metric_types.Metric):
  """A figure of the sums: FIGURE(sums), named NAME."""

  FIGURE: Callable[[Sums], float]
  NAME: str

  def __init__(self, name: str = '', train_mean: Optional[float] = None):
    super().__init__(_metric(self.FIGURE), name=name or self.NAME, train_mean=train_mean)


class RegressionExampleCount(_Figure):
  """The examples of the slice (ExampleCount's figure and key)."""

  FIGURE, NAME = staticmethod(example_count), evaluation.EXAMPLE_COUNT_KEY


class RegressionMeanAbsoluteError(_Figure):
  FIGURE, NAME = staticmethod(mae), evaluation.MAE_KEY


class RegressionRootMeanSquaredError(_Figure):
  FIGURE, NAME = staticmethod(rmse), evaluation.RMSE_KEY


class RegressionRSquared(_Figure):
  FIGURE, NAME = staticmethod(r_squared), evaluation.R2_KEY


class RegressionMeanAbsolutePercentageError(_Figure):
  FIGURE, NAME = staticmethod(mape), evaluation.MAPE_KEY


class RegressionMeanLabel(_Figure):
  FIGURE, NAME = staticmethod(mean_label), evaluation.MEAN_LABEL_KEY


class RegressionMeanPrediction(_Figure):
  FIGURE, NAME = staticmethod(mean_prediction), evaluation.MEAN_PREDICTION_KEY


class MeanPredictorMeanAbsoluteError(_Figure):
  """Predicting the train split's mean label for every example (train_mean)."""

  FIGURE, NAME = staticmethod(mean_predictor_mae), evaluation.BASELINE_MAE_KEY


class ImprovementOverMeanPredictor(_Figure):
  """1 - MAE / the mean predictor's MAE (train_mean)."""

  FIGURE, NAME = staticmethod(improvement), evaluation.IMPROVEMENT_KEY
