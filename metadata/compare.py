"""What differs between two pipeline runs (`pipeline.py compare`), read from ML Metadata and the
artifacts the runs used, most telling first: the data (source, span / version, its revision's
`data_*` properties, example counts per split and class), the statistics (the features whose
distributions moved most), the schema, the code (fingerprinted files that changed), the options
and hyperparameters, and the metrics (accuracy, per class recall, per slice, the blessing).

Two layers, so that the difference logic is tested without TFX runs:
- `run_facts(store, run)`: one run's facts as a plain JSON-able dict (reads the store and the
  artifacts; a cached execution links the earlier artifacts, so every run has all of them);
- `compare(facts_a, facts_b, moved)`: the differences and the metrics table, pure.
`between(metadata_path, a, b, distances)` joins them. `distances` measures how far each feature's
distribution moved between two StatisticsGen outputs (cli/compare.py passes the drift check's
comparators: this layer imports no component or monitoring code).

A distance below MOVED_AT_LEAST (0.01) is noise, not listed, unless it is above its drift
threshold: TFDV's approximate value counts differ a little between two runs on the same data
(an `image_id` L-infinity of 0.0007 once ranked first). A text option of several lines (a model
file's source) is shown as its line count and digest; no table cell holds a line break.
"""

import datetime
import hashlib
import json
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from contracts import fingerprint, image_record
from contracts.errors import UserError
from metadata import artifact_reader, html, summary
from metadata.summary import property_value

ASPECTS = ('data', 'statistics', 'schema', 'code', 'options', 'metrics')  # most telling first
REVISION_PREFIX = 'data_'  # the data revision's properties (data_revisions/revision.py)
MAX_FEATURES = 10  # statistics: the features that moved most
MOVED_AT_LEAST = 0.01  # a distance below it is noise (module docstring)
# Options that are data facts (the data aspect names them) or other keys' duplicates.
_NOT_OPTIONS = {'input_base', 'input_fingerprint', 'code_fingerprint', 'span', 'version'}
_DATA_FIRST = ('source', 'producer', 'span', 'version')  # then data_* (revision), counts
_REVISION_FIRST = ('data_rev', 'data_git_commit', 'data_git_dirty', 'data_dvc_md5', 'data_dvc_file')
# distances(statistics_uri_a, statistics_uri_b, schema_uri) → {feature: {'measure', 'value',
# 'threshold', 'flagged'}} (the train split's)
Distances = Callable[[str, str, str], Dict[str, dict]]


# ── one run's facts ───────────────────────────────────────────────────────────────────────


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
    leaves = summary.property_leaves(name, property_value(execution, name), keep_path=True)
    if name == 'custom_config':  # the Trainer's options, by their own names
      leaves = {k.split('.', 1)[-1]: v for k, v in leaves.items()}
    options.update(leaves)
  for derived, source in summary.DERIVED_PROPERTIES.items():  # train_args: train_steps' default
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


def run_facts(store, run, metadata_path: str = '') -> dict:
  """One pipeline run (its run context) as the plain facts `compare` compares."""
  nodes = summary.run_nodes(store, run)
  built = summary.build(nodes, 0.0)
  training_nodes = {k: n for k, n in nodes.items() if k != summary.INFER_EXAMPLE_GEN}
  producer = next((n for n in training_nodes.values() if 'examples' in n.outputs), None)
  examples = producer.outputs['examples'] if producer else None
  data = {}
  if examples is not None:
    data = {
      'producer': producer.node_id,
      'source': property_value(producer.execution, 'input_base') if producer.execution else None,
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
    code[node.node_id] = summary.execution_facts(store, node.execution)['code']
    options[node.node_id] = execution_options(node.execution)
  label = (options.get('Trainer') or {}).get('label_key') or ''
  statistics = artifact_reader.split_statistics(training_nodes)  # split → its statistics
  key, per_split, exact = artifact_reader.label_counts(
    statistics, [image_record.LABEL_NAME_KEY, label, image_record.LABEL_KEY]
  )
  train = statistics.get('train')
  statistics_artifact, schema, evaluation = (
    artifact_reader.output(training_nodes, name) for name in ('statistics', 'schema', 'evaluation')
  )
  split_counts = json.loads(
    (property_value(examples, 'split_counts') if examples is not None else None) or '{}'
  )
  hyperparameters = dict((built.get('training') or {}).get('hyperparameters') or {})
  if (built.get('training') or {}).get('model'):
    hyperparameters['model'] = built['training']['model']
  return {
    'run_id': run.name,
    'created': _creation_time(run),
    'metadata': metadata_path,
    'components': {
      'executed': len(built.get('executed', [])),
      'cached': len(built.get('cached', [])),
    },
    'data': data,
    'examples_per_split': built.get('examples_per_split') or split_counts,
    'label': key if exact else None,
    'examples_per_class': {s: dict(pairs) for s, pairs in per_split.items()} if exact else {},
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
    'hyperparameters': hyperparameters,
    'metrics': {
      'accuracy': built.get('eval_accuracy'),
      'per_class': built.get('class_recall') or {},
      'per_slice': artifact_reader.slice_metrics(evaluation) if evaluation is not None else {},
      'blessed': built.get('blessed'),
      'blessing': built.get('blessing'),
      'pushed_to': built.get('pushed_to'),
    },
  }


# ── which runs ────────────────────────────────────────────────────────────────────────────


def runs_of(store, pipeline_name: str) -> list:
  """The pipeline's run contexts, oldest first (those of any pipeline when it has none)."""
  runs = summary.pipeline_runs(store, pipeline_name)
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


# ── the differences ───────────────────────────────────────────────────────────────────────


def _as_number(value) -> Optional[float]:
  """value as a number (a number's text too); None for anything else (bools included)."""
  if isinstance(value, bool) or value is None:
    return None
  if isinstance(value, (int, float)):
    return value
  try:
    return float(value)
  except (TypeError, ValueError):
    return None


def _delta(a, b) -> Optional[float]:
  x, y = _as_number(a), _as_number(b)
  if x is None or y is None:
    return None
  delta = y - x
  return round(delta, 10) if isinstance(delta, float) else delta


def _difference(aspect: str, name: str, a, b, numeric: bool = True, **more) -> dict:
  """One difference; numeric: B − A of two numbers (or numbers' text) is its delta."""
  return dict(aspect=aspect, name=name, a=a, b=b, delta=_delta(a, b) if numeric else None, **more)


def _by_change(entries: List[dict]) -> List[dict]:
  """Largest |B − A| first (no number: last), then by name."""
  return sorted(entries, key=lambda d: (d['delta'] is None, -abs(d['delta'] or 0), str(d['name'])))


def _data(a: dict, b: dict) -> List[dict]:
  da, db = a.get('data') or {}, b.get('data') or {}
  found = []
  revision = sorted(
    {k for k in set(da) | set(db) if k.startswith(REVISION_PREFIX)},
    key=lambda k: (_REVISION_FIRST.index(k) if k in _REVISION_FIRST else len(_REVISION_FIRST), k),
  )
  for key in list(_DATA_FIRST) + revision + ['input_fingerprint']:
    if da.get(key) != db.get(key):
      name = 'input fingerprint' if key == 'input_fingerprint' else key
      found.append(
        _difference('data', name, da.get(key), db.get(key), numeric=key in ('span', 'version'))
      )
  splits_a, splits_b = a.get('examples_per_split') or {}, b.get('examples_per_split') or {}
  for split in sorted(set(splits_a) | set(splits_b), key=lambda s: (s != 'train', s)):
    if splits_a.get(split) != splits_b.get(split):
      found.append(
        _difference('data', f'{split} examples', splits_a.get(split), splits_b.get(split))
      )
  per_class = []
  classes_a, classes_b = a.get('examples_per_class') or {}, b.get('examples_per_class') or {}
  for split in sorted(set(classes_a) | set(classes_b), key=lambda s: (s != 'train', s)):
    ca, cb = classes_a.get(split, {}), classes_b.get(split, {})
    for name in sorted(set(ca) | set(cb), key=str):
      if ca.get(name, 0) != cb.get(name, 0):
        per_class.append(
          _difference('data', f'{split} examples of class {name}', ca.get(name, 0), cb.get(name, 0))
        )
  return found + _by_change(per_class)


def _statistics(a: dict, b: dict, moved: Optional[Dict[str, dict]]) -> List[dict]:
  features_a = ((a.get('statistics') or {}).get('features')) or {}
  features_b = ((b.get('statistics') or {}).get('features')) or {}
  found = [
    _difference(
      'statistics',
      name,
      features_a.get(name),
      features_b.get(name),
      numeric=False,
      measure=m['measure'],
      threshold=m.get('threshold'),
      flagged=bool(m.get('flagged')),
    )
    for name, m in (moved or {}).items()
    if m['value'] >= MOVED_AT_LEAST or m.get('flagged')
  ]
  for entry in found:  # B − A of a distribution: how far it moved
    entry['delta'] = moved[entry['name']]['value']
  return sorted(found, key=lambda d: (-d['delta'], d['name']))[:MAX_FEATURES]


def _schema(a: dict, b: dict) -> List[dict]:
  if not a.get('schema') or not b.get('schema') or a['schema']['id'] == b['schema']['id']:
    return []
  fa, fb = a['schema']['features'], b['schema']['features']
  found = []
  for name in sorted(set(fa) | set(fb)):
    if fa.get(name) == fb.get(name):
      continue
    if name not in fb:
      change = 'removed'
    elif name not in fa:
      change = 'added'
    elif fa[name].split(',')[0] != fb[name].split(',')[0]:
      change = 'type changed'
    else:
      change = 'domain changed'
    found.append(
      _difference(
        'schema', f'feature {name}', fa.get(name), fb.get(name), numeric=False, change=change
      )
    )
  order = ('removed', 'added', 'type changed', 'domain changed')
  return sorted(found, key=lambda d: order.index(d['change']))


def _merged_code(facts: dict) -> Tuple[Dict[str, str], Dict[str, List[str]]]:
  """({file: digest}, {file: [components whose code includes it]})."""
  digests, users = {}, {}
  for node, files in sorted((facts.get('code') or {}).items()):
    for path, digest in fingerprint.digests(files).items():
      digests[path] = digest
      users.setdefault(path, []).append(node)
  return digests, users


def _code(a: dict, b: dict) -> List[dict]:
  (da, ua), (db, ub) = _merged_code(a), _merged_code(b)
  changed = [p for p in set(da) | set(db) if da.get(p) != db.get(p)]
  changed.sort(key=lambda p: (p != fingerprint.ENVIRONMENT_FILE, p))  # the environment first
  return [
    _difference(
      'code',
      path,
      da.get(path),
      db.get(path),
      numeric=False,
      where=sorted(set(ua.get(path, [])) | set(ub.get(path, []))),
    )
    for path in changed
  ]


def _options(a: dict, b: dict) -> List[dict]:
  oa, ob = a.get('options') or {}, b.get('options') or {}
  by_change: Dict[tuple, dict] = {}  # one entry per option and change, with every component
  for node in sorted(set(oa) | set(ob)):
    na, nb = oa.get(node, {}), ob.get(node, {})
    for name in sorted(set(na) | set(nb)):
      if na.get(name) == nb.get(name):
        continue
      key = (name, json.dumps(na.get(name), default=str), json.dumps(nb.get(name), default=str))
      entry = by_change.setdefault(key, _difference('options', name, na.get(name), nb.get(name)))
      entry.setdefault('where', []).append(node)
  found = sorted(by_change.values(), key=lambda d: (d['name'], d['where']))
  ha, hb = a.get('hyperparameters') or {}, b.get('hyperparameters') or {}
  said = {(d['name'], _as_number(d['a']), _as_number(d['b'])) for d in found}
  for name in sorted(set(ha) | set(hb)):
    if (
      ha.get(name) != hb.get(name)
      and (name, _as_number(ha.get(name)), _as_number(hb.get(name))) not in said
    ):
      found.append(
        _difference('options', name, ha.get(name), hb.get(name), where=['hyperparameters'])
      )
  return found


def metrics_table(a: dict, b: dict) -> dict:
  """{'accuracy': {a, b, delta}, 'per_class': {class: {a, b, delta}}, 'per_slice': {slice: {a, b,
  delta}}, 'blessed': {a, b}} of the two runs' candidate models on their eval splits."""
  ma, mb = a.get('metrics') or {}, b.get('metrics') or {}
  pair = lambda x, y: {'a': x, 'b': y, 'delta': _delta(x, y)}
  ca, cb = ma.get('per_class') or {}, mb.get('per_class') or {}
  classes = list(ca) + [c for c in cb if c not in ca]
  sa, sb = ma.get('per_slice') or {}, mb.get('per_slice') or {}
  return {
    'accuracy': pair(ma.get('accuracy'), mb.get('accuracy')),
    'per_class': {c: pair(ca.get(c), cb.get(c)) for c in classes},
    'per_slice': {
      s: pair((sa.get(s) or {}).get('accuracy'), (sb.get(s) or {}).get('accuracy'))
      for s in sorted(set(sa) | set(sb))
    },
    'blessed': {'a': ma.get('blessed'), 'b': mb.get('blessed')},
  }


def _metrics(table: dict) -> List[dict]:
  found = []
  accuracy = table['accuracy']
  if accuracy['a'] != accuracy['b']:
    found.append(_difference('metrics', 'accuracy', accuracy['a'], accuracy['b']))
  blessed = table['blessed']
  if blessed['a'] != blessed['b']:
    found.append(_difference('metrics', 'blessed', blessed['a'], blessed['b']))
  found += _by_change(
    [
      _difference('metrics', f'recall of class {name}', v['a'], v['b'])
      for name, v in table['per_class'].items()
      if v['a'] != v['b']
    ]
  )
  found += _by_change(
    [
      _difference('metrics', f'accuracy where {name}', v['a'], v['b'])
      for name, v in table['per_slice'].items()
      if v['a'] != v['b']
    ]
  )
  return found


def differences(a: dict, b: dict, moved: Optional[Dict[str, dict]] = None) -> List[dict]:
  """Every difference between two runs' facts, most telling first: by aspect (ASPECTS), within
  one the largest change first. moved: `Distances`' answer for the two runs' statistics."""
  return (
    _data(a, b)
    + _statistics(a, b, moved)
    + _schema(a, b)
    + _code(a, b)
    + _options(a, b)
    + _metrics(metrics_table(a, b))
  )


def _header(facts: dict) -> dict:
  metrics = facts.get('metrics') or {}
  return {
    'run_id': facts['run_id'],
    'created': facts.get('created'),
    'metadata': facts.get('metadata'),
    'components': facts.get('components'),
    'examples_per_split': facts.get('examples_per_split'),
    'accuracy': metrics.get('accuracy'),
    'blessed': metrics.get('blessed'),
    'blessing': metrics.get('blessing'),
    'pushed_to': metrics.get('pushed_to'),
  }


def compare(a: dict, b: dict, moved: Optional[Dict[str, dict]] = None) -> dict:
  """The JSON-able answer: {'a': run A's header, 'b': run B's, 'differences': [...], 'metrics':
  metrics_table(a, b), 'statistics_compared': bool}."""
  return {
    'a': _header(a),
    'b': _header(b),
    'differences': differences(a, b, moved),
    'metrics': metrics_table(a, b),
    'statistics_compared': moved is not None,
  }


def moved_features(a: dict, b: dict, distances: Optional[Distances]) -> Optional[Dict[str, dict]]:
  """distances over the two runs' train statistics ({} when they are one artifact: nothing
  moved); None when not measured (no comparator, or a run without statistics)."""
  sa, sb = a.get('statistics'), b.get('statistics')
  if not sa or not sb:
    return None
  same = sa['id'] == sb['id'] and a.get('metadata') == b.get('metadata')
  if same:
    return {}
  if distances is None:
    return None
  schema = b.get('schema') or a.get('schema')
  return distances(sa['uri'], sb['uri'], schema['uri']) if schema else None


def between(
  metadata_path: str,
  a: str,
  b: str,
  distances: Optional[Distances] = None,
  metadata_path_b: str = '',
  pipeline_name: str = '',
) -> dict:
  """compare() of run `a` of metadata_path and run `b` (of metadata_path_b when given: runs of
  two output folders). UserError when either run is not there."""
  facts = []
  for path, run_id in ((metadata_path, a), (metadata_path_b or metadata_path, b)):
    if not os.path.isfile(path):
      raise UserError(f'{path}: no such ML Metadata store (run the pipeline there first)')
    store = summary.open_store(path)
    facts.append(run_facts(store, find_run(store, run_id, pipeline_name, path), path))
  return compare(facts[0], facts[1], moved_features(facts[0], facts[1], distances))


# ── for people ────────────────────────────────────────────────────────────────────────────

_WIDTH = 34  # characters of a value in the terminal table


def shown(value, width: int = _WIDTH) -> str:
  """A value in a table cell: numbers to 4 significant digits, yes / no, '–' for none, one line."""
  if value is None:
    return '–'
  if isinstance(value, bool):
    return 'yes' if value else 'no'
  if isinstance(value, float):
    return f'{value:.4g}'
  if isinstance(value, int):
    return f'{value:,}'
  text = ' '.join(str(value).split())
  return text if len(text) <= width else text[: width - 1] + '…'


def signed(delta) -> str:
  """'+0.05', '-4'; '' for none, '0' for none at all."""
  if delta is None:
    return ''
  if delta == 0:
    return '0'
  return f'{delta:+.4g}' if isinstance(delta, float) else f'{delta:+,}'


def _columns(rows: Sequence[Sequence[str]]) -> List[str]:
  widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
  return ['  '.join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]


def _described(entry: dict) -> str:
  """A difference's name and what qualifies it: where, the kind of change or the measure."""
  extra = ''
  if entry.get('where'):
    extra = f' ({", ".join(entry["where"])})'
  elif entry.get('change'):
    extra = f' ({entry["change"]})'
  elif entry.get('measure'):
    measure = 'L-inf' if entry['measure'] == 'infinity_norm' else 'JSD'
    extra = f' ({measure}' + (', above the drift threshold)' if entry.get('flagged') else ')')
  return entry['name'] + extra


def render(result: dict) -> List[str]:
  """The terminal table: the two runs, every difference, the metrics of both."""
  a, b = result['a'], result['b']
  lines = [
    f'A: run {a["run_id"]}' + (f' ({a["metadata"]})' if a['metadata'] != b['metadata'] else ''),
    f'B: run {b["run_id"]}' + (f' ({b["metadata"]})' if a['metadata'] != b['metadata'] else ''),
  ]
  found = result['differences']
  if not found:
    lines.append('no differences: the same data, statistics, schema, code, options and metrics')
  else:
    lines.append(f'{len(found)} difference(s), most telling first:')
    rows = [['aspect', 'what', 'A', 'B', 'B − A']]
    for entry in found:
      delta = entry['delta']
      rows.append(
        [
          entry['aspect'],
          shown(_described(entry), 60),
          shown(entry['a']),
          shown(entry['b']),
          f'{delta:.4f}' if entry['aspect'] == 'statistics' else signed(delta),
        ]
      )
    lines += ['  ' + line for line in _columns(rows)]
  if not result.get('statistics_compared'):
    lines.append('statistics: not compared (a run has no statistics, or no comparator was given)')
  metrics = result['metrics']
  rows = [['metric', 'A', 'B', 'B − A']]
  accuracy = metrics['accuracy']
  rows.append(['accuracy', shown(accuracy['a']), shown(accuracy['b']), signed(accuracy['delta'])])
  rows.append(['blessed', shown(metrics['blessed']['a']), shown(metrics['blessed']['b']), ''])
  for name, v in metrics['per_class'].items():
    rows.append(
      [f'recall of class {shown(name)}', shown(v['a']), shown(v['b']), signed(v['delta'])]
    )
  for name, v in metrics['per_slice'].items():
    rows.append([f'accuracy where {shown(name)}', shown(v['a']), shown(v['b']), signed(v['delta'])])
  lines.append('metrics (eval split):')
  lines += ['  ' + line for line in _columns(rows)]
  for key, entry in (('A', a), ('B', b)):
    if entry.get('blessing'):
      lines.append(f'blessing {key}: {entry["blessing"]}')
  return lines


def _recall_chart(metrics: dict):
  """Recall per class of A and B side by side (pictures.class_recall, relabelled)."""
  from metadata import pictures

  names = list(metrics['per_class'])
  if not names:
    return None
  recall_a = [metrics['per_class'][n]['a'] for n in names]
  recall_b = [metrics['per_class'][n]['b'] for n in names]
  figure = pictures.class_recall(names, recall_a, recall_b)
  figure.set_label('recall per class, run A and run B')
  for text, label in zip(figure.axes[0].get_legend().get_texts(), ('run A', 'run B')):
    text.set_text(label)
  return figure


def _moved_chart(entries: List[dict]):
  """Horizontal bars: how far each feature's train distribution moved (the top MAX_FEATURES)."""
  import numpy as np

  from metadata import pictures

  if not entries:
    return None
  figure, [[axes]] = pictures.new_figure(
    'features whose train distribution moved most', (7, 0.9 + 0.3 * len(entries))
  )
  positions = np.arange(len(entries))
  axes.barh(positions, [e['delta'] for e in entries], 0.6)
  thresholds = [e.get('threshold') for e in entries]
  if any(t is not None for t in thresholds):
    axes.scatter(
      [t or 0 for t in thresholds],
      positions,
      marker='|',
      s=200,
      color='#b00020',
      label='drift threshold',
    )
    axes.legend(fontsize=8, loc='lower left', bbox_to_anchor=(1.01, 0))
  axes.set_yticks(positions, [pictures.short(_described(e)) for e in entries])
  axes.tick_params(axis='y', labelsize=8)
  axes.invert_yaxis()
  axes.set_xlabel('distance of the train split A → B (L-infinity or Jensen-Shannon)')
  return figure


def html_page(result: dict) -> str:
  """Its own self-contained page: the runs, the differences, side-by-side charts."""
  a, b = result['a'], result['b']
  title = f'run {b["run_id"]} against run {a["run_id"]}'
  runs = html.table(
    ['', 'A', 'B'],
    [
      ['run id', a['run_id'], b['run_id']],
      ['created', a['created'], b['created']],
      ['store', a['metadata'], b['metadata']],
      ['accuracy', a['accuracy'], b['accuracy']],
      ['blessed', shown(a['blessed']), shown(b['blessed'])],
      ['blessing', a.get('blessing') or '', b.get('blessing') or ''],
    ],
  )
  found = result['differences']
  table = (
    html.table(
      ['aspect', 'what', 'A', 'B', 'B − A'],
      [
        [d['aspect'], _described(d), shown(d['a'], 48), shown(d['b'], 48), d['delta']]
        for d in found
      ],
    )
    if found
    else html.absent('No differences: the same data, statistics, schema, code, options, metrics.')
  )
  metrics = result['metrics']
  rows = [
    ['accuracy', metrics['accuracy']['a'], metrics['accuracy']['b'], metrics['accuracy']['delta']],
    ['blessed', shown(metrics['blessed']['a']), shown(metrics['blessed']['b']), ''],
  ]
  rows += [
    [f'recall of class {n}', v['a'], v['b'], v['delta']] for n, v in metrics['per_class'].items()
  ]
  rows += [
    [f'accuracy where {n}', v['a'], v['b'], v['delta']] for n, v in metrics['per_slice'].items()
  ]
  charts = [
    _recall_chart(metrics),
    _moved_chart([d for d in found if d['aspect'] == 'statistics']),
  ]
  body = (
    f'<h2>Runs</h2>{runs}<h2>Differences, most telling first</h2>{table}'
    f'<h2>Metrics (eval split)</h2>{html.table(["metric", "A", "B", "B − A"], rows)}'
    + ''.join(
      f'<h3>{html.escape(figure.get_label())}</h3>' + html.chart(figure)
      for figure in charts
      if figure is not None
    )
  )
  return html.page(title, body)
