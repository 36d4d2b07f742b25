"""A run's facts from its nodes' outputs (run_reader.run_nodes): the RunResult that the summary
prints, the report shows and `last_run.json` holds."""

import json
import os
from typing import Dict, List, Optional, Sequence

from ml_metadata.proto import metadata_store_pb2

from contracts import anomalies, artifacts, input_check, predictions
from contracts import evaluation as evaluation_names
from metadata import artifact_reader, blessing_reasons, transform_cache
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
    if training.get('dates'):
      result.training['dates'] = training['dates']
    result.training.update(  # regression: its loss, the train labels' range and heavy tail
      {
        key: training[key]
        for key in ('task', 'loss', 'leakage', 'label_min', 'label_max', 'label_tail')
        if training.get(key) not in (None, '')
      }
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
    if transform_cache.UPDATED_CACHE in out and node.state == 'COMPLETE':  # executed this run
      result.transform_cache = transform_cache.used(out[transform_cache.UPDATED_CACHE])
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
  if property_value(examples, artifacts.CSV_DIALECT):
    result.csv_dialect = property_value(examples, artifacts.CSV_DIALECT)
  if property_value(examples, artifacts.NUMBERS_FROM_TEXT):
    result.numbers_from_text = json.loads(property_value(examples, artifacts.NUMBERS_FROM_TEXT))
  if property_value(examples, artifacts.NUMBERS_UNREAD):
    result.numbers_unread = json.loads(property_value(examples, artifacts.NUMBERS_UNREAD))
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
  task = property_value(blessing, evaluation_names.MODEL_TASK)
  if task:  # a module file's model, judged on what it turned out to predict
    what = 'a number' if task == 'regression' else f'{len(names) or 2} classes'
    label = property_value(blessing, evaluation_names.MODEL_LABEL)
    reading = property_value(blessing, evaluation_names.MODEL_READING)
    read = f', its output read as {reading}' if reading else ''
    result.predicts = f'{what} ({task}), scored against {label}{read}'
  is_serving = bool(property_value(blessing, evaluation_names.CANDIDATE_IS_SERVING))
  not_compared = property_value(blessing, evaluation_names.NOT_COMPARED) or ''
  serving_task = property_value(blessing, evaluation_names.SERVING_TASK)
  if serving_task:
    not_compared = blessing_reasons.task_differs(serving_task)
  serving_classes = property_value(blessing, evaluation_names.SERVING_CLASSES)
  small = property_value(blessing, evaluation_names.EVAL_TOO_SMALL)
  too_small = blessing_reasons.eval_size_text(json.loads(small), names) if small else ''
  figures = result.evaluation.figures if result.evaluation else {}
  if 'evaluation' in outputs and figures:
    result.blessing = blessing_reasons.regression_reason(
      outputs['evaluation'],
      result.blessed,
      figures,
      result.evaluation.serving_figures,
      is_serving,
      not_compared,
      too_small,
    )
  elif 'evaluation' in outputs:
    result.blessing = blessing_reasons.blessing_reason(
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
