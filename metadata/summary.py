"""A run's facts from its nodes' outputs (run_reader.run_nodes): the RunResult that the summary
prints, the report shows and `last_run.json` holds."""

import json
import math
import os
from typing import Dict, List, Optional, Sequence

from ml_metadata.proto import metadata_store_pb2

from contracts import anomalies, artifacts, input_check, predictions
from contracts import evaluation as evaluation_names
from contracts.trainer_options import REGRESSION
from metadata import artifact_reader
from metadata.run_reader import NodeRun, property_value
from metadata.run_result import Evaluation, Push, RunResult

# pipeline.inference's steps: its ExampleGen's examples are not the training data's
INFER_EXAMPLE_GEN = 'InferExampleGen'
PREDICTIONS_ROWS = 'rows'  # components/prediction_csv: the CSV's rows, inputs inferred
CONFLICTS_SHOWN = 3  # examples filed under two labels named in the summary line


def duplicate_facts(examples) -> dict:
  """What ExampleGen found (components/duplicates.py): counts from the artifact's properties, the
  first conflicts and the examples in two given splits from its duplicates.json."""
  facts = {
    name: property_value(examples, f'num_{name}') or 0
    for name in ('duplicates', 'near_duplicate_groups', 'label_conflicts', 'across_splits')
  }
  facts['conflicts_kept'] = bool(property_value(examples, 'label_conflicts_kept'))
  facts['label_noisy'] = bool(property_value(examples, 'label_noisy'))
  facts['report'] = os.path.join(examples.uri, artifacts.DUPLICATES_FILE)
  try:
    from tfx.dsl.io import fileio

    with fileio.open(facts['report'], 'r') as f:
      listing = json.loads(f.read())
    # Images grouped (not --duplicates off): the summary says which near-copies are not caught.
    facts['near_copies_checked'] = fileio.exists(
      os.path.join(examples.uri, artifacts.IMAGE_META_FILE)
    )
  except Exception:  # noqa: BLE001 (an artifact from before duplicates.json: counts only)
    listing = {}
  facts['conflicts'] = listing.get('conflicts', [])[:CONFLICTS_SHOWN]
  facts['across'] = listing.get('across_splits', [])[:CONFLICTS_SHOWN]
  facts['largest_groups'] = listing.get('largest_groups', [])
  return facts


def class_names(
  examples: Optional[metadata_store_pb2.Artifact], count: int, trained: Sequence[str] = ()
) -> List[str]:
  """Label names from the examples' labels.txt (images, text), else those the Trainer learned
  (`trained`: a CSV's class names), else the class ids."""
  path = os.path.join(examples.uri, artifacts.LABELS_FILE) if examples is not None else ''
  if path and os.path.isfile(path):
    with open(path, encoding='utf-8') as f:
      names = [line.rstrip('\n') for line in f]
    if len(names) == count:
      return names
  if len(trained) == count:
    return list(trained)
  return [str(i) for i in range(count)]


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


def _regression_failure(failure, figures: Dict[str, float]) -> str:
  """One failed threshold of a regression model, said with its figures and flag."""
  name, value = failure.metric_key.name, failure.metric_value.double_value.value
  threshold = failure.metric_threshold
  if name == evaluation_names.IMPROVEMENT_KEY:
    baseline = figures.get(evaluation_names.BASELINE_MAE_KEY, math.nan)
    how = f'{value:.0%} below' if value >= 0 else f'{-value:.0%} above'
    return (
      f"{how} the mean predictor's MAE {_figure(baseline)}, "
      f'{threshold.value_threshold.lower_bound.value:.0%} below needed (--min-improvement)'
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
  """Why a regression model was (not) blessed: 'MAE 1.23, 83% below the mean predictor's 7.06;
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
    failed = [_regression_failure(f, figures) for f in _failures(evaluation)]
    return f'MAE {_figure(mae)}, RMSE {_figure(rmse)}{compared}: ' + '; '.join(failed) + refused
  said = f'MAE {_figure(mae)}'
  if evaluation_names.IMPROVEMENT_KEY in figures:
    said += (
      f", {figures[evaluation_names.IMPROVEMENT_KEY]:.0%} below the mean predictor's "
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


def build(nodes: Dict[str, NodeRun], wall_seconds: float) -> RunResult:
  """The run's outcome from its nodes' outputs."""
  result = RunResult(
    wall_seconds=round(wall_seconds, 1),
    components={n.node_id: n.state for n in nodes.values()},
    executed=sorted(n.node_id for n in nodes.values() if n.state == 'COMPLETE'),
    cached=sorted(n.node_id for n in nodes.values() if n.state == 'CACHED'),
  )
  inferring = nodes.get(INFER_EXAMPLE_GEN)
  nodes = {key: n for key, n in nodes.items() if n.node_id != INFER_EXAMPLE_GEN}
  examples = artifact_reader.output(nodes, 'examples')
  names: List[str] = []
  found: Dict[str, float] = {}  # accuracies per model
  model_run = artifact_reader.output(nodes, 'model_run')
  training = _artifact_json(model_run, artifacts.TRAINING_FILE) if model_run else {}
  result.batch_capped = training.get('batch_capped') or None
  result.trainer_read = trainer_read(
    _artifact_json(model_run, artifacts.DAMAGE_FILE) if model_run else {}
  )
  if training.get('model'):
    result.training = {
      key: training.get(key)
      for key in ('label', 'model', 'hyperparameters', 'tuned', 'weights', 'phases', 'seed')
    }
    result.training.update(
      {key: training[key] for key in ('task', 'loss') if training.get(key)}  # regression
    )
  check = training.get('input_check')
  if check or training.get('input_cache'):
    result.input_check = {
      'verdict': input_check.of_check(check, training['batch_size']).headline if check else None,
      'stall_fraction': (check or {}).get('stall_fraction'),
      'cache': training.get('input_cache'),
    }
  for node in nodes.values():
    out = node.outputs
    if 'statistics' in out:
      result.examples_per_split = {
        split: statistics.num_examples
        for split, statistics in artifact_reader.split_statistics({node.node_id: node}).items()
      }
    if 'examples' in out:
      _examples_facts(result, out['examples'])
    if 'schema' in out:
      result.schema_uri = out['schema'].uri
    if 'anomalies' in out:
      result.anomalies = anomalies.describe_anomalies(out['anomalies'].uri)
    if 'evaluation' in out:
      figures = artifact_reader.regression_figures(out['evaluation'])
      found = artifact_reader.accuracies(out['evaluation'])
      classes = artifact_reader.per_class(out['evaluation'])
      recall = classes.get(evaluation_names.CANDIDATE, {}).get(evaluation_names.RECALL_KEY, [])
      names = class_names(examples, len(recall), training.get('class_names', []))
      figures = artifact_reader.regression_figures(out['evaluation'])
      result.evaluation = Evaluation(
        accuracy=found.get(evaluation_names.CANDIDATE),
        serving_accuracy=found.get(evaluation_names.BASELINE),
        class_recall=dict(zip(names, recall)),
        figures=figures.get(evaluation_names.CANDIDATE, {}),
        serving_figures=figures.get(evaluation_names.BASELINE, {}),
      )
    if 'tuner_results' in out:  # TFX's Tuner: finished trials, best first
      result.tuning = _artifact_json(out['tuner_results'], artifacts.TUNER_RESULTS_FILE)
    if 'blessing' in out:
      _blessing_facts(result, out, names, found)
    if 'infra_blessing' in out:
      report = _artifact_json(out['infra_blessing'], artifacts.SERVING_CHECK_FILE)
      if report.get('checked'):
        result.serving_check = report
    if 'pushed_model' in out:
      pushed = bool(property_value(out['pushed_model'], 'pushed'))
      result.push = Push(
        destination=property_value(out['pushed_model'], 'pushed_destination') if pushed else None,
        already_serving=property_value(out['pushed_model'], evaluation_names.ALREADY_SERVING),
      )
    if 'inference_result' in out:
      result.inferred = result.inferred or {}
      result.inferred['inference_result'] = out['inference_result'].uri
    if 'predictions' in out:
      result.inferred = result.inferred or {}
      result.inferred.update(
        inputs=property_value(out['predictions'], PREDICTIONS_ROWS) or 0,
        csv=os.path.join(out['predictions'].uri, predictions.FILE_NAME),
      )
  if result.inferred is not None and inferring and 'examples' in inferring.outputs:
    _inferred_examples_facts(result.inferred, inferring.outputs['examples'])
  return result


def trainer_read(damage: dict) -> Optional[Dict[str, List[int]]]:
  """{split: [read, recorded]} of the splits the Trainer read fewer records of than were
  recorded (input_damage.json: records.damage.totals), else None."""
  read, recorded = damage.get('read') or {}, damage.get('recorded') or {}
  short = {s: [read.get(s, 0), n] for s, n in recorded.items() if read.get(s, 0) < n}
  return short or None


def _examples_facts(result: RunResult, examples: metadata_store_pb2.Artifact) -> None:
  """What ExampleGen recorded: files left out, photos turned, duplicates, the span."""
  result.examples_uri = examples.uri
  if property_value(examples, 'num_excluded') is not None:
    result.excluded_files = property_value(examples, 'num_excluded')
    result.excluded_report = os.path.join(examples.uri, artifacts.EXCLUDED_FILE)
    result.turned_upright = property_value(examples, artifacts.TURNED_UPRIGHT) or 0
  if property_value(examples, artifacts.REPEATED_HEADERS):
    result.repeated_headers = property_value(examples, artifacts.REPEATED_HEADERS)
  if property_value(examples, artifacts.NON_FINITE_CELLS):
    result.non_finite_cells = property_value(examples, artifacts.NON_FINITE_CELLS)
  if property_value(examples, artifacts.NUMBERS_FROM_TEXT):
    result.numbers_from_text = json.loads(property_value(examples, artifacts.NUMBERS_FROM_TEXT))
  if property_value(examples, 'num_duplicates') is not None:
    result.duplicates = duplicate_facts(examples)
  if property_value(examples, artifacts.DETECTED_ID_COLUMNS):
    result.id_columns = json.loads(property_value(examples, artifacts.DETECTED_ID_COLUMNS))
  if property_value(examples, 'span'):
    result.span = property_value(examples, 'span')


def _blessing_facts(
  result: RunResult, outputs: dict, names: Sequence[str], found: Dict[str, float]
) -> None:
  """Whether the model was blessed, the classes it never predicts and why (found: accuracies of
  the same node's evaluation, when it has one)."""
  blessing = outputs['blessing']
  result.blessed = bool(property_value(blessing, 'blessed'))
  missed = {
    (names[c['class_id']] if c['class_id'] < len(names) else str(c['class_id'])): {
      'examples': c['examples'],
      'judged': c.get('judged', True),
    }
    for c in json.loads(property_value(blessing, evaluation_names.MISSED_CLASSES) or '[]')
  }
  result.missed_classes = missed or None
  unevaluated = [
    names[c] if c < len(names) else str(c)
    for c in json.loads(property_value(blessing, evaluation_names.UNEVALUATED_CLASSES) or '[]')
  ]
  is_serving = bool(property_value(blessing, evaluation_names.CANDIDATE_IS_SERVING))
  not_compared = property_value(blessing, evaluation_names.NOT_COMPARED) or ''
  serving_task = property_value(blessing, evaluation_names.SERVING_TASK)
  if serving_task:
    not_compared = task_differs(serving_task)
  serving_classes = property_value(blessing, evaluation_names.SERVING_CLASSES)
  small = property_value(blessing, evaluation_names.EVAL_TOO_SMALL)
  too_small = eval_size_text(json.loads(small), names) if small else ''
  figures = result.evaluation.figures if result.evaluation else {}
  if 'evaluation' in outputs and figures:
    result.blessing = regression_reason(
      outputs['evaluation'],
      result.blessed,
      figures,
      result.evaluation.serving_figures,
      is_serving,
      not_compared,
      too_small,
    )
  elif 'evaluation' in outputs:
    result.blessing = blessing_reason(
      outputs['evaluation'],
      result.blessed,
      found,
      names,
      missed,
      is_serving,
      unevaluated,
      not_compared,
      json.loads(serving_classes) if serving_classes else None,
      too_small,
    )


def _inferred_examples_facts(inferred: dict, scored: metadata_store_pb2.Artifact) -> None:
  """The examples run --infer-data scored: where, and (images) files skipped, photos turned."""
  inferred['examples_uri'] = scored.uri
  if property_value(scored, 'num_excluded'):
    inferred.update(
      skipped=property_value(scored, 'num_excluded'),
      skipped_report=os.path.join(scored.uri, artifacts.EXCLUDED_FILE),
    )
  if property_value(scored, artifacts.TURNED_UPRIGHT):
    inferred['turned_upright'] = property_value(scored, artifacts.TURNED_UPRIGHT)


def _artifact_json(artifact: metadata_store_pb2.Artifact, name: str):
  """A JSON file inside an artifact (training.json, serving_check.json); {} when not there."""
  from tfx.dsl.io import fileio

  path = os.path.join(artifact.uri, name)
  if not fileio.exists(path):
    return {}
  with fileio.open(path) as f:
    return json.load(f)
