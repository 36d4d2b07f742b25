"""The confusion plot, and the example count, accuracy, and recall and precision per class
derived from its one multi-class confusion matrix (threshold 0: the predicted class is the top
class). Custom TFMA metrics (eval_config.py names this module); runs without TFX. Its extraction
of each example's label and prediction counts the example for the Evaluator's progress
(utils.progress.CountsProgress: Beam's worker processes count too). `logit_models` (the
metric's config, user_model.py): the models whose one-wide output is a logit.

TFMA feeds every metric's combiner one example at a time: ExampleCount, Keras'
SparseCategoricalAccuracy and TFMA's Recall and Precision binarized per class were such
combiners beside the matrix's, about half the Evaluator's time on 200,000 CSV rows
(bench.statistics_and_evaluation, docs/benchmarks.md). Derived from the matrix, each is a few
sums per slice. The values are those metrics' at the top class: the example count is
ExampleCount's, accuracy SparseCategoricalAccuracy's (their keys are kept); a class's
recall is the share of its examples whose top class it is, its precision the share of examples
given it as top class that are it (TFMA's binarized ones counted probability > 0.5, the same
for two classes).
"""

import functools
from typing import Dict, Optional

import numpy as np
from tensorflow_model_analysis.metrics import metric_types, metric_util
from tensorflow_model_analysis.metrics import multi_class_confusion_matrix_metrics as matrices
from tensorflow_model_analysis.metrics import multi_class_confusion_matrix_plot as plot

from contracts import evaluation
from utils import progress


def counted_label_prediction_and_weight(inputs, **kwargs):
  """TFMA's label, prediction and weight of an example, the example counted for progress."""
  if kwargs.get('model_name', '') in ('', evaluation.CANDIDATE):  # the baseline's: no
    progress.count()
  return metric_util.to_label_prediction_example_weight(inputs, **kwargs)


def class_scores_label_and_weight(inputs, logit: bool = False, **kwargs):
  """counted_label_prediction_and_weight for the confusion matrix: a one-wide prediction (a
  module file's sigmoid: class 1's probability; with `logit`, a logit, the sigmoid applied) as two
  classes' scores."""
  for label, prediction, weight in counted_label_prediction_and_weight(inputs, **kwargs):
    if prediction.size == 1:
      one = float(prediction.reshape(-1)[0])
      if logit:
        one = float(1.0 / (1.0 + np.exp(-np.clip(one, -80.0, 80.0))))
      prediction = np.array([1.0 - one, one], dtype=np.float32)
    yield label, prediction, weight


def _matrix_computations(eval_config, model_name, output_name, example_weighted, logit_models):
  """The confusion matrix at threshold 0 (TFMA computes it once for every metric here);
  logit_models: the models whose one-wide output is a logit (user_model.py; a model evaluated
  alone is named '', the candidate)."""
  computations = matrices.multi_class_confusion_matrices(
    thresholds=[0.0],
    eval_config=eval_config,
    model_name=model_name,
    output_name=output_name,
    example_weighted=example_weighted,
    extract_label_prediction_and_weight=functools.partial(
      class_scores_label_and_weight, logit=(model_name or evaluation.CANDIDATE) in logit_models
    ),
  )
  return computations, computations[-1].keys[-1]


def _ratio(numerator: float, denominator: float) -> float:
  return numerator / denominator if denominator else float('nan')


def _derived(
  name: str, value, eval_config, model_name, output_name, sub_key, example_weighted, logit_models
):
  """Computations for MetricKey(name, …, sub_key) = value(matrix entries, class id or None)."""
  computations, matrix_key = _matrix_computations(
    eval_config, model_name, output_name, example_weighted, logit_models
  )
  key = metric_types.MetricKey(
    name=name,
    model_name=model_name,
    output_name=output_name,
    sub_key=sub_key,
    example_weighted=example_weighted,
  )
  class_id: Optional[int] = sub_key.class_id if sub_key is not None else None

  def result(metrics: Dict) -> Dict:
    entries = metrics[matrix_key][0.0]
    return {key: value(entries, class_id)}

  computations.append(metric_types.DerivedMetricComputation(keys=[key], result=result))
  return computations


def _count(entries, _) -> float:
  return float(sum(entries.values()))


def _accuracy(entries, _) -> float:
  right = sum(n for k, n in entries.items() if k.actual_class_id == k.predicted_class_id)
  return _ratio(right, sum(entries.values()))


def _recall(entries, class_id) -> float:
  actual = [(k, n) for k, n in entries.items() if k.actual_class_id == class_id]
  return _ratio(
    sum(n for k, n in actual if k.predicted_class_id == class_id), sum(n for _, n in actual)
  )


def _precision(entries, class_id) -> float:
  given = [(k, n) for k, n in entries.items() if k.predicted_class_id == class_id]
  return _ratio(sum(n for k, n in given if k.actual_class_id == class_id), sum(n for _, n in given))


def _metric(value):
  def computations(
    name,
    eval_config=None,
    model_name='',
    output_name='',
    sub_key=None,
    example_weighted=False,
    logit_models=(),
  ):
    return _derived(
      name, value, eval_config, model_name, output_name, sub_key, example_weighted, logit_models
    )

  return metric_util.merge_per_key_computations(computations)


def _plot(
  name, eval_config=None, model_name='', output_name='', example_weighted=False, logit_models=()
):
  """TFMA's MultiClassConfusionMatrixPlot on the shared matrix (its key and proto)."""
  computations, matrix_key = _matrix_computations(
    eval_config, model_name, output_name, example_weighted, logit_models
  )
  key = metric_types.PlotKey(
    name=name,
    model_name=model_name,
    output_name=output_name,
    example_weighted=example_weighted,
  )

  def result(metrics: Dict) -> Dict:
    return {key: metrics[matrix_key].to_proto().multi_class_confusion_matrix_at_thresholds}

  computations.append(metric_types.DerivedMetricComputation(keys=[key], result=result))
  return computations


class TopClassConfusionMatrixPlot(metric_types.Metric):
  """The confusion matrix at the top class, as TFMA's plot (the matrix counted for progress)."""

  def __init__(self, name: str = plot.MULTI_CLASS_CONFUSION_MATRIX_PLOT_NAME, logit_models=()):
    super().__init__(
      metric_util.merge_per_key_computations(_plot), name=name, logit_models=tuple(logit_models)
    )


class TopClassExampleCount(metric_types.Metric):
  """The examples counted in the matrix: every example (ExampleCount's figure and key)."""

  def __init__(self, name: str = evaluation.EXAMPLE_COUNT_KEY, logit_models=()):
    super().__init__(_metric(_count), name=name, logit_models=tuple(logit_models))


class TopClassAccuracy(metric_types.Metric):
  """The share of examples whose top class is their label (SparseCategoricalAccuracy)."""

  def __init__(self, name: str = evaluation.ACCURACY_KEY, logit_models=()):
    super().__init__(_metric(_accuracy), name=name, logit_models=tuple(logit_models))


class TopClassRecall(metric_types.Metric):
  """Per class (binarize class ids): the share of its examples whose top class it is."""

  def __init__(self, name: str = evaluation.RECALL_KEY, logit_models=()):
    super().__init__(_metric(_recall), name=name, logit_models=tuple(logit_models))


class TopClassPrecision(metric_types.Metric):
  """Per class (binarize class ids): of the examples whose top class it is, the share that are."""

  def __init__(self, name: str = evaluation.PRECISION_KEY, logit_models=()):
    super().__init__(_metric(_precision), name=name, logit_models=tuple(logit_models))
