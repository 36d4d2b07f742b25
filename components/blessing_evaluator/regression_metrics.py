"""A regression model's figures (contracts/evaluation.py's names), all derived from one set of
sums per slice: custom TFMA metrics (eval_config.py names this module); runs without TFX.

TFMA's MeanAbsoluteError, MeanSquaredError, MeanAbsolutePercentageError, MeanLabel and
MeanPrediction are one per-example combiner each, and it has no R² or constant baseline; here one
combiner adds up each example's errors (every example counted for the Evaluator's progress, as
top_class_metrics.py does), and each figure is a few sums:
- MAE, RMSE, R² (1 - squared error / the labels' squared deviation from their mean), the mean
  label and the mean prediction;
- MAPE in percent (TFMA's), only when every |label| is at least `mape_floor` (NaN otherwise: no
  figure; without a floor, when no label is 0), and the smallest |label| and that floor;
- the baselines, the best constant for each figure: the median predictor's MAE
  (BASELINE_MAE_KEY: `train_median` for every example) and IMPROVEMENT_KEY, 1 - MAE / that (what
  --min-improvement bounds); the mean predictor's RMSE (BASELINE_RMSE_KEY: `train_mean`);
- the predictions outside [`train_min`, `train_max`] and those of the other sign than every
  train label (OUT_OF_RANGE_KEY, OTHER_SIGN_KEY), over every example.
A heavy-tailed label (trainer/label_figures.py: `train_low`, `train_high`, the train labels'
far-out fences) is judged on its ordinary rows: every other figure leaves out the examples whose
label lies beyond the fences, counted (BEYOND_KEY): one eval duration of 10⁶ s among minutes
adds the same thousands to every model's MAE and holds every R² at 0.
The train split's figures are each metric's config (the executor writes them in,
`eval_config.with_train_labels`); without them, the figures that need them are NaN.
"""

import dataclasses
import math
from typing import Callable, Dict, Optional

import apache_beam as beam
from tensorflow_model_analysis.metrics import metric_types, metric_util

from components.blessing_evaluator import top_class_metrics
from contracts import evaluation

SUMS = '_regression_sums'  # the shared computation's key ('_': TFMA does not output it)


# The train split's label figures a metric's config holds (training.json's, by these names).
TRAIN_FIGURES = (
  'train_mean',
  'train_median',
  'train_min',
  'train_max',
  'mape_floor',
  'train_low',
  'train_high',
)


@dataclasses.dataclass
class Sums:
  """Weighted sums over a slice's examples (the train_* and mape_floor fields: the config's)."""

  weight: float = 0.0
  absolute_error: float = 0.0
  squared_error: float = 0.0
  label: float = 0.0
  squared_label: float = 0.0
  prediction: float = 0.0
  percent_error: float = 0.0  # 100 |error| / |label|, over labels that are not 0
  zero_labels: float = 0.0
  smallest_label: float = math.inf  # the least |label| (merged by min)
  median_predictor_error: float = 0.0  # |label - train_median|
  mean_predictor_squared_error: float = 0.0  # (label - train_mean)²
  out_of_range: float = 0.0  # predictions below train_min or above train_max
  other_sign: float = 0.0  # below 0 where every train label is ≥ 0 (or the reverse)
  beyond: float = 0.0  # examples whose label is beyond [train_low, train_high]: left out
  train_mean: Optional[float] = None
  train_median: Optional[float] = None
  train_min: Optional[float] = None
  train_max: Optional[float] = None
  mape_floor: Optional[float] = None
  train_low: Optional[float] = None
  train_high: Optional[float] = None

  def add(self, label: float, prediction: float, weight: float = 1.0) -> None:
    if self.train_min is not None and self.train_max is not None:
      self.out_of_range += weight * (not self.train_min <= prediction <= self.train_max)
      other = (self.train_min >= 0 > prediction) or (self.train_max <= 0 < prediction)
      self.other_sign += weight * bool(other)
    if self.train_low is not None and not self.train_low <= label <= self.train_high:
      self.beyond += weight
      return
    error = abs(label - prediction)
    self.weight += weight
    self.absolute_error += weight * error
    self.squared_error += weight * error * error
    self.label += weight * label
    self.squared_label += weight * label * label
    self.prediction += weight * prediction
    self.smallest_label = min(self.smallest_label, abs(label))
    if label:
      self.percent_error += weight * 100.0 * error / abs(label)
    else:
      self.zero_labels += weight
    if self.train_median is not None:
      self.median_predictor_error += weight * abs(label - self.train_median)
    if self.train_mean is not None:
      self.mean_predictor_squared_error += weight * (label - self.train_mean) ** 2

  def merge(self, other: 'Sums') -> None:
    for field in dataclasses.fields(self):
      if field.name == 'smallest_label':
        self.smallest_label = min(self.smallest_label, other.smallest_label)
      elif field.name not in TRAIN_FIGURES:
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
  """NaN for a label of 0, or one nearer 0 than mape_floor (contracts/evaluation.MAPE_FLOOR)."""
  near_zero = sums.mape_floor is not None and sums.smallest_label < sums.mape_floor
  return math.nan if sums.zero_labels or near_zero else _mean(sums.percent_error, sums)


def smallest_label(sums: Sums) -> float:
  return sums.smallest_label if sums.weight else math.nan


def mape_floor(sums: Sums) -> float:
  return math.nan if sums.mape_floor is None else sums.mape_floor


def mean_label(sums: Sums) -> float:
  return _mean(sums.label, sums)


def mean_prediction(sums: Sums) -> float:
  return _mean(sums.prediction, sums)


def median_predictor_mae(sums: Sums) -> float:
  return math.nan if sums.train_median is None else _mean(sums.median_predictor_error, sums)


def mean_predictor_rmse(sums: Sums) -> float:
  if sums.train_mean is None:
    return math.nan
  return math.sqrt(_mean(sums.mean_predictor_squared_error, sums))


def improvement(sums: Sums) -> float:
  """How much lower the MAE is than the median predictor's, as a share of it (0.1: 10 % lower)."""
  baseline = median_predictor_mae(sums)
  return 1.0 - mae(sums) / baseline if baseline else math.nan


def out_of_range(sums: Sums) -> float:
  return math.nan if sums.train_min is None else sums.out_of_range


def other_sign(sums: Sums) -> float:
  return math.nan if sums.train_min is None else sums.other_sign


def beyond(sums: Sums) -> float:
  return sums.beyond  # 0 without fences: no row left out


def example_count(sums: Sums) -> float:
  return sums.weight


class _SumsCombiner(beam.CombineFn):
  """A slice's Sums (each example counted for the Evaluator's progress)."""

  def __init__(self, key, eval_config, example_weighted: bool, train: Dict[str, float]):
    self._key = key
    self._eval_config = eval_config
    self._example_weighted = example_weighted
    self._train = train

  def create_accumulator(self) -> Sums:
    return Sums(**self._train)

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
    **train: float,
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
      combiner=_SumsCombiner(keys[SUMS], eval_config, example_weighted, train),
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

  def __init__(self, name: str = '', **train: float):
    """train: the train split's figures (TRAIN_FIGURES) the config holds."""
    train = {k: v for k, v in train.items() if k in TRAIN_FIGURES}
    super().__init__(_metric(self.FIGURE), name=name or self.NAME, **train)


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


class RegressionSmallestLabel(_Figure):
  FIGURE, NAME = staticmethod(smallest_label), evaluation.SMALLEST_LABEL_KEY


class RegressionMapeFloor(_Figure):
  FIGURE, NAME = staticmethod(mape_floor), evaluation.MAPE_FLOOR_KEY


class MedianPredictorMeanAbsoluteError(_Figure):
  """Predicting the train split's median label for every example (train_median)."""

  FIGURE, NAME = staticmethod(median_predictor_mae), evaluation.BASELINE_MAE_KEY


class MeanPredictorRootMeanSquaredError(_Figure):
  """Predicting the train split's mean label for every example (train_mean)."""

  FIGURE, NAME = staticmethod(mean_predictor_rmse), evaluation.BASELINE_RMSE_KEY


class ImprovementOverMedianPredictor(_Figure):
  """1 - MAE / the median predictor's MAE (train_median)."""

  FIGURE, NAME = staticmethod(improvement), evaluation.IMPROVEMENT_KEY


class PredictionsOutsideTrainRange(_Figure):
  FIGURE, NAME = staticmethod(out_of_range), evaluation.OUT_OF_RANGE_KEY


class PredictionsOfOtherSign(_Figure):
  FIGURE, NAME = staticmethod(other_sign), evaluation.OTHER_SIGN_KEY


class ExamplesBeyondFences(_Figure):
  """A heavy-tailed label's eval examples beyond the train fences, left out of the others."""

  FIGURE, NAME = staticmethod(beyond), evaluation.BEYOND_KEY
