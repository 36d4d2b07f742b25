"""A run's executions read back from ML Metadata: its nodes and their outputs, execution
properties, and why the cache had nothing for a component."""

import dataclasses
import json
import os
from typing import Dict, Optional

from ml_metadata.metadata_store import metadata_store
from ml_metadata.proto import metadata_store_pb2

from metadata import connection
from utils import data_index, fingerprint

_EXECUTION = metadata_store_pb2.Execution


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


def options_of(properties: dict) -> dict:
  """Execution properties as {leaf name: value} (property_leaves), a leaf named by its own key,
  but those of a property that shares a key with another (the Evaluator's eval_config and
  regression_eval_config both hold model_specs and metrics_specs) by their dotted paths. Not by
  whichever came last: ML Metadata's properties come in no fixed order, and two identical
  executions read as 'options changed'."""
  leaves = {name: property_leaves(name, value) for name, value in properties.items()}
  counts: Dict[str, int] = {}
  for found in leaves.values():
    for key in found:
      counts[key] = counts.get(key, 0) + 1
  options = {}
  for name in sorted(leaves):
    shared = any(counts[key] > 1 for key in leaves[name])
    options.update(property_leaves(name, properties[name], True) if shared else leaves[name])
  return options


def execution_facts(store, execution) -> dict:
  """(options, code fingerprint, input data, input artifact ids) of an execution."""
  properties = {name: property_value(execution, name) for name in execution.custom_properties}
  code = properties.pop('code_fingerprint', None)
  if str(properties.get('custom_config', '')).startswith('{'):  # the Trainer carries it there
    custom_config = json.loads(properties['custom_config'])
    code = custom_config.pop('code_fingerprint', code)
    properties['custom_config'] = custom_config
  for derived, source in DERIVED_PROPERTIES.items():
    if source in properties:
      properties.pop(derived, None)
  options = options_of(properties)
  inputs = {}  # input key → artifact ids
  for event in store.get_events_by_execution_ids([execution.id]):
    if event.type == metadata_store_pb2.Event.INPUT:
      # One event per artifact: its path names every input key it came in as.
      for key in [step.key for step in event.path.steps if step.HasField('key')] or ['']:
        inputs.setdefault(key, []).append(event.artifact_id)
  digests = fingerprint.digests(code)
  content = {k: v for k, v in digests.items() if k.startswith(data_index.DATA_KEY)}
  return {
    'code': {k: v for k, v in digests.items() if k not in content},
    # TFX's input fingerprint (sizes, times) and the data's content (utils/data_index.py)
    'data': [options.pop('input_fingerprint', None), content],
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


def data_named(folder: str, pattern: str) -> str:
  """What --data named: the file when `pattern` names one (a CSV or TFRecord file: no glob
  characters), else the `folder` the pattern's files are under."""
  one_file = pattern and not any(c in pattern for c in '*?[{')
  return os.path.join(folder, pattern) if one_file else folder


def data_source(execution) -> Optional[str]:
  """What an ExampleGen execution read, as --data named it: the one file its pattern names
  (a CSV or TFRecord file), else its input_base folder; None when it has none."""
  base = property_value(execution, 'input_base')
  if base is None:
    return None
  splits = json.loads(property_value(execution, 'input_config') or '{}').get('splits', [])
  patterns = (
    [property_value(execution, 'pattern')] if not splits else [s.get('pattern') for s in splits]
  )
  return data_named(base, patterns[0] or '') if len(patterns) == 1 else base


def property_value(item, key: str):
  """An artifact's or execution's property or custom property `key`, or None."""
  for properties in (item.properties, item.custom_properties):
    value = properties.get(key)
    if value is not None:
      return getattr(value, value.WhichOneof('value'))
  return None
