"""One pipeline run's facts for `pipeline.py compare` (metadata/compare.py), as a plain JSON-able
dict read from ML Metadata and the artifacts the run used: the data (source, span / version, the
data revision's `data_*` properties, example counts per split and class), statistics and schema
locations, the fingerprinted code, the options and hyperparameters, and the metrics. A cached
execution links the earlier artifacts, so every run has all of them. Also: which runs a pipeline
has, and a run found by its id.
"""

import datetime
import hashlib
import json
import os
from typing import Dict, Optional

from contracts import image_record
from contracts.errors import UserError
from contracts.trainer_options import CLASSIFICATION, REGRESSION
from metadata import artifact_reader, run_reader, summary, transform_facts
from metadata.run_reader import property_value

REVISION_PREFIX = 'data_'  # the data revision's properties (data_revisions/revision.py)
# Options that are data facts (the data aspect names them) or other keys' duplicates.
_NOT_OPTIONS = {'input_base', 'input_fingerprint', 'code_fingerprint', 'span', 'version'}


def _creation_time(item) -> str:
  return datetime.datetime.fromtimestamp(item.create_time_since_epoch / 1000).isoformat(
    sep=' ', timespec='seconds'
  )


def _shortened(value):
  """A text of several lines (a model file's source) as '120 lines, sha256 3f0c9a1e2b7d'."""
  if not isinstance(value, str) or '\n' not in value.strip():
    return value
  digest = hashlib.sha256(value.encode('utf-8')).hexdigest()[:12]
  return f'{len(value.splitlines())} lines, sha256 {digest}'


def execution_options(execution) -> Dict[str, object]:
  """An execution's properties as {name: value}, JSON leaves by their dotted path; the Trainer's
  custom_config leaves by their own name (train_steps). Fingerprints and data facts left out."""
  options = {}
  for name in execution.custom_properties:
    # by their path: input_config.splits and output_config.splits stay apart
    leaves = run_reader.property_leaves(name, property_value(execution, name), keep_path=True)
    if name == 'custom_config':  # the Trainer's options, by their own names
      leaves = {k.split('.', 1)[-1]: v for k, v in leaves.items()}
    if name == transform_facts.MODULE_PATH:  # a module file's code, by its name and hash
      leaves = {transform_facts.MODULE_FILE: transform_facts.module_of(execution)}
    options.update(leaves)
  for derived, source in run_reader.DERIVED_PROPERTIES.items():  # train_args: train_steps' default
    if source in options:
      options = {k: v for k, v in options.items() if k.split('.')[0] != derived}
  return {
    k: _shortened(v)
    for k, v in options.items()
    if k.split('.')[-1] not in _NOT_OPTIONS and k.split('.')[0] not in _NOT_OPTIONS
  }


def _schema_features(schema_uri: str) -> Dict[str, str]:
  """{feature: 'INT, int_domain 0..9'} of a schema artifact's schema.pbtxt."""
  from google.protobuf import text_format
  from tensorflow_metadata.proto.v0 import schema_pb2
  from tfx.dsl.io import fileio

  path = os.path.join(schema_uri, 'schema.pbtxt')
  if not fileio.exists(path):
    return {}
  schema = schema_pb2.Schema()
  with fileio.open(path, 'r') as f:
    text_format.Parse(f.read(), schema)
  domains = {d.name: len(d.value) for d in schema.string_domain}
  found = {}
  for feature in schema.feature:
    said = schema_pb2.FeatureType.Name(feature.type)
    kind = feature.WhichOneof('domain_info')
    if kind == 'int_domain' and feature.int_domain.HasField('max'):
      said += f', int_domain {feature.int_domain.min}..{feature.int_domain.max}'
    elif kind == 'float_domain' and feature.float_domain.HasField('max'):
      said += f', float_domain {feature.float_domain.min:g}..{feature.float_domain.max:g}'
    elif kind == 'string_domain':
      said += f', {len(feature.string_domain.value)} values'
    elif kind == 'domain' and feature.domain in domains:
      said += f', {domains[feature.domain]} values'
    elif kind:
      said += f', {kind}'
    found[feature.name] = said
  for feature in schema.sparse_feature:
    found[feature.name] = 'sparse feature'
  return found


def _feature_summary(feature) -> str:
  """'mean 3.25' (numeric) or "top '3' 11%, 10 values" (categorical) of a feature's statistics."""
  if feature.HasField('num_stats'):
    return f'mean {feature.num_stats.mean:.4g}'
  if feature.HasField('string_stats'):
    s = feature.string_stats
    total = s.common_stats.num_non_missing or 1
    top = s.top_values[0] if s.top_values else None
    head = f"top '{top.value[:24]}' {top.frequency / total:.0%}, " if top else ''
    return f'{head}{s.unique:,} values'
  if feature.HasField('bytes_stats'):
    return (
      f'{feature.bytes_stats.unique:,} distinct, avg {feature.bytes_stats.avg_num_bytes:,.0f} B'
    )
  return ''


def task_of(built) -> Optional[str]:
  """'regression' or 'classification': what the run's model predicts (training.json's task, or
  the figures its evaluation has); None for a run that trained nothing."""
  task = (built.training or {}).get('task')
  if task:
    return task
  if built.regression:
    return REGRESSION
  return CLASSIFICATION if built.training or built.evaluation else None


def run_facts(store, run, metadata_path: str = '') -> dict:
  """One pipeline run (its run context) as the plain facts `compare` compares."""
  nodes = run_reader.run_nodes(store, run)
  built = summary.build(nodes, 0.0)
  training_nodes = {k: n for k, n in nodes.items() if k != summary.INFER_EXAMPLE_GEN}
  producer = next((n for n in training_nodes.values() if 'examples' in n.outputs), None)
  examples = producer.outputs['examples'] if producer else None
  data = {}
  if examples is not None:
    data = {
      'producer': producer.node_id,
      'source': run_reader.data_source(producer.execution) if producer.execution else None,
      'span': property_value(examples, 'span'),
      'version': property_value(examples, 'version'),
      'input_fingerprint': property_value(examples, 'input_fingerprint'),
      'examples_id': examples.id,
      'examples_uri': examples.uri,
    }
    data.update(
      {
        name: property_value(examples, name)
        for name in sorted(examples.custom_properties)
        if name.startswith(REVISION_PREFIX)
      }
    )
  code, options = {}, {}
  for node in nodes.values():
    if node.execution is None:
      continue
    code[node.node_id] = run_reader.execution_facts(store, node.execution)['code']
    options[node.node_id] = execution_options(node.execution)
  trainer_options = options.get('Trainer') or {}
  label = trainer_options.get('label_key') or ''
  statistics = artifact_reader.split_statistics(training_nodes)  # split → its statistics
  key, per_split, exact = artifact_reader.label_counts(
    statistics, [image_record.LABEL_NAME_KEY, label, image_record.LABEL_KEY]
  )
  per_class = {s: dict(pairs) for s, pairs in per_split.items()} if exact else {}
  task = task_of(built)
  if key == label and not exact and task != REGRESSION:  # a numeric label trained as classes:
    # its class counts where they are exact
    threshold = float(trainer_options.get('label_threshold') or 0.0)
    per_class = artifact_reader.two_class_counts(statistics, label, threshold)
  train = statistics.get('train')
  statistics_artifact, schema, evaluation, model = (
    artifact_reader.output(training_nodes, name)
    for name in ('statistics', 'schema', 'evaluation', 'model')
  )
  split_counts = json.loads(
    (property_value(examples, 'split_counts') if examples is not None else None) or '{}'
  )
  hyperparameters = dict((built.training or {}).get('hyperparameters') or {})
  if (built.training or {}).get('model'):
    hyperparameters['model'] = built.training['model']
  return {
    'run_id': run.name,
    'created': _creation_time(run),
    'metadata': metadata_path,
    'components': {
      'executed': len(built.executed),
      'cached': len(built.cached),
    },
    'data': data,
    'examples_per_split': built.examples_per_split or split_counts,
    'label': key if per_class else None,
    'examples_per_class': per_class,
    'statistics': (
      {
        'id': statistics_artifact.id,
        'uri': statistics_artifact.uri,
        'features': {
          name: _feature_summary(f) for name, f in artifact_reader.features_by_name(train).items()
        }
        if train is not None
        else {},
      }
      if statistics_artifact is not None
      else None
    ),
    'schema': (
      {'id': schema.id, 'uri': schema.uri, 'features': _schema_features(schema.uri)}
      if schema is not None
      else None
    ),
    'code': code,
    'options': options,
    'model_id': model.id if model is not None else None,  # one training, or two
    'hyperparameters': hyperparameters,
    'metrics': {
      'task': task,
      'accuracy': built.eval_accuracy,
      'regression': built.regression,  # {} for a classifier
      'per_class': built.class_recall,
      'per_slice': artifact_reader.slice_metrics(evaluation) if evaluation is not None else {},
      'blessed': built.blessed,
      'blessing': built.blessing,
      'pushed_to': built.pushed_to,
    },
  }


# ── which runs ────────────────────────────────────────────────────────────────────────────


def runs_of(store, pipeline_name: str) -> list:
  """The pipeline's run contexts, oldest first (those of any pipeline when it has none)."""
  runs = run_reader.pipeline_runs(store, pipeline_name)
  if not runs:
    runs = sorted(
      store.get_contexts_by_type('pipeline_run'), key=lambda c: (c.create_time_since_epoch, c.id)
    )
  return runs


def find_run(store, run_id: str, pipeline_name: str, metadata_path: str):
  """The run context named run_id; UserError naming the runs there when there is none."""
  run = store.get_context_by_type_and_name('pipeline_run', run_id)
  if run is not None:
    return run
  runs = runs_of(store, pipeline_name)
  known = (
    f'its {len(runs)} run(s): {runs[0].name} to {runs[-1].name}' if runs else 'it holds no run'
  )
  raise UserError(f'no run {run_id!r} in {metadata_path} ({known})')
