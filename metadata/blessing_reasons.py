"""Why a model was (not) blessed, in one line (RunResult.blessing: the summary and the report
show it): its figures against the thresholds it failed or passed, the classes it never predicts
and whether a serving model was compared."""

import math
from typing import Dict, Optional, Sequence

from ml_metadata.proto import metadata_store_pb2

from contracts import evaluation as evaluation_names
from contracts.trainer_options import REGRESSION


def missed_text(missed: Dict[str, dict]) -> str:
  """'class 1 never predicted (6 eval examples)', 'classes 1, 7 never predicted (6, 3 eval
  examples)'; missed: {class name: {'examples': n, …}}."""
  shown = list(missed)[:5]
  more = f' and {len(missed) - len(shown)} more' if len(missed) > len(shown) else ''
  counts = [missed[name]['examples'] for name in shown]
  return (
    f'class{"es" if len(missed) > 1 else ""} {", ".join(shown)}{more} never predicted '
    f'({", ".join(map(str, counts))} eval example{"s" if counts != [1] else ""})'
  )


def _missed_said(missed: Dict[str, dict]) -> str:
  """', class 1 never predicted (6 eval examples), allowed; class 9 never predicted (1 eval
  example), too few to judge' for a blessed model (judged ones were allowed)."""
  judged = {name: c for name, c in missed.items() if c['judged']}
  unjudged = {name: c for name, c in missed.items() if not c['judged']}
  return ''.join(
    f', {missed_text(part)}, {what}'
    for part, what in ((judged, 'allowed'), (unjudged, 'too few to judge'))
    if part
  )


def _unevaluated_said(unevaluated: Sequence[str]) -> str:
  """'; class 3 had no eval example': classes of the model a blessing could not judge."""
  shown = list(unevaluated)[:5]
  more = f' and {len(unevaluated) - len(shown)} more' if len(unevaluated) > len(shown) else ''
  plural = 'es' if len(unevaluated) > 1 else ''
  return f'; class{plural} {", ".join(shown)}{more} had no eval example'


def eval_size_text(small: dict, names: Sequence[str] = ()) -> str:
  """Why an eval split was too small to judge a model on (the blessing's EVAL_TOO_SMALL): 'only
  5 eval examples, at least 30 needed to judge a model (--min-eval-examples)', the classes below
  their minimum likewise, then the remedy."""
  parts = []
  examples, needed = small['examples'], small['min_examples']
  if examples < needed:
    parts.append(
      f'only {examples} eval example{"s" if examples != 1 else ""}, at least {needed} needed to '
      'judge a model (--min-eval-examples)'
    )
  classes = small.get('classes') or []
  if classes:
    shown = classes[:5]
    more = f' and {len(classes) - len(shown)} more' if len(classes) > len(shown) else ''
    said = [
      names[c['class_id']] if c['class_id'] < len(names) else str(c['class_id']) for c in shown
    ]
    counts = [c['examples'] for c in shown]
    one = len(classes) == 1
    parts.append(
      f'class{"" if one else "es"} {", ".join(said)}{more} {"has" if one else "have"} '
      f'{", ".join(map(str, counts))} eval example{"" if counts == [1] else "s"}, at least '
      f'{small["min_class_examples"]} of each needed (--min-eval-class-examples)'
    )
  return '; '.join(parts + ['a larger --eval-percent gives more'])


def classes_differ(serving_classes: Sequence[str], names: Sequence[str]) -> str:
  """'not compared with the serving model, whose classes differ (only it has 9)': the
  Evaluator's refusal to score a serving model by another class list (SERVING_CLASSES)."""
  gone = [c for c in serving_classes if c not in names]
  new = [c for c in names if c not in serving_classes]
  said = [
    f'{who} {", ".join(part[:5])}{" …" if len(part) > 5 else ""}'
    for who, part in (('only it has', gone), ('only this model has', new))
    if part
  ]
  return (
    'not compared with the serving model, whose classes differ '
    f'({"; ".join(said) or "the same classes in another order"}): judged on its own thresholds'
  )


def task_differs(serving_task: str) -> str:
  """Why a serving model of the other task was not compared (the blessing's SERVING_TASK)."""
  theirs, ours = ('a number', 'classes') if serving_task == REGRESSION else ('classes', 'a number')
  return f'it predicts {theirs}, this model {ours} (judged on its own thresholds)'


def blessing_reason(
  evaluation: metadata_store_pb2.Artifact,
  blessed: bool,
  found: Dict[str, float],
  names: Sequence[str] = (),
  missed: Optional[Dict[str, int]] = None,
  candidate_is_serving: bool = False,
  unevaluated: Sequence[str] = (),
  not_compared: str = '',
  serving_classes: Optional[Sequence[str]] = None,
  too_small: str = '',
) -> str:
  """Why the model was (not) blessed, from TFMA's validation result: 'accuracy 0.412, serving
  model 0.984: more than 0.01 below', 'accuracy 0.93, class 8 recall 0.42: below the 0.5 needed',
  then the project's rule (every eval class predicted) and whether a serving model was compared.
  found: accuracies(evaluation); names: class names by id; missed: {class name: {'examples': n,
  'judged': bool}} of the classes the model never predicts (components/blessing_evaluator/
  class_coverage.py); candidate_is_serving: the model evaluated is the serving one;
  unevaluated: names of the model's classes no eval example holds; not_compared: why the serving
  model was not compared (components/blessing_evaluator/comparable.py); serving_classes: the
  serving model's class names where they are not the candidate's (it was not compared);
  too_small: eval_size_text of an eval split too small to judge on, said first when not blessed
  (the figures mean little then)."""
  candidate = found.get(evaluation_names.CANDIDATE)
  serving = found.get(evaluation_names.BASELINE)
  if candidate is None:
    return ''
  said = f'accuracy {candidate:.3f}'
  refused = (
    f'; {classes_differ(serving_classes, names)}'
    if serving_classes is not None
    else f'; serving model not compared: {not_compared}'
    if not_compared
    else ''
  )
  if not blessed and too_small:
    return f'{said}, {too_small}{refused}'
  if not blessed:
    return _refusal(evaluation, said, serving, names, missed) + refused
  if missed:
    said += _missed_said(missed)
  else:
    said += ', every evaluated class predicted' if unevaluated else ', every class predicted'
  if unevaluated:
    said += _unevaluated_said(unevaluated)
  if candidate_is_serving:
    return f'{said}; it is the serving model (not compared with itself)'
  if refused:
    return said + refused
  if serving is None:
    return f'{said}; no serving model to compare with'
  return f'{said}, serving model {serving:.3f}'


def _failures(evaluation) -> list:
  """TFMA's failed thresholds (validation result) of an evaluation."""
  import tensorflow_model_analysis as tfma

  return [
    failure
    for per_slice in tfma.load_validation_result(evaluation.uri).metric_validations_per_slice
    for failure in per_slice.failures
  ]


def _figure(value: float) -> str:
  return evaluation_names.figure_text(value)  # 46,365, not 4.636e+04


def regression_failure(failure, figures: Dict[str, float]) -> str:
  """One failed threshold of a regression model, said with its figures and flag."""
  name, value = failure.metric_key.name, failure.metric_value.double_value.value
  threshold = failure.metric_threshold
  if name == evaluation_names.IMPROVEMENT_KEY:
    baseline = figures.get(evaluation_names.BASELINE_MAE_KEY, math.nan)
    how = f'{value:.0%} below' if value >= 0 else f'{-value:.0%} above'
    return (
      f"{how} the median predictor's MAE {_figure(baseline)}, "
      f'{threshold.value_threshold.lower_bound.value:.0%} below needed (--min-improvement)'
    )
  if name == evaluation_names.R2_KEY:
    return (
      f"R² {value:.3g}: the model explains none of the label's spread (R² above 0 needed)"
      if not math.isnan(value)
      else 'no R²: every eval label is the same'
    )
  if threshold.HasField('change_threshold'):
    return (
      f"RMSE more than {threshold.change_threshold.relative.value:.0%} above the serving model's "
      '(--max-error-increase)'
    )
  short = 'MAE' if name == evaluation_names.MAE_KEY else 'RMSE'
  return (
    f'{short} {_figure(value)}: above the {threshold.value_threshold.upper_bound.value:g} '
    f'allowed (--max-{short.lower()})'
  )


def regression_reason(
  evaluation: metadata_store_pb2.Artifact,
  blessed: bool,
  figures: Dict[str, float],
  serving: Dict[str, float],
  candidate_is_serving: bool = False,
  not_compared: str = '',
  too_small: str = '',
) -> str:
  """Why a regression model was (not) blessed: 'MAE 1.23, 83% below the median predictor's 7.06;
  RMSE 2.1, serving model 2.05', or each threshold it failed ('MAE 1.3, RMSE 2.5, serving model
  2.0: RMSE more than 5% above the serving model's (--max-error-increase)'), then whether a
  serving model was compared. figures,
  serving: the candidate's and the serving model's (artifact_reader.regression_figures);
  too_small: as blessing_reason's."""
  mae, rmse = figures.get(evaluation_names.MAE_KEY), figures.get(evaluation_names.RMSE_KEY)
  if mae is None or rmse is None:
    return ''
  refused = f'; serving model not compared: {not_compared}' if not_compared else ''
  theirs = serving.get(evaluation_names.RMSE_KEY)
  compared = f', serving model {_figure(theirs)}' if theirs is not None else ''
  if not blessed and too_small:
    return f'MAE {_figure(mae)}, RMSE {_figure(rmse)}{compared}: {too_small}{refused}'
  if not blessed:
    failed = [regression_failure(f, figures) for f in _failures(evaluation)]
    return f'MAE {_figure(mae)}, RMSE {_figure(rmse)}{compared}: ' + '; '.join(failed) + refused
  said = f'MAE {_figure(mae)}'
  if evaluation_names.IMPROVEMENT_KEY in figures:
    said += (
      f", {figures[evaluation_names.IMPROVEMENT_KEY]:.0%} below the median predictor's "
      f'{_figure(figures[evaluation_names.BASELINE_MAE_KEY])}'
    )
  said += f'; RMSE {_figure(rmse)}'
  if candidate_is_serving:
    return f'{said}; it is the serving model (not compared with itself)'
  if refused:
    return said + refused
  return f'{said}{compared}' if compared else f'{said}; no serving model to compare with'


def _refusal(evaluation, said: str, serving: Optional[float], names, missed) -> str:
  """blessing_reason of a model not blessed: the threshold it failed, or the class it missed."""
  failures = _failures(evaluation)
  failed = [f.metric_threshold for f in failures]
  drops = [t.change_threshold for t in failed if t.HasField('change_threshold')]
  if drops and serving is not None:
    return f'{said}, serving model {serving:.3f}: more than {-drops[0].absolute.value:g} below'
  classes = [f for f in failures if f.metric_key.sub_key.HasField('class_id')]
  if classes:
    worst = min(classes, key=lambda f: f.metric_value.double_value.value)
    class_id = worst.metric_key.sub_key.class_id.value
    name = names[class_id] if class_id < len(names) else str(class_id)
    return (
      f'{said}, class {name} recall {worst.metric_value.double_value.value:.3f}: below the '
      f'{worst.metric_threshold.value_threshold.lower_bound.value:g} needed'
      + (f' ({len(classes)} classes)' if len(classes) > 1 else '')
    )
  bounds = [t.value_threshold for t in failed if t.HasField('value_threshold')]
  if bounds:
    return f'{said}, below the {bounds[0].lower_bound.value:g} needed'
  judged = {name: c for name, c in (missed or {}).items() if c['judged']}
  if judged:
    return (
      f'{said}, {missed_text(judged)}: a model that misses a class is not pushed '
      '(--allow-missed-classes pushes it)'
    )
  return said
