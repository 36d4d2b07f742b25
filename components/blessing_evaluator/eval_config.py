"""The Evaluator's TFMA configuration: what blesses a model, and what is measured beside it.

Blessing (thresholds on the overall slice only, so a small feature slice never blocks a push):
eval accuracy ≥ min_accuracy; at most max_accuracy_drop below the serving model (a change
threshold, which TFX drops while no model is serving); with min_class_recall > 0, every class's
recall ≥ it. Measured beside it: recall and precision per class (binarized by class id) for
the candidate and the serving model, a confusion matrix, and every metric per value of each
slice feature. Accuracy, recall and precision are top-class figures derived from the confusion
matrix (top_class_metrics.py: one per-example pass instead of four, about half the
Evaluator's time on large data).

A regression model (build_regression) is judged lower is better: its MAE against the median
predictor's (the train split's median label for every example, the best constant for MAE;
regression_metrics.py), its R² above 0, optional bounds on MAE and RMSE, and its RMSE against the
serving model's, relative.

The class ids are not known when the pipeline is built (they come from the data): the executor
writes them in from the candidate model's output width (with_parameters).
"""

import json
from typing import Dict, Optional, Sequence

import tensorflow_model_analysis as tfma
from tfx.utils import proto_utils

from components.blessing_evaluator import regression_metrics
from contracts import evaluation, serving

OVERALL = tfma.SlicingSpec()


def _overall(threshold: tfma.MetricThreshold) -> dict:
  return dict(
    per_slice_thresholds=[
      tfma.PerSliceMetricThreshold(slicing_specs=[OVERALL], threshold=threshold)
    ]
  )


def _derived(class_name: str, **threshold) -> tfma.MetricConfig:
  """A metric of top_class_metrics.py (on the one confusion matrix, not one more pass)."""
  return tfma.MetricConfig(class_name=class_name, module=evaluation.METRICS_MODULE, **threshold)


def _model_specs(prediction_key: str, label_key: str) -> list:
  """The candidate's and the serving model's specs: serving_default's prediction_key, scored
  against label_key of the preprocessing function."""
  model_spec = dict(
    signature_name=serving.SERVING_DEFAULT,
    prediction_key=prediction_key,
    label_key=label_key,
    preprocessing_function_names=[serving.TRANSFORM],
  )
  return [
    tfma.ModelSpec(name=evaluation.CANDIDATE, **model_spec),
    tfma.ModelSpec(name=evaluation.BASELINE, is_baseline=True, **model_spec),
  ]


def _slicing_specs(slice_features: Sequence[str]) -> list:
  return [OVERALL] + [tfma.SlicingSpec(feature_keys=[name]) for name in slice_features]


def build(
  min_accuracy: float,
  max_accuracy_drop: float,
  min_class_recall: float = 0.0,
  slice_features: Sequence[str] = (),
  label_key: str = '',
) -> tfma.EvalConfig:
  """label_key: the label as the serving signature's preprocessing function returns it."""
  accuracy = tfma.MetricThreshold(
    value_threshold=tfma.GenericValueThreshold(lower_bound={'value': min_accuracy}),
    change_threshold=tfma.GenericChangeThreshold(
      direction=tfma.MetricDirection.HIGHER_IS_BETTER,
      absolute={'value': -max_accuracy_drop},
    ),
  )
  class_recall = (
    _overall(
      tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(lower_bound={'value': min_class_recall})
      )
    )
    if min_class_recall > 0
    else {}
  )
  return tfma.EvalConfig(
    model_specs=_model_specs(serving.PROBABILITIES, label_key),
    slicing_specs=_slicing_specs(slice_features),
    metrics_specs=[
      tfma.MetricsSpec(
        metrics=[
          _derived(evaluation.EXAMPLE_COUNT_METRIC),
          _derived(evaluation.ACCURACY_METRIC, **_overall(accuracy)),
          _derived(evaluation.CONFUSION_PLOT),
        ]
      ),
      tfma.MetricsSpec(  # per class: with_parameters adds the class ids
        metrics=[
          _derived(evaluation.RECALL_METRIC, **class_recall),
          _derived(evaluation.PRECISION_METRIC),
        ]
      ),
    ],
  )


def _regression(metric: type, **threshold) -> tfma.MetricConfig:
  """A metric of regression_metrics.py (on the one set of sums, not one more pass)."""
  return tfma.MetricConfig(
    class_name=metric.__name__, module=evaluation.REGRESSION_METRICS_MODULE, **threshold
  )


def build_regression(
  min_improvement: float,
  max_error_increase: float,
  max_mae: Optional[float] = None,
  max_rmse: Optional[float] = None,
  slice_features: Sequence[str] = (),
  label_key: str = '',
) -> tfma.EvalConfig:
  """A regression model's (serving_default's PREDICTION against label_key), lower is better:
  MAE at least min_improvement (a share) below the median predictor's, R² at least
  evaluation.MIN_R_SQUARED (above 0); with max_mae / max_rmse,
  at most those; RMSE at most max_error_increase (a share) above the serving model's (TFMA's
  relative change threshold, dropped by TFX while none is serving)."""
  improvement = tfma.MetricThreshold(
    value_threshold=tfma.GenericValueThreshold(lower_bound={'value': min_improvement})
  )
  explains = tfma.MetricThreshold(
    value_threshold=tfma.GenericValueThreshold(lower_bound={'value': evaluation.MIN_R_SQUARED})
  )
  rmse = tfma.MetricThreshold(
    change_threshold=tfma.GenericChangeThreshold(
      direction=tfma.MetricDirection.LOWER_IS_BETTER,
      relative={'value': max_error_increase},
    )
  )
  if max_rmse is not None:
    rmse.value_threshold.upper_bound.value = max_rmse
  mae = (
    _overall(
      tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(upper_bound={'value': max_mae})
      )
    )
    if max_mae is not None
    else {}
  )
  return tfma.EvalConfig(
    model_specs=_model_specs(serving.PREDICTION, label_key),
    slicing_specs=_slicing_specs(slice_features),
    metrics_specs=[
      tfma.MetricsSpec(
        metrics=[
          _regression(regression_metrics.RegressionExampleCount),
          _regression(regression_metrics.RegressionMeanAbsoluteError, **mae),
          _regression(regression_metrics.RegressionRootMeanSquaredError, **_overall(rmse)),
          _regression(regression_metrics.RegressionRSquared, **_overall(explains)),
          _regression(regression_metrics.RegressionMeanAbsolutePercentageError),
          _regression(regression_metrics.RegressionSmallestLabel),
          _regression(regression_metrics.RegressionMapeFloor),
          _regression(regression_metrics.RegressionMeanLabel),
          _regression(regression_metrics.RegressionMeanPrediction),
          _regression(regression_metrics.MedianPredictorMeanAbsoluteError),
          _regression(regression_metrics.MeanPredictorRootMeanSquaredError),
          _regression(regression_metrics.ImprovementOverMedianPredictor, **_overall(improvement)),
          _regression(regression_metrics.PredictionsOutsideTrainRange),
          _regression(regression_metrics.PredictionsOfOtherSign),
          _regression(regression_metrics.ExamplesBeyondFences),
        ]
      )
    ],
  )


def with_train_labels(eval_config_json: str, train: Dict[str, float]) -> str:
  """eval_config (as TFX passes it, JSON) with the train split's label figures
  (regression_metrics.TRAIN_FIGURES: mean, median, range, MAPE's floor, a heavy tail's fences) in every regression
  metric's config; without a median, the improvement is not judged (its threshold dropped)."""
  eval_config = proto_utils.json_to_proto(eval_config_json, tfma.EvalConfig())
  for spec in eval_config.metrics_specs:
    for metric in spec.metrics:
      if metric.module != evaluation.REGRESSION_METRICS_MODULE:
        continue
      if train:
        metric.config = json.dumps(train)
      if train.get('train_median') is None and metric.class_name == (
        regression_metrics.ImprovementOverMedianPredictor.__name__
      ):
        metric.ClearField('per_slice_thresholds')
  return proto_utils.proto_to_json(eval_config)


def with_logit_models(eval_config_json: str, logit_models: Sequence[str]) -> str:
  """eval_config (JSON) whose top-class metrics read the one-wide output of `logit_models` (model
  names: a module file's `from_logits` model, user_model.py) as a logit; as it was for none."""
  if not logit_models:
    return eval_config_json
  eval_config = proto_utils.json_to_proto(eval_config_json, tfma.EvalConfig())
  for spec in eval_config.metrics_specs:
    for metric in spec.metrics:
      if metric.module == evaluation.METRICS_MODULE:
        metric.config = json.dumps({'logit_models': sorted(logit_models)})
  return proto_utils.proto_to_json(eval_config)


def _per_class_specs(eval_config: tfma.EvalConfig):
  return [
    spec
    for spec in eval_config.metrics_specs
    if any(m.class_name == evaluation.RECALL_METRIC for m in spec.metrics)
  ]


def with_parameters(eval_config_json: str, min_accuracy: Optional[float], num_classes: int) -> str:
  """eval_config (as TFX passes it, JSON) with the accuracy lower bound set to min_accuracy
  (None: as built) and the per-class metrics binarized by class ids 0..num_classes-1."""
  eval_config = proto_utils.json_to_proto(eval_config_json, tfma.EvalConfig())
  for spec in eval_config.metrics_specs if min_accuracy is not None else ():
    for metric in spec.metrics:
      if metric.class_name == evaluation.ACCURACY_METRIC:
        for threshold in [metric.threshold] + [t.threshold for t in metric.per_slice_thresholds]:
          if threshold.HasField('value_threshold'):
            threshold.value_threshold.lower_bound.value = min_accuracy
  for spec in _per_class_specs(eval_config):
    spec.binarize.class_ids.values[:] = range(num_classes)
  return proto_utils.proto_to_json(eval_config)
