"""What the Evaluator's configuration and its readers agree on: TFMA model names, the metrics
that bless and how TFMA names them in its results, and how its confusion matrix is read; the
regression figures as people read them."""

from typing import Dict, Optional

from contracts.trainer_options import REGRESSION

CANDIDATE, BASELINE = 'candidate', 'baseline'  # the model just trained, the serving one
# Custom TFMA metrics derived from the confusion matrix (components/blessing_evaluator/
# top_class_metrics.py): the class names in eval_config, and their names in TFMA's results.
METRICS_MODULE = 'components.blessing_evaluator.top_class_metrics'
EXAMPLE_COUNT_METRIC, EXAMPLE_COUNT_KEY = 'TopClassExampleCount', 'example_count'
ACCURACY_METRIC = 'TopClassAccuracy'
ACCURACY_KEY = 'sparse_categorical_accuracy'  # Keras' name for the same figure, kept
# Per class (one sub key per class id; an example is given class c when c is its top class):
# the share of c's eval examples given c, and of those given c, how many are.
RECALL_METRIC, RECALL_KEY = 'TopClassRecall', 'recall'
PRECISION_METRIC, PRECISION_KEY = 'TopClassPrecision', 'precision'
CONFUSION_PLOT = 'TopClassConfusionMatrixPlot'  # TFMA's plot, on the matrix the metrics share
# Regression (the model's PREDICTION against the label, in the label's units): the names of the
# figures in TFMA's results and in what the project reads and shows. The baselines are the best
# constant for each figure, from the train split's labels: BASELINE_MAE, the mean absolute error
# of predicting the train median for every eval example (what a model must beat by
# --min-improvement: a few huge labels pull the mean, not the median); BASELINE_RMSE, the RMSE of
# predicting the train mean.
MAE_KEY = 'mean_absolute_error'
RMSE_KEY = 'root_mean_squared_error'
R2_KEY = 'r_squared'
MAPE_KEY = 'mean_absolute_percentage_error'  # only for labels bounded away from 0 (MAPE_FLOOR)
MEAN_LABEL_KEY, MEAN_PREDICTION_KEY = 'mean_label', 'mean_prediction'
BASELINE_MAE_KEY = 'median_predictor_mean_absolute_error'
BASELINE_RMSE_KEY = 'mean_predictor_root_mean_squared_error'
# 1 - MAE / BASELINE_MAE: how much lower the model's MAE is, as a share (what --min-improvement
# bounds; 0.25: 25 % lower).
IMPROVEMENT_KEY = 'improvement_over_median_predictor'
# A model whose R² is not above 0 explains nothing of the label's spread: not blessed (R² at
# least MIN_R_SQUARED, TFMA's bounds being inclusive).
MIN_R_SQUARED = 1e-6
# Eval predictions outside the train labels' range [lowest, highest], and of the other sign than
# every train label (a negative duration where no label is below 0): counted, said.
OUT_OF_RANGE_KEY = 'predictions_outside_train_range'
OTHER_SIGN_KEY = 'predictions_of_other_sign'
# A heavy-tailed label (trainer/label_figures.py) is judged on its ordinary eval rows: the figures
# above leave out the rows beyond the train labels' far-out fences, counted here.
BEYOND_KEY = 'eval_rows_beyond_fences'
# MAPE only when every eval |label| is at least MAPE_FLOOR of the train split's median |label|
# (a label centred on 0 makes percent errors of near-zero labels, any model's MAPE huge); the
# smallest eval |label| and that floor are kept to say why it was left out.
MAPE_FLOOR = 0.01
SMALLEST_LABEL_KEY = 'smallest_absolute_label'
MAPE_FLOOR_KEY = 'mape_label_floor'
# The custom TFMA metrics that compute them from one pass (components/blessing_evaluator/
# regression_metrics.py), named in eval_config as METRICS_MODULE is.
REGRESSION_METRICS_MODULE = 'components.blessing_evaluator.regression_metrics'
REGRESSION_KEYS = (MAE_KEY, RMSE_KEY, R2_KEY, MAPE_KEY, MEAN_LABEL_KEY, MEAN_PREDICTION_KEY)
# The figures of a regression model's evaluation people compare (`compare`), in the order they are
# shown; REGRESSION_FIGURES, every one read back (MAPE's reason too).
COMPARED_FIGURES = REGRESSION_KEYS + (
  BASELINE_MAE_KEY,
  BASELINE_RMSE_KEY,
  IMPROVEMENT_KEY,
  OUT_OF_RANGE_KEY,
  OTHER_SIGN_KEY,
  BEYOND_KEY,
)
REGRESSION_FIGURES = COMPARED_FIGURES + (SMALLEST_LABEL_KEY, MAPE_FLOOR_KEY)

# What people read for each regression figure (the summary, the report, `compare`).
FIGURE_NAMES = {
  MAE_KEY: 'MAE',
  RMSE_KEY: 'RMSE',
  R2_KEY: 'R²',
  MAPE_KEY: 'MAPE',
  MEAN_LABEL_KEY: 'mean label',
  MEAN_PREDICTION_KEY: 'mean prediction',
  BASELINE_MAE_KEY: 'MAE of the median predictor',
  BASELINE_RMSE_KEY: 'RMSE of the mean predictor',
  IMPROVEMENT_KEY: 'improvement on the median predictor',
  OUT_OF_RANGE_KEY: "predictions outside the train labels' range",
  OTHER_SIGN_KEY: 'predictions of the other sign',
  BEYOND_KEY: 'eval rows beyond the fences',
  SMALLEST_LABEL_KEY: 'smallest |label|',
  MAPE_FLOOR_KEY: "MAPE's floor of |label|",
}


def figure_text(value: float) -> str:
  """A regression figure for people: 4 significant digits, whole from 1,000 ('46,360', '6,720',
  '0.9765'), never 4.636e+04."""
  return f'{value:,.0f}' if abs(value) >= 1000 else f'{value:.4g}'


def improvement(figures: Dict[str, float]) -> Optional[float]:
  """How much lower the model's MAE is than the median predictor's (0.84: 84 % lower; negative:
  higher): IMPROVEMENT_KEY as TFMA measured it, else from both MAEs; None without them."""
  if IMPROVEMENT_KEY in figures:
    return figures[IMPROVEMENT_KEY]
  mae = figures.get(MAE_KEY)
  baseline = figures.get(BASELINE_MAE_KEY)
  if mae is None or not baseline:
    return None
  return 1 - mae / baseline


def mape_left_out(figures: Dict[str, float]) -> str:
  """Why a regression evaluation has no MAPE, in words; '' when it has one."""
  if MAPE_KEY in figures:
    return ''
  smallest, floor = figures.get(SMALLEST_LABEL_KEY), figures.get(MAPE_FLOOR_KEY)
  if smallest and floor is not None and smallest < floor:
    return (
      f'labels near 0 (an eval |label| of {figure_text(smallest)}, under {MAPE_FLOOR:.0%} of '
      f"the train split's median |label| {figure_text(floor / MAPE_FLOOR)}): their percent "
      'errors would swamp it'
    )
  return 'an eval label is 0'


def slice_figure(table: dict) -> str:
  """The figure two runs' slices are compared by (metadata/compare.metrics_table's 'task' {a,
  b}): MAE of two regression runs, else accuracy."""
  both = {table['task']['a'], table['task']['b']}
  return MAE_KEY if both == {REGRESSION} else 'accuracy'


# Custom properties the project adds to TFX's artifacts (components/blessing_evaluator,
# components/serving_pusher), read by metadata/summary.py.
# ModelBlessing: the classes present in the eval split that the model never predicts (top class),
# as JSON [{"class_id": 1, "examples": 6, "judged": true}, …]; a judged one (enough examples, or a
# minority class) withholds the blessing unless allowed.
MISSED_CLASSES = 'missed_classes'
# ModelBlessing: the model's class ids no eval example holds, as JSON [3, …]: a blessing says
# "every evaluated class predicted" and names them.
UNEVALUATED_CLASSES = 'unevaluated_classes'
# ModelBlessing: what was too small in the eval split to judge the model on, as JSON {"examples":
# 5, "min_examples": 30} with, for a classifier's classes below their minimum, "classes":
# [{"class_id": 1, "examples": 2}, …] and "min_class_examples": 5 (components/blessing_evaluator/
# eval_size.py); it withholds the blessing.
EVAL_TOO_SMALL = 'eval_too_small'
# ModelBlessing: 1 when the candidate is the serving model itself (a cached model evaluated again
# after its push): it is evaluated alone, not compared with itself.
CANDIDATE_IS_SERVING = 'candidate_is_serving'
# ModelBlessing: why the serving model was not compared with the candidate, which was judged on
# its own thresholds (components/blessing_evaluator/comparable.py: trained on other columns).
NOT_COMPARED = 'serving_model_not_compared'
# ModelBlessing of a module file's model (--module-file): what it was judged as predicting
# ('classification' or 'regression', read from the model and its transformed label) and the label
# key it was scored against (components/blessing_evaluator/user_model.py).
MODEL_TASK = 'model_task'
MODEL_LABEL = 'model_label'
# ModelBlessing of a module file's model: how its output was read, in words ("a logit of class 1
# (above 0: class 1)", "class 1's probability (above 0.5: class 1)", ...; user_model.reading).
MODEL_READING = 'model_reading'
# ModelBlessing: the serving model's class names, as JSON ["0", …, "9"], when they are not the
# candidate's (other classes, or another order): the serving model is not compared (its class
# ids are not the eval labels'), the candidate is judged on its own thresholds.
SERVING_CLASSES = 'serving_classes'
# ModelBlessing: the serving model's task ('classification' or 'regression') when it is not the
# candidate's: not compared (a classifier's figures are not a regressor's), the candidate is judged
# on its own thresholds.
SERVING_TASK = 'serving_task'
# PushedModel: the serving version that already holds the model (nothing pushed).
ALREADY_SERVING = 'already_serving'


def confusion_rows(evaluation_uri: str) -> Dict[int, Dict[int, float]]:
  """{true class id: {predicted class id: eval examples}} of the candidate on the whole eval
  split, from CONFUSION_PLOT (TFMA's plot proto; threshold 0: the predicted class is the top class; -1 where
  no class was given); {} when the evaluation has none."""
  import tensorflow_model_analysis as tfma

  for for_slice in tfma.load_plots(evaluation_uri):
    if for_slice.slice_key.single_slice_keys:
      continue
    for key_and_value in for_slice.plot_keys_and_values:
      if key_and_value.key.model_name not in ('', CANDIDATE):
        continue
      matrices = key_and_value.value.multi_class_confusion_matrix_at_thresholds.matrices
      if matrices:
        rows: Dict[int, Dict[int, float]] = {}
        for entry in matrices[0].entries:
          row = rows.setdefault(entry.actual_class_id, {})
          row[entry.predicted_class_id] = (
            row.get(entry.predicted_class_id, 0.0) + entry.num_weighted_examples
          )
        return rows
  return {}


def example_count(evaluation_uri: str) -> int:
  """The eval examples the candidate was scored on (EXAMPLE_COUNT_KEY on the whole eval split:
  a classifier's and a regression model's metrics both name it so); 0 when none is recorded."""
  import tensorflow_model_analysis as tfma

  for for_slice in tfma.load_metrics(evaluation_uri):
    if for_slice.slice_key.single_slice_keys:
      continue
    for key_and_value in for_slice.metric_keys_and_values:
      key = key_and_value.key
      if key.name == EXAMPLE_COUNT_KEY and key.model_name in ('', CANDIDATE) and not key.is_diff:
        return int(round(key_and_value.value.double_value.value))
  return 0
