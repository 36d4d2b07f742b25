"""Reads one pipeline run back from ML Metadata and prints what an ML engineer asks first."""

import dataclasses
import json
import math
import os
from typing import Dict, List, Optional, Sequence

from ml_metadata.metadata_store import metadata_store
from ml_metadata.proto import metadata_store_pb2

from contracts import anomalies, artifacts, fingerprint, predictions
from contracts import evaluation as evaluation_names
from metadata import connection

_EXECUTION = metadata_store_pb2.Execution
# pipeline.inference's steps: its ExampleGen's examples are not the training data's
INFER_EXAMPLE_GEN = 'InferExampleGen'
PREDICTIONS_ROWS = 'rows'  # components/prediction_csv: the CSV's rows, inputs inferred


@dataclasses.dataclass
class NodeRun:
  node_id: str
  state: str  # COMPLETE, CACHED, FAILED, ...
  outputs: Dict[str, metadata_store_pb2.Artifact]
  execution: Optional[metadata_store_pb2.Execution] = None


def open_store(metadata_path: str) -> metadata_store.MetadataStore:
  """A run's store, opened for reading."""
  return connection.open_read_only(metadata_path)


def node_id(store: metadata_store.MetadataStore, execution: metadata_store_pb2.Execution) -> str:
  """The pipeline node an execution ran (its 'node' context is named '<pipeline>.<node id>')."""
  return next(
    (
      c.name.split('.', 1)[1]
      for c in store.get_contexts_by_execution(execution.id)
      if c.type == 'node'
    ),
    execution.type.rsplit('.', 1)[-1],
  )


def is_resolver(execution: metadata_store_pb2.Execution) -> bool:
  """A Resolver node's lookup (it runs on every pipeline run; not a component's work)."""
  return execution.type.endswith('.Resolver')


def pipeline_runs(store: metadata_store.MetadataStore, pipeline_name: str) -> list:
  """The pipeline's run contexts, oldest first (a context's name is the run id)."""
  pipeline = store.get_context_by_type_and_name('pipeline', pipeline_name)
  if pipeline is None:
    return []
  runs = [
    c for c in store.get_children_contexts_by_context(pipeline.id) if c.type == 'pipeline_run'
  ]
  return sorted(runs, key=lambda c: (c.create_time_since_epoch, c.id))


def latest_run(store: metadata_store.MetadataStore, pipeline_name: str) -> Dict[str, NodeRun]:
  """The executions of the newest pipeline run, keyed by component id (resolvers left out)."""
  runs = pipeline_runs(store, pipeline_name)
  return run_nodes(store, runs[-1]) if runs else {}


def run_nodes(store: metadata_store.MetadataStore, run) -> Dict[str, NodeRun]:
  """The executions of one pipeline run (its context), keyed by component id."""
  nodes = {}
  for execution in store.get_executions_by_context(run.id):
    if is_resolver(execution):
      continue
    node = node_id(store, execution)
    outputs = {}
    events = [
      e
      for e in store.get_events_by_execution_ids([execution.id])
      if e.type in (metadata_store_pb2.Event.OUTPUT, metadata_store_pb2.Event.DECLARED_OUTPUT)
    ]
    artifacts = {a.id: a for a in store.get_artifacts_by_id([e.artifact_id for e in events])}
    for event in events:
      key = event.path.steps[0].key if event.path.steps else str(event.artifact_id)
      outputs[key] = artifacts[event.artifact_id]
    nodes[node] = NodeRun(
      node, _EXECUTION.State.Name(execution.last_known_state), outputs, execution
    )
  return nodes


_SAME_ANYWAY = ('input_fingerprint', 'code_fingerprint', 'span', 'version')  # handled apart
# Properties that record another one's default (components/recording_trainer): listed once.
DERIVED_PROPERTIES = {'train_args': 'train_steps'}


def property_leaves(name: str, value, keep_path: bool = False) -> Dict[str, object]:
  """An execution property as {name: value}, JSON objects followed to their leaves, each named
  by its own key (keep_path: by its dotted path from `name`)."""
  if isinstance(value, str) and value.startswith('{'):
    try:
      value = json.loads(value)
    except ValueError:
      return {name: value}
  if isinstance(value, dict):
    found = {}
    for key, inner in value.items():
      inner_name = f'{name}.{key}' if keep_path and name else key
      found.update(property_leaves(inner_name, inner, keep_path))
    return found
  return {name: value}


def execution_facts(store, execution) -> dict:
  """(options, code fingerprint, input fingerprint, input artifact ids) of an execution."""
  properties = {name: property_value(execution, name) for name in execution.custom_properties}
  code = properties.pop('code_fingerprint', None)
  if str(properties.get('custom_config', '')).startswith('{'):  # the Trainer carries it there
    custom_config = json.loads(properties['custom_config'])
    code = custom_config.pop('code_fingerprint', code)
    properties['custom_config'] = custom_config
  for derived, source in DERIVED_PROPERTIES.items():
    if source in properties:
      properties.pop(derived, None)
  options = {}
  for name, value in properties.items():
    options.update(property_leaves(name, value))
  inputs = {}  # input key → artifact ids
  for event in store.get_events_by_execution_ids([execution.id]):
    if event.type == metadata_store_pb2.Event.INPUT:
      # One event per artifact: its path names every input key it came in as.
      for key in [step.key for step in event.path.steps if step.HasField('key')] or ['']:
        inputs.setdefault(key, []).append(event.artifact_id)
  return {
    'code': fingerprint.digests(code),
    'data': options.pop('input_fingerprint', None),
    'inputs': inputs,
    'options': {k: v for k, v in options.items() if k not in _SAME_ANYWAY},
  }


def _change(key: str, before, now) -> str:
  """'train_steps 20 → 25'; a long value (e.g. eval_config's metrics_specs): its name alone."""
  said = f'{key} {before} → {now}'
  return said if len(said) <= 80 else key


def _reason(before: dict, now: dict) -> str:
  """Why an execution ran instead of reusing `before`'s result, in a few words."""
  reasons = []
  changed = sorted(
    path
    for path in set(before['code']) | set(now['code'])
    if before['code'].get(path) != now['code'].get(path)
  )
  if fingerprint.ENVIRONMENT_FILE in changed:
    reasons.append(f'environment changed since the cached run ({fingerprint.ENVIRONMENT_FILE})')
  elif changed:
    reasons.append(f'code changed since the cached run ({", ".join(changed)})')
  options = [
    _change(key, before['options'].get(key), now['options'].get(key))
    for key in sorted(set(before['options']) | set(now['options']))
    if before['options'].get(key) != now['options'].get(key)
  ]
  if options:
    reasons.append(f'options changed ({", ".join(options)})')
  if before['data'] != now['data']:
    reasons.append('input data changed')
  elif before['inputs'] != now['inputs']:
    keys = sorted(
      key
      for key in set(before['inputs']) | set(now['inputs'])
      if sorted(before['inputs'].get(key, [])) != sorted(now['inputs'].get(key, []))
    )
    reasons.append(f'new inputs from upstream ({", ".join(keys)})')
  return (
    '; '.join(reasons)
    or 'nothing it depends on changed (caching off, or the earlier result is gone)'
  )


def why_executed(
  store: metadata_store.MetadataStore, pipeline_name: str, nodes: Dict[str, 'NodeRun']
) -> Dict[str, str]:
  """For each component this run executed: why the cache had nothing for it, compared with that
  component's newest earlier execution (none: a first run, left out)."""
  reasons = {}
  for node in nodes.values():
    if node.state != 'COMPLETE' or node.execution is None:
      continue
    context = store.get_context_by_type_and_name('node', f'{pipeline_name}.{node.node_id}')
    earlier = [
      e
      for e in store.get_executions_by_context(context.id)
      if e.id < node.execution.id and e.last_known_state in (_EXECUTION.COMPLETE, _EXECUTION.CACHED)
    ]
    if earlier:
      reasons[node.node_id] = _reason(
        execution_facts(store, max(earlier, key=lambda e: e.id)),
        execution_facts(store, node.execution),
      )
  return reasons


CONFLICTS_SHOWN = 3  # examples filed under two labels named in the summary line


def duplicate_facts(examples) -> dict:
  """What ExampleGen found (components/duplicates.py): counts from the artifact's properties, the
  first conflicts and the examples in two given splits from its duplicates.json."""
  facts = {
    name: property_value(examples, f'num_{name}') or 0
    for name in ('duplicates', 'near_duplicate_groups', 'label_conflicts', 'across_splits')
  }
  facts['conflicts_kept'] = bool(property_value(examples, 'label_conflicts_kept'))
  facts['report'] = os.path.join(examples.uri, artifacts.DUPLICATES_FILE)
  try:
    from tfx.dsl.io import fileio

    with fileio.open(facts['report'], 'r') as f:
      listing = json.loads(f.read())
  except Exception:  # noqa: BLE001 (an artifact from before duplicates.json: counts only)
    listing = {}
  facts['conflicts'] = listing.get('conflicts', [])[:CONFLICTS_SHOWN]
  facts['across'] = listing.get('across_splits', [])[:CONFLICTS_SHOWN]
  facts['largest_groups'] = listing.get('largest_groups', [])
  return facts


def render_duplicates(facts: dict) -> List[str]:
  """The summary's lines on duplicates: kept together, near-copies, conflicts, given splits."""
  parts = []
  if facts['duplicates']:
    parts.append(
      f'{facts["duplicates"]} example(s) share their content with another, each set in one split'
    )
  if facts['near_duplicate_groups']:
    parts.append(
      f'{facts["near_duplicate_groups"]} group(s) of near-duplicate images, each in one split'
    )
  conflicts = facts['label_conflicts']
  if conflicts:
    named = ', '.join(f'{c.get("path") or c.get("row")} ({c["label"]})' for c in facts['conflicts'])
    more = (
      f' and {conflicts - len(facts["conflicts"])} more'
      if conflicts > len(facts['conflicts'])
      else ''
    )
    what = (
      'kept (--duplicates keep-conflicts)' if facts['conflicts_kept'] else 'left out of both splits'
    )
    parts.append(
      f'{conflicts} example(s) whose content is filed under two labels, {what}: {named}{more}'
    )
  lines = []
  if parts:
    lines.append('duplicates: ' + '; '.join(parts) + f' (see {facts["report"]})')
  if facts['across_splits']:
    named = ', '.join(a['row'] for a in facts['across'])
    lines.append(
      f'warning:    {facts["across_splits"]} example(s) of the given splits have their content in '
      f'both train and eval ({named}, …): eval accuracy may be inflated; --eval-percent N '
      're-splits the data with duplicates grouped'
    )
  return lines


def property_value(item, key: str):
  """An artifact's or execution's property or custom property `key`, or None."""
  for properties in (item.properties, item.custom_properties):
    value = properties.get(key)
    if value is not None:
      return getattr(value, value.WhichOneof('value'))
  return None


def _split_counts(statistics: metadata_store_pb2.Artifact) -> Dict[str, int]:
  from tensorflow_metadata.proto.v0 import statistics_pb2
  from tfx.dsl.io import fileio

  counts = {}
  for path in sorted(fileio.glob(os.path.join(statistics.uri, 'Split-*', 'FeatureStats.pb'))):
    stats = statistics_pb2.DatasetFeatureStatisticsList()
    with fileio.open(path, 'rb') as f:
      stats.ParseFromString(f.read())
    split = os.path.basename(os.path.dirname(path))[len('Split-') :]
    counts[split] = sum(d.num_examples for d in stats.datasets)
  return dict(sorted(counts.items(), key=lambda item: (item[0] != 'train', item[0])))


def _overall_metrics(evaluation: metadata_store_pb2.Artifact):
  """(TFMA metric key, value) of every double-valued metric on the whole eval split."""
  import tensorflow_model_analysis as tfma

  for metrics in tfma.load_metrics(evaluation.uri):
    if metrics.slice_key.single_slice_keys:
      continue
    for key_and_value in metrics.metric_keys_and_values:
      if key_and_value.value.HasField('double_value') and not key_and_value.key.is_diff:
        yield key_and_value.key, key_and_value.value.double_value.value


def accuracies(evaluation: metadata_store_pb2.Artifact) -> Dict[str, float]:
  """Overall eval accuracy per TFMA model name (contracts/evaluation.py): the candidate's and,
  when one was serving, the baseline's."""
  return {
    key.model_name or evaluation_names.CANDIDATE: value
    for key, value in _overall_metrics(evaluation)
    if key.name == evaluation_names.ACCURACY_KEY
  }


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


def per_class(
  evaluation: metadata_store_pb2.Artifact,
) -> Dict[str, Dict[str, List[Optional[float]]]]:
  """{model name: {'recall': [per class id], 'precision': [...]}} on the whole eval split."""
  found: Dict[str, Dict[str, Dict[int, float]]] = {}
  for key, value in _overall_metrics(evaluation):
    if key.sub_key.HasField('class_id') and key.name in (
      evaluation_names.RECALL_KEY,
      evaluation_names.PRECISION_KEY,
    ):
      model = key.model_name or evaluation_names.CANDIDATE
      found.setdefault(model, {}).setdefault(key.name, {})[key.sub_key.class_id.value] = value
  return {  # NaN (a class with no eval example, or never given): None
    model: {
      name: [None if math.isnan(by_id[i]) else by_id[i] for i in sorted(by_id)]
      for name, by_id in metrics.items()
    }
    for model, metrics in found.items()
  }


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


def blessing_reason(
  evaluation: metadata_store_pb2.Artifact,
  blessed: bool,
  found: Dict[str, float],
  names: Sequence[str] = (),
  missed: Optional[Dict[str, int]] = None,
  candidate_is_serving: bool = False,
) -> str:
  """Why the model was (not) blessed, from TFMA's validation result: 'accuracy 0.412, serving
  model 0.984: more than 0.01 below', 'accuracy 0.93, class 8 recall 0.42: below the 0.5 needed',
  then the project's rule (every eval class predicted) and whether a serving model was compared.
  found: accuracies(evaluation); names: class names by id; missed: {class name: {'examples': n,
  'judged': bool}} of the classes the model never predicts (components/blessing_evaluator/
  class_coverage.py); candidate_is_serving: the model evaluated is the serving one."""
  import tensorflow_model_analysis as tfma

  candidate = found.get(evaluation_names.CANDIDATE)
  serving = found.get(evaluation_names.BASELINE)
  if candidate is None:
    return ''
  said = f'accuracy {candidate:.3f}'
  if not blessed:
    failures = [
      failure
      for per_slice in tfma.load_validation_result(evaluation.uri).metric_validations_per_slice
      for failure in per_slice.failures
    ]
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
  said += _missed_said(missed) if missed else ', every class predicted'
  if candidate_is_serving:
    return f'{said}; it is the serving model (not compared with itself)'
  if serving is None:
    return f'{said}; no serving model to compare with'
  return f'{said}, serving model {serving:.3f}'


def build(nodes: Dict[str, NodeRun], wall_seconds: float) -> dict:
  """A plain dict (also written as JSON) of the run's outcome."""
  summary = {
    'wall_seconds': round(wall_seconds, 1),
    'components': {n.node_id: n.state for n in nodes.values()},
    'executed': sorted(n.node_id for n in nodes.values() if n.state == 'COMPLETE'),
    'cached': sorted(n.node_id for n in nodes.values() if n.state == 'CACHED'),
  }
  inferring = nodes.get(INFER_EXAMPLE_GEN)
  nodes = {key: n for key, n in nodes.items() if n.node_id != INFER_EXAMPLE_GEN}
  examples = next((n.outputs['examples'] for n in nodes.values() if 'examples' in n.outputs), None)
  names: List[str] = []
  model_run = next(
    (n.outputs['model_run'] for n in nodes.values() if 'model_run' in n.outputs), None
  )
  training = _artifact_json(model_run, artifacts.TRAINING_FILE) if model_run else {}
  if training.get('batch_capped'):
    summary['batch_capped'] = training['batch_capped']
  if training.get('model'):
    summary['training'] = {
      key: training.get(key) for key in ('model', 'hyperparameters', 'tuned', 'weights', 'phases')
    }
  if training.get('input_check') or training.get('input_cache'):
    summary['input_check'] = {
      'stall_fraction': (training.get('input_check') or {}).get('stall_fraction'),
      'cache': training.get('input_cache'),
    }
  for node in nodes.values():
    out = node.outputs
    if 'statistics' in out:
      summary['examples_per_split'] = _split_counts(out['statistics'])
    if 'examples' in out and property_value(out['examples'], 'num_excluded') is not None:
      summary['excluded_files'] = property_value(out['examples'], 'num_excluded')
      summary['excluded_report'] = os.path.join(out['examples'].uri, artifacts.EXCLUDED_FILE)
      summary['turned_upright'] = property_value(out['examples'], artifacts.TURNED_UPRIGHT) or 0
      summary['examples_uri'] = out['examples'].uri
    elif 'examples' in out:
      summary['examples_uri'] = out['examples'].uri
    if 'examples' in out and property_value(out['examples'], 'num_duplicates') is not None:
      summary['duplicates'] = duplicate_facts(out['examples'])
    if 'examples' in out and property_value(out['examples'], 'span'):
      summary['span'] = property_value(out['examples'], 'span')
    if 'schema' in out:
      summary['schema_uri'] = out['schema'].uri
    if 'anomalies' in out:
      summary['anomalies'] = anomalies.describe_anomalies(out['anomalies'].uri)
    if 'evaluation' in out:
      found = accuracies(out['evaluation'])
      summary['eval_accuracy'] = found.get(evaluation_names.CANDIDATE)
      summary['serving_accuracy'] = found.get(evaluation_names.BASELINE)
      classes = per_class(out['evaluation'])
      recall = classes.get(evaluation_names.CANDIDATE, {}).get(evaluation_names.RECALL_KEY, [])
      names = class_names(examples, len(recall), training.get('class_names', []))
      summary['class_recall'] = dict(zip(names, recall))
    if 'tuner_results' in out:  # TFX's Tuner: finished trials, best first
      summary['tuning'] = _artifact_json(out['tuner_results'], artifacts.TUNER_RESULTS_FILE)
    if 'blessing' in out:
      summary['blessed'] = bool(property_value(out['blessing'], 'blessed'))
      missed = {
        (names[c['class_id']] if c['class_id'] < len(names) else str(c['class_id'])): {
          'examples': c['examples'],
          'judged': c.get('judged', True),
        }
        for c in json.loads(
          property_value(out['blessing'], evaluation_names.MISSED_CLASSES) or '[]'
        )
      }
      if missed:
        summary['missed_classes'] = missed
      is_serving = bool(property_value(out['blessing'], evaluation_names.CANDIDATE_IS_SERVING))
      if 'evaluation' in out:
        summary['blessing'] = blessing_reason(
          out['evaluation'], summary['blessed'], found, names, missed, is_serving
        )
    if 'infra_blessing' in out:
      report = _artifact_json(out['infra_blessing'], artifacts.SERVING_CHECK_FILE)
      if report.get('checked'):
        summary['serving_check'] = report
    if 'pushed_model' in out:
      pushed = bool(property_value(out['pushed_model'], 'pushed'))
      summary['pushed_to'] = (
        property_value(out['pushed_model'], 'pushed_destination') if pushed else None
      )
      already = property_value(out['pushed_model'], evaluation_names.ALREADY_SERVING)
      if already:
        summary['already_serving'] = already
    if 'inference_result' in out:
      summary.setdefault('inferred', {})['inference_result'] = out['inference_result'].uri
    if 'predictions' in out:
      summary.setdefault('inferred', {}).update(
        inputs=property_value(out['predictions'], PREDICTIONS_ROWS) or 0,
        csv=os.path.join(out['predictions'].uri, predictions.FILE_NAME),
      )
  if 'inferred' in summary and inferring and 'examples' in inferring.outputs:
    scored = inferring.outputs['examples']
    summary['inferred']['examples_uri'] = scored.uri
    if property_value(scored, 'num_excluded'):  # images: files skipped, photos turned
      summary['inferred'].update(
        skipped=property_value(scored, 'num_excluded'),
        skipped_report=os.path.join(scored.uri, artifacts.EXCLUDED_FILE),
      )
    if property_value(scored, artifacts.TURNED_UPRIGHT):
      summary['inferred']['turned_upright'] = property_value(scored, artifacts.TURNED_UPRIGHT)
  return summary


def _artifact_json(artifact: metadata_store_pb2.Artifact, name: str):
  """A JSON file inside an artifact (training.json, serving_check.json); {} when not there."""
  from tfx.dsl.io import fileio

  path = os.path.join(artifact.uri, name)
  if not fileio.exists(path):
    return {}
  with fileio.open(path) as f:
    return json.load(f)


def render_serving_check(report: dict) -> str:
  """'ok, loaded in 0.41 s; p50 / p99 per request: serving_default 0.8 / 1.9 ms, …' or
  'failed (predict_image_bytes: …)'."""
  if report['problems']:
    return 'failed (' + '; '.join(report['problems']) + ')'
  timings = ', '.join(
    f'{name} {t["p50_ms"]:.1f} / {t["p99_ms"]:.1f} ms' for name, t in report['signatures'].items()
  )
  return f'ok, loaded in {report["load_seconds"]:.2f} s; p50 / p99 per request: {timings}'


def render_input_check(check: dict) -> str:
  """The Trainer's input check (trainer/diagnosis.py) and cache decision, in one line."""
  parts = []
  if check.get('stall_fraction') is not None:
    parts.append(f'training waited for input {check["stall_fraction"]:.1%} of the time')
  if check.get('cache'):
    parts.append(check['cache']['note'])  # trainer/input_cache.py's words
  return '; '.join(parts)


def _values(values: dict) -> str:
  return ', '.join(
    f'{name} {value:g}' if isinstance(value, float) else f'{name} {value}'
    for name, value in sorted(values.items())
  )


def render_training(training: dict) -> List[str]:
  """'model: …' (the model, its hyperparameters, the backbone's weights) and, for a model
  trained in phases (trainer/fine_tune.py), 'training: …' with each phase's steps, rate, time."""
  weights = f'; backbone weights: {training["weights"]}' if training.get('weights') else ''
  tuned = ' (tuned)' if training.get('tuned') else ''
  lines = [
    f'model:      {training["model"]}{weights}; {_values(training["hyperparameters"])}{tuned}'
  ]
  phases = training.get('phases') or []
  if len(phases) > 1 or (phases and phases[0]['name'] != 'train'):
    lines.append(
      'training:   '
      + ', then '.join(
        f'{p["name"]} {p["steps"]} steps at learning rate {p["learning_rate"]:g}'
        + (
          f' (top {p["unfrozen_layers"]} backbone layers unfrozen)'
          if p.get('unfrozen_layers')
          else ' (backbone frozen)'
          if p['name'] == 'head'
          else ''
        )
        + f' in {p["seconds"]:.1f} s'
        for p in phases
      )
    )
  return lines


def render_tuning(trials: list) -> str:
  """'best of 3 trials: trial 2, eval accuracy 0.9100 with learning_rate …' (TFX's
  tuner_results.json: finished trials, best first, each {trial_id, score, **values})."""
  if not trials:
    return 'no trial finished'
  best = {k: v for k, v in trials[0].items() if k not in ('trial_id', 'score')}
  return (
    f'best of {len(trials)} trials: trial {trials[0]["trial_id"]}, eval accuracy '
    f'{trials[0]["score"]:.4f} with {_values(best)}'
  )


def render_revision(revision: dict) -> str:
  """'git 3a58a3f1d1cb (v1), dvc md5 7625a6b5….dir (images.dvc)' of the data_* properties
  (data_revisions/revision.py); '' for none."""
  parts = []
  if revision.get('data_git_commit'):
    rev = revision.get('data_rev')
    parts.append(
      f'git {revision["data_git_commit"][:12]}'
      + (f' ({rev})' if rev else '')
      + (' with uncommitted changes' if revision.get('data_git_dirty') else '')
    )
  elif revision.get('data_git_dirty'):
    parts.append('git: no commit yet')
  if revision.get('data_dvc_md5'):
    parts.append(f'dvc md5 {revision["data_dvc_md5"]} ({revision["data_dvc_file"]})')
  if revision.get('data_s3_endpoint'):
    parts.append(f'{revision["data_source"]} at {revision["data_s3_endpoint"]}')
  return ', '.join(parts)


def render(summary: dict) -> List[str]:
  """Human-readable lines of the summary."""
  lines = ['── summary ──']
  if summary.get('span'):
    lines.append(f'data:       span {summary["span"]}')
  revision = summary.get('data_revision') or {}
  if render_revision(revision):
    lines.append(f'data rev:   {render_revision(revision)}')
  if revision.get('data_git_dirty'):
    lines.append(
      'warning:    --data has changes git (or DVC) has not committed: '
      'this run did not read a committed snapshot'
    )
  counts = summary.get('examples_per_split')
  if counts:
    lines.append(
      'examples:   '
      + ', '.join(f'{split} {n}' for split, n in counts.items())
      + (
        f'; {summary["turned_upright"]} photo(s) turned upright by their EXIF orientation'
        if summary.get('turned_upright')
        else ''
      )
    )
  if 'input_damage' in summary:
    damage = summary['input_damage']
    lines.append(
      f'input:      {damage["corrupt"]} damaged record(s) dropped from '
      f'{damage["damaged_shards"]} of {damage["shards"]} file(s) ({damage["lost_bytes"]} bytes, '
      f'{damage["truncated_bytes"]} truncated); read from intact copies in {damage["salvaged_to"]}'
    )
  if 'excluded_files' in summary:
    lines.append(
      f'excluded:   {summary["excluded_files"]} file(s)'
      + (f' (see {summary["excluded_report"]})' if summary['excluded_files'] else '')
    )
  if summary.get('duplicates'):
    lines.extend(render_duplicates(summary['duplicates']))
  if 'anomalies' in summary:
    lines.append(
      f'anomalies:  {len(summary["anomalies"])}'
      + ''.join(f'\n  - {a}' for a in summary['anomalies'])
    )
  if 'tuning' in summary:
    lines.append(f'tuning:     {render_tuning(summary["tuning"])}')
  if summary.get('training'):
    lines.extend(render_training(summary['training']))
  if summary.get('input_check'):
    lines.append(f'input check: {render_input_check(summary["input_check"])}')
  if summary.get('eval_accuracy') is not None:
    lines.append(f'eval accuracy: {summary["eval_accuracy"]:.4f}')
  recall = {
    name: value for name, value in (summary.get('class_recall') or {}).items() if value is not None
  }
  if recall:
    weakest = min(recall, key=recall.get)
    unmeasured = len(summary['class_recall']) - len(recall)
    lines.append(
      f'per class:  recall {recall[weakest]:.3f} (class {weakest}) to {max(recall.values()):.3f},'
      f' {len(summary["class_recall"])} classes'
      + (f' ({unmeasured} with no eval example)' if unmeasured else '')
    )
  if 'batch_capped' in summary:
    capped = summary['batch_capped']
    lines.append(
      f'batch:      {capped["train_examples"]}, the whole train split '
      f'(--batch-size {capped["asked"]} is more than it holds)'
    )
  if 'blessed' in summary:
    why = f' ({summary["blessing"]})' if summary.get('blessing') else ''
    lines.append(f'blessed:    {"yes" if summary["blessed"] else "no"}{why}')
  if 'serving_check' in summary:
    lines.append(f'serving:    {render_serving_check(summary["serving_check"])}')
  if 'pushed_to' in summary:
    lines.append(
      f'pushed to:  {summary["pushed_to"]}'
      if summary['pushed_to']
      else f'pushed to:  not again: already serving as {summary["already_serving"]}'
      if summary.get('already_serving')
      else 'pushed to:  not pushed'
    )
  if summary.get('inferred', {}).get('csv'):
    inferred = summary['inferred']
    lines.append(
      f'inferred:   {inferred["inputs"]} input(s) → {inferred["csv"]}'
      + ('' if inferred['inputs'] or summary.get('blessed') else ' (not blessed: none scored)')
      + (
        f'; {inferred["turned_upright"]} photo(s) turned upright by their EXIF orientation'
        if inferred.get('turned_upright')
        else ''
      )
      + (
        f'; {inferred["skipped"]} file(s) skipped (see {inferred["skipped_report"]})'
        if inferred.get('skipped')
        else ''
      )
    )
  if summary.get('run_id'):
    lines.append(f'run id:     {summary["run_id"]}')
  if summary.get('unchanged'):
    lines.append(
      'components: none run: the data, code, options and serving model are those of run '
      f'{summary["run_id"]}, whose results these are (--no-cache runs the pipeline anyway)'
    )
    lines.append(
      f'wall time:  {summary["unchanged"]["seconds"]:.1f} s (that run: {_wall(summary)})'
    )
    if 'report' in summary:
      lines.append(f'report:     {summary["report"] or "not written (see the log)"}')
    return lines
  total = len(summary['components'])
  lines.append(
    f'components: {len(summary["executed"])} executed, {len(summary["cached"])} cached'
    f' of {total}'
    + (' (all cached: nothing re-ran)' if total and len(summary['cached']) == total else '')
  )
  for node, reason in sorted(summary.get('why_executed', {}).items()):
    lines.append(f'  {node} executed: {reason}')
  lines.append(f'wall time:  {_wall(summary)}')
  if 'report' in summary:
    lines.append(f'report:     {summary["report"] or "not written (see the log)"}')
  return lines


def _wall(summary: dict) -> str:
  """The process's own time, start to exit, and the part before the first component (imports,
  data checks); the components' alone for a summary from before it was recorded."""
  if 'process_seconds' not in summary:
    return f'{summary["wall_seconds"]:.1f} s'
  if 'before_components_seconds' not in summary:  # stopped before the first component
    return f'{summary["process_seconds"]:.1f} s'
  return (
    f'{summary["process_seconds"]:.1f} s ({summary["before_components_seconds"]:.1f} s before '
    f'the first component: imports, data checks; {summary["wall_seconds"]:.1f} s the components)'
  )


def write(summary: dict, path: str) -> None:
  with open(path, 'w') as f:
    json.dump(summary, f, indent=2)
