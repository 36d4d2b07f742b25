"""Every data version and every model in an output folder's ML Metadata,
and which data trained, evaluated and was pushed with which model.

Read-only; from the events that link executions to their input and output artifacts. A cached
execution links the same artifacts again, so each model appears once, with its first producer.
"""

import collections
import datetime
import json
import os
from typing import List, Optional

from ml_metadata.proto import metadata_store_pb2

from contracts import artifacts
from contracts import evaluation as evaluation_names
from contracts.errors import UserError
from metadata import artifact_reader, rollback_record, run_reader, transform_facts
from metadata.run_reader import property_value

_LIVE = metadata_store_pb2.Artifact.LIVE
TRANSFORM_GRAPH = transform_facts.TRANSFORM_GRAPH
REVISION_PREFIX = 'data_'  # the data revision's properties (data_revisions/revision.py)
_INPUT = metadata_store_pb2.Event.INPUT
_OUTPUTS = (metadata_store_pb2.Event.OUTPUT, metadata_store_pb2.Event.DECLARED_OUTPUT)


def _when(artifact) -> str:
  return datetime.datetime.fromtimestamp(artifact.create_time_since_epoch / 1000).isoformat(
    sep=' ', timespec='seconds'
  )


class _Graph:
  """Artifacts, executions and which execution used or produced which artifact, by key."""

  def __init__(self, metadata_path: str):
    self.store = run_reader.open_store(metadata_path)
    types = {t.id: t.name for t in self.store.get_artifact_types()}
    self.artifacts = {a.id: a for a in self.store.get_artifacts() if a.state == _LIVE}
    self.kind = {a.id: types[a.type_id] for a in self.artifacts.values()}
    self.executions = {e.id: e for e in self.store.get_executions()}
    self.inputs = collections.defaultdict(dict)  # execution id → key → artifact id
    self.outputs = collections.defaultdict(dict)
    self.consumers = collections.defaultdict(list)  # artifact id → execution ids
    self.producer = {}
    for event in sorted(
      self.store.get_events_by_artifact_ids(list(self.artifacts)), key=lambda e: e.execution_id
    ):
      # One event per artifact: one used under two keys (the serving model as 'model' and
      # 'baseline_model') has both in its path, each followed by its index.
      keys = [step.key for step in event.path.steps if step.HasField('key')] or ['']
      if event.type == _INPUT:
        for key in keys:
          self.inputs[event.execution_id][key] = event.artifact_id
        self.consumers[event.artifact_id].append(event.execution_id)
      elif event.type in _OUTPUTS:
        for key in keys:
          self.outputs[event.execution_id][key] = event.artifact_id
        self.producer.setdefault(event.artifact_id, event.execution_id)

  def of_kind(self, kind: str) -> List[metadata_store_pb2.Artifact]:
    return sorted(
      (a for i, a in self.artifacts.items() if self.kind[i] == kind), key=lambda a: a.id
    )

  def consumer_outputs(self, artifact_id: int, key: str) -> List[int]:
    return sorted(
      {self.outputs[e][key] for e in self.consumers[artifact_id] if key in self.outputs[e]}
    )

  def consumer_input(self, artifact_id: int, key: str) -> Optional[int]:
    execution = self.producer.get(artifact_id)
    return self.inputs[execution].get(key) if execution is not None else None


def trace(metadata_path: str) -> dict:
  """{'data_versions': [...], 'models': [...]} as plain JSON-able dicts."""
  graph = _Graph(metadata_path)
  versions = []
  for examples in graph.of_kind('Examples'):
    producer = graph.executions.get(graph.producer.get(examples.id))
    if _made_by_transform(graph, examples.id):
      continue  # Transform's output: listed with the model it trained (model['transform'])
    versions.append(
      {
        'examples_id': examples.id,
        'uri': examples.uri,
        'created': _when(examples),
        'producer': run_reader.node_id(graph.store, producer) if producer else None,
        'input_base': property_value(producer, 'input_base') if producer else None,
        'source': run_reader.data_source(producer) if producer else None,
        'span': property_value(examples, 'span'),
        'version': property_value(examples, 'version'),
        'fingerprint': property_value(producer, 'input_fingerprint') if producer else None,
        'split_counts': json.loads(property_value(examples, 'split_counts') or 'null'),
        'revision': {
          name: property_value(examples, name)
          for name in examples.custom_properties
          if name.startswith(REVISION_PREFIX)
        },
      }
    )
  models = []
  rollbacks = rollback_record.rollbacks(graph.store)
  copies = {  # a rollback's Model (metadata/rollback_record.py): named by the model it copies
    m.id: property_value(m, rollback_record.COPY_OF)
    for m in graph.of_kind('Model')
    if property_value(m, rollback_record.COPY_OF) is not None
  }
  for model in graph.of_kind('Model'):
    if model.id in copies:
      continue
    trained_on = graph.consumer_input(model.id, 'examples')
    transform = _transform_of(graph, graph.producer.get(model.id))
    entry = {
      'model_id': model.id,
      'uri': model.uri,
      'created': _when(model),
      # the data version: through a Transform, the examples it transformed
      'trained_on': transform['examples'] if transform else trained_on,
      'transform': transform,
      'module': transform_facts.module_of(graph.executions.get(graph.producer.get(model.id))),
      'input_damage': {
        k: v
        for k, v in (
          (key, property_value(model, key))
          for key in ('input_corrupt_records', 'input_lost_fraction')
        )
        if v is not None
      },
    }
    evaluations = [_evaluation(graph, model.id, e) for e in graph.consumers[model.id]]
    evaluations += [  # as the baseline through a rollback's copy of it
      _evaluation(graph, copy, e)
      for copy, original in copies.items()
      if original == model.id
      for e in graph.consumers[copy]
    ]
    evaluations = [  # a rollback's copy named by the model it copies
      dict(e, against=copies.get(e['against'], e['against'])) for e in evaluations if e is not None
    ]
    entry['evaluations'] = list({json.dumps(e, sort_keys=True): e for e in evaluations}.values())
    pushes = [graph.artifacts[i] for i in graph.consumer_outputs(model.id, 'pushed_model')]
    entry['pushed_to'] = sorted(
      {property_value(p, 'pushed_destination') for p in pushes if property_value(p, 'pushed')}
    )
    models.append(entry)
  return {
    'data_versions': versions,
    'models': models,
    'rollbacks': rollbacks,
    'monitoring': monitoring_runs(metadata_path),
  }


def _made_by_transform(graph: _Graph, examples_id: int) -> bool:
  """Whether Transform made these examples (its execution also output a transform graph)."""
  execution = graph.producer.get(examples_id)
  return execution is not None and TRANSFORM_GRAPH in graph.outputs[execution]


def _transform_of(graph: _Graph, trainer: Optional[int]) -> Optional[dict]:
  """The Transform behind a Trainer's execution (a module file's run), by the Trainer's
  `transform_graph` input or its examples' producer: {'examples' (the raw examples Transform
  read), 'transformed_examples' (None when the Trainer read raw examples), 'transform_graph'
  (ids), 'transform_graph_uri', 'module'}; None for a Trainer without one."""
  inputs = graph.inputs[trainer] if trainer is not None else {}
  examples_id = inputs.get('examples')
  graph_id = inputs.get(TRANSFORM_GRAPH)
  if graph_id is None and examples_id is not None and _made_by_transform(graph, examples_id):
    graph_id = graph.outputs[graph.producer[examples_id]][TRANSFORM_GRAPH]
  execution = graph.producer.get(graph_id) if graph_id is not None else None
  if execution is None:
    return None
  transformed = examples_id if graph.producer.get(examples_id) == execution else None
  return {
    'examples': graph.inputs[execution].get('examples') if transformed else examples_id,
    'transformed_examples': transformed,
    'transform_graph': graph_id,
    'transform_graph_uri': graph.artifacts[graph_id].uri if graph_id in graph.artifacts else '',
    'module': transform_facts.module_of(graph.executions.get(execution)),
  }


def _evaluation(graph: _Graph, model_id: int, execution: int) -> Optional[dict]:
  """How the Evaluator's `execution` used model `model_id`: {'role': 'candidate' or 'baseline',
  'evaluated_on', 'accuracy' (the model's own, None where not computed), 'mean_absolute_error' (a
  regression model's own MAE: only there), 'blessed' (the
  candidate's blessing; None for the baseline), 'against' (the other model's id, or None),
  'against_blessed' (the candidate's blessing when this is the baseline, else None)}; None when
  `execution` is not an evaluation of this model."""
  outputs, inputs = graph.outputs[execution], graph.inputs[execution]
  if 'blessing' not in outputs or 'model' in outputs:  # a rollback blesses a copy, evaluates not
    return None
  blessing = graph.artifacts[outputs['blessing']]
  evaluation = graph.artifacts.get(outputs.get('evaluation'))
  accuracy = artifact_reader.accuracies(evaluation) if evaluation else {}
  # A regression model's MAE instead (read only without an accuracy: a classifier has one).
  figures = artifact_reader.regression_figures(evaluation) if evaluation and not accuracy else {}
  candidate, baseline = inputs.get('model'), inputs.get('baseline_model')
  alone = (  # the serving model evaluated again, or one the Evaluator could not compare
    evaluation_names.CANDIDATE_IS_SERVING,
    evaluation_names.NOT_COMPARED,
    evaluation_names.SERVING_CLASSES,
    evaluation_names.SERVING_TASK,
  )
  if candidate == baseline or any(property_value(blessing, key) for key in alone):
    baseline = None  # evaluated alone: the serving model given to it was not compared
  blessed = bool(property_value(blessing, 'blessed'))
  own = evaluation_names.CANDIDATE if candidate == model_id else evaluation_names.BASELINE
  if own == evaluation_names.BASELINE and baseline != model_id:
    return None
  return {
    'role': own,
    'evaluated_on': inputs.get('examples'),
    'accuracy': accuracy.get(own),
    'blessed': blessed if own == evaluation_names.CANDIDATE else None,
    'against': baseline if own == evaluation_names.CANDIDATE else candidate,
    'against_blessed': blessed if own == evaluation_names.BASELINE else None,
    **{key: figures[own][key] for key in [evaluation_names.MAE_KEY] if key in figures.get(own, {})},
  }


def which_data(report: dict, model_path: str) -> dict:
  """The model pushed to (or stored at) `model_path` and the data version that trained it."""
  path = os.path.abspath(model_path).rstrip('/')
  for model in report['models']:
    if path in [p.rstrip('/') for p in model['pushed_to']] or path.startswith(model['uri']):
      data = next(
        (v for v in report['data_versions'] if v['examples_id'] == model['trained_on']), None
      )
      return {'model': model, 'trained_on': data}
  raise UserError(
    f'--model {model_path}: no model in this output folder was pushed to or stored at that path'
  )


MONITOR_EXECUTION = 'pipeline.py monitor'  # the execution type `pipeline.py monitor` records


def serving_model(metadata_path: str) -> dict:
  """The newest pushed model and what trained it: {'model_id', 'model_uri', 'pushed_to',
  'examples_uri', 'schema_uri', 'statistics_uri', 'label', 'data_kind', 'eval_figures' (its own
  figures where it was blessed), 'label_fences' (a heavy tail's), 'model_task' (a module file's
  model: what its blessing judged it as predicting; else '')} (plain values). UserError when no
  model was pushed, or its training inputs are not in this store."""
  graph = _Graph(metadata_path)
  pushes = [
    p
    for p in graph.of_kind('PushedModel')
    if property_value(p, 'pushed') and graph.consumer_input(p.id, 'model') is not None
  ]
  if not pushes:
    raise UserError(f'{metadata_path}: no model was pushed (no serving model to monitor)')
  push = pushes[-1]
  model_id = graph.consumer_input(push.id, 'model')
  trainer = graph.producer.get(model_id)
  inputs = graph.inputs[trainer] if trainer is not None else {}
  examples_id, schema_id = inputs.get('examples'), inputs.get('schema')
  transform = _transform_of(graph, trainer)
  if transform:  # a module file's model: its raw training data, before Transform
    examples_id = transform['examples']
  statistics = (
    [
      i
      for i in graph.consumer_outputs(examples_id, 'statistics')
      if graph.kind.get(i) == 'ExampleStatistics'
    ]
    if examples_id is not None
    else []
  )
  if examples_id is None or schema_id is None or not statistics:
    raise UserError(
      f'model #{model_id}: its training data, schema or statistics are not in ML Metadata'
    )
  options = json.loads(property_value(graph.executions[trainer], 'custom_config') or '{}') or {}
  return {
    'eval_figures': _blessed_figures(graph, push.id),
    'model_id': model_id,
    'model_uri': graph.artifacts[model_id].uri,
    'pushed_to': property_value(push, 'pushed_destination'),
    'examples_uri': graph.artifacts[examples_id].uri,
    'schema_uri': graph.artifacts[schema_id].uri,
    'statistics_uri': graph.artifacts[statistics[0]].uri,
    'label': options.get('label_key') or '',
    'data_kind': options.get('data_kind') or '',
    'label_fences': _label_fences(graph, trainer),
    'model_task': _model_task(graph, push.id),
  }


def _label_fences(graph: _Graph, trainer: int) -> Optional[list]:
  """[low, high]: a heavy-tailed regression label's fences (training.json's label_tail, a module
  file's label_figures.json's, which the Evaluator judged the model within); None without a
  heavy tail."""
  from tfx.dsl.io import fileio

  model_run = graph.artifacts.get(graph.outputs[trainer].get('model_run'))
  names = (artifacts.TRAINING_FILE, artifacts.LABEL_FIGURES_FILE)  # a module file's: the second
  paths = [os.path.join(model_run.uri, name) for name in names] if model_run else []
  path = next((path for path in paths if fileio.exists(path)), '')
  if not path:
    return None
  with fileio.open(path) as f:
    tail = json.load(f).get('label_tail') or {}
  return [tail['low'], tail['high']] if tail else None


def _blessing(graph: _Graph, push_id: int) -> Optional[int]:
  """The id of the ModelBlessing the push was made on (None: not recorded)."""
  pusher = graph.producer.get(push_id)
  return graph.inputs[pusher].get('model_blessing') if pusher is not None else None


def _model_task(graph: _Graph, push_id: int) -> str:
  """What the Evaluator judged a module file's model as predicting (its blessing's MODEL_TASK:
  'classification' or 'regression'); '' for the project's models (their task.txt says)."""
  blessing = graph.artifacts.get(_blessing(graph, push_id))
  return (property_value(blessing, evaluation_names.MODEL_TASK) or '') if blessing else ''


def _blessed_figures(graph: _Graph, push_id: int) -> dict:
  """The pushed model's own figures on the eval split of the evaluation that blessed it
  ({accuracy} or a regression model's figures); {} when not recorded."""
  blessing = _blessing(graph, push_id)
  evaluator = graph.producer.get(blessing) if blessing is not None else None
  evaluation = (
    graph.artifacts.get(graph.outputs[evaluator].get('evaluation')) if evaluator else None
  )
  if evaluation is None:
    return {}
  accuracy = artifact_reader.accuracies(evaluation).get(evaluation_names.CANDIDATE)
  if accuracy is not None:
    return {evaluation_names.ACCURACY_KEY: accuracy}
  return artifact_reader.regression_figures(evaluation).get(evaluation_names.CANDIDATE, {})


def monitoring_runs(metadata_path: str) -> List[dict]:
  """Every `pipeline.py monitor` execution, oldest first: {'execution_id', 'model_id',
  'created', 'serving_data', 'flagged', 'statistics_uri', 'summary'}."""
  graph = _Graph(metadata_path)
  types = {t.id: t.name for t in graph.store.get_execution_types()}
  runs = []
  for execution in sorted(graph.executions.values(), key=lambda e: e.id):
    if types.get(execution.type_id) != MONITOR_EXECUTION:
      continue
    outputs = graph.outputs[execution.id]
    statistics = graph.artifacts.get(outputs.get('statistics'))
    runs.append(
      {
        'execution_id': execution.id,
        'model_id': graph.inputs[execution.id].get('model'),
        'created': _when(execution),
        'serving_data': property_value(execution, 'serving_data'),
        'flagged': json.loads(property_value(execution, 'flagged') or '[]'),
        'statistics_uri': statistics.uri if statistics else None,
        'summary': property_value(execution, 'summary'),
      }
    )
  return runs
