"""What differs between two pipeline runs (`pipeline.py compare`), most telling first: the data,
the statistics (the features whose distributions moved most), the schema, the code (fingerprinted
files that changed), the options and hyperparameters a user changed, the options each run's task
chose by itself (aspect 'pipeline': a regression's duplicates rule; contracts/task_defaults.py),
and the metrics (accuracy, per class
recall, per slice, the blessing; a regression model's MAE, RMSE, R²; runs of two tasks are said
to differ, their metrics not compared).

`compare(facts_a, facts_b, moved)` is pure (each run's facts from metadata/run_facts.py), so the
difference logic is tested without TFX runs; `between(metadata_path, a, b, distances)` reads the
two runs and joins them. `distances` measures how far each feature's distribution moved between
two StatisticsGen outputs (cli/compare.py passes the drift check's comparators: this layer
imports no component or monitoring code). reporting/compare_page.py shows the answer.

A distance below MOVED_AT_LEAST (0.01) is noise, not listed, unless it is above its drift
threshold: TFDV's approximate value counts differ a little between two runs on the same data
(an `image_id` L-infinity of 0.0007 once ranked first).
"""

import json
import math
import os
from typing import Callable, Dict, List, Optional, Tuple

from contracts import task_defaults
from contracts.errors import UserError
from contracts.evaluation import COMPARED_FIGURES, FIGURE_NAMES, MAE_KEY, slice_figure
from contracts.trainer_options import REGRESSION
from metadata import run_reader
from metadata.run_facts import REVISION_PREFIX, find_run, run_facts
from utils import fingerprint

# most telling first; 'pipeline': options that differ as each run's task chose them, no one's change
ASPECTS = ('data', 'statistics', 'schema', 'code', 'options', 'pipeline', 'metrics')
MAX_FEATURES = 10  # statistics: the features that moved most
MOVED_AT_LEAST = 0.01  # a distance below it is noise (module docstring)
FIGURE_TOLERANCE = 1e-6  # relative: regression figures closer than this are the same
_DATA_FIRST = ('source', 'producer', 'span', 'version')  # then data_* (revision), counts
_REVISION_FIRST = ('data_rev', 'data_git_commit', 'data_git_dirty', 'data_dvc_md5', 'data_dvc_file')
# distances(statistics_uri_a, statistics_uri_b, schema_uri) → {feature: {'measure', 'value',
# 'threshold', 'flagged'}} (the train split's)
Distances = Callable[[str, str, str], Dict[str, dict]]


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
    ca, cb = classes_a.get(split), classes_b.get(split)  # None: that run did not record them
    for name in sorted(set(ca or {}) | set(cb or {}), key=str):
      count_a, count_b = (None if c is None else c.get(name, 0) for c in (ca, cb))
      if count_a != count_b:
        per_class.append(_difference('data', f'{split} examples of class {name}', count_a, count_b))
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
  """The options that differ ('options'), then those each run's task chose ('pipeline')."""
  oa, ob = a.get('options') or {}, b.get('options') or {}
  tasks = [(facts.get('metrics') or {}).get('task') for facts in (a, b)]
  by_change: Dict[tuple, dict] = {}  # one entry per option and change, with every component
  for node in sorted(set(oa) | set(ob)):
    na, nb = oa.get(node, {}), ob.get(node, {})
    for name in sorted(set(na) | set(nb)):
      if na.get(name) == nb.get(name):
        continue
      key = (name, json.dumps(na.get(name), default=str), json.dumps(nb.get(name), default=str))
      chosen = task_defaults.chosen_by_task(name, na.get(name), nb.get(name), *tasks)
      entry = by_change.setdefault(
        key,
        _difference('pipeline', name, na.get(name), nb.get(name), why=task_defaults.WHY[name])
        if chosen
        else _difference('options', name, na.get(name), nb.get(name)),
      )
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
  return sorted(found, key=lambda d: d['aspect'] == 'pipeline')  # stable: a user's first


def metrics_table(a: dict, b: dict) -> dict:
  """{'task': {a, b}, 'accuracy': {a, b, delta}, 'regression': {figure: {a, b, delta}} (MAE,
  RMSE, R², … that either run has), 'per_class': {class: {a, b, delta}}, 'per_slice': {slice:
  {a, b, delta}} (accuracy, or MAE of two regression runs), 'blessed': {a, b}} of the two runs'
  candidate models on their eval splits."""
  ma, mb = a.get('metrics') or {}, b.get('metrics') or {}
  pair = lambda x, y: {'a': x, 'b': y, 'delta': _delta(x, y)}
  ca, cb = ma.get('per_class') or {}, mb.get('per_class') or {}
  classes = list(ca) + [c for c in cb if c not in ca]
  sa, sb = ma.get('per_slice') or {}, mb.get('per_slice') or {}
  ra, rb = ma.get('regression') or {}, mb.get('regression') or {}
  task = {'a': ma.get('task'), 'b': mb.get('task')}
  by = slice_figure({'task': task})
  return {
    'task': task,
    'accuracy': pair(ma.get('accuracy'), mb.get('accuracy')),
    'regression': {
      name: pair(ra.get(name), rb.get(name))
      for name in COMPARED_FIGURES
      if name in ra or name in rb
    },
    'per_class': {c: pair(ca.get(c), cb.get(c)) for c in classes},
    'per_slice': {
      s: pair((sa.get(s) or {}).get(by), (sb.get(s) or {}).get(by))
      for s in sorted(set(sa) | set(sb))
    },
    'blessed': {'a': ma.get('blessed'), 'b': mb.get('blessed')},
  }


def tasks_differ(table: dict) -> str:
  """'the tasks differ: A is a classifier, B a regression model; their metrics measure different
  things and are shown side by side, not compared' when they do; '' otherwise."""
  a, b = table['task']['a'], table['task']['b']
  if a == b or a is None or b is None:
    return ''
  kind = lambda task: 'a regression model' if task == REGRESSION else 'a classifier'
  return (
    f'the tasks differ: A is {kind(a)}, B {kind(b)}: their metrics measure different things '
    "(accuracy, errors in the label's units) and are not compared"
  )


def _same_figure(a, b) -> bool:
  """Two regression figures equal but for the order TFMA summed the rows in (the same model
  evaluated twice differed by 2e-8 of its MAE)."""
  x, y = _as_number(a), _as_number(b)
  if x is None or y is None:
    return a == b
  return math.isclose(x, y, rel_tol=FIGURE_TOLERANCE, abs_tol=1e-12)


def _metrics(table: dict) -> List[dict]:
  """The metrics that differ; of runs of two tasks, the task and the blessing only."""
  blessed = table['blessed']
  blessing = (
    [_difference('metrics', 'blessed', blessed['a'], blessed['b'])]
    if blessed['a'] != blessed['b']
    else []
  )
  if tasks_differ(table):
    task = table['task']
    return [_difference('metrics', 'task', task['a'], task['b'], numeric=False)] + blessing
  found = []
  accuracy = table['accuracy']
  if accuracy['a'] != accuracy['b']:
    found.append(_difference('metrics', 'accuracy', accuracy['a'], accuracy['b']))
  found += [
    _difference('metrics', FIGURE_NAMES[name], v['a'], v['b'])
    for name, v in table['regression'].items()
    if not _same_figure(v['a'], v['b'])
  ]
  found += blessing
  found += _by_change(
    [
      _difference('metrics', f'recall of class {name}', v['a'], v['b'])
      for name, v in table['per_class'].items()
      if v['a'] != v['b']
    ]
  )
  figure = FIGURE_NAMES.get(slice_figure(table), 'accuracy')
  same = _same_figure if figure != 'accuracy' else (lambda x, y: x == y)
  found += _by_change(
    [
      _difference('metrics', f'{figure} where {name}', v['a'], v['b'])
      for name, v in table['per_slice'].items()
      if not same(v['a'], v['b'])
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


def seed(facts: dict):
  """The run's --seed (the Trainer's option; None: trained unseeded)."""
  return ((facts.get('options') or {}).get('Trainer') or {}).get('seed')


def randomness(a: dict, b: dict, found: List[dict]) -> str:
  """One line when two trainings (two model artifacts) had the same data, statistics, schema,
  code and options, so that only the metrics can differ: what made them differ, or not; ''
  otherwise (or for one model, cached)."""
  if any(d['aspect'] != 'metrics' for d in found) or a.get('model_id') == b.get('model_id'):
    return ''
  trained = seed(a)  # B's too: a seed is an option
  if trained is None and found:
    return (
      'only the metrics differ: the same data, code and options trained twice without --seed, '
      "so training's randomness (initial weights, shuffles) alone made them differ; --seed N "
      'trains the same model every time'
    )
  if trained is None:
    return (
      'the same data, code and options trained twice without --seed: the metrics agree, the '
      'models need not; --seed N trains the same model every time'
    )
  if found:
    return (
      f'only the metrics differ, both trained with --seed {trained}: not reproduced (another '
      'machine or device, or an op TensorFlow has no deterministic kernel for)'
    )
  return f'trained twice with --seed {trained}: the same metrics, reproduced'


def _header(facts: dict) -> dict:
  metrics = facts.get('metrics') or {}
  return {
    'run_id': facts['run_id'],
    'created': facts.get('created'),
    'metadata': facts.get('metadata'),
    'components': facts.get('components'),
    'examples_per_split': facts.get('examples_per_split'),
    'task': metrics.get('task'),
    'accuracy': metrics.get('accuracy'),
    'mae': (metrics.get('regression') or {}).get(MAE_KEY),
    'blessed': metrics.get('blessed'),
    'blessing': metrics.get('blessing'),
    'pushed_to': metrics.get('pushed_to'),
    'seed': seed(facts),
  }


def compare(a: dict, b: dict, moved: Optional[Dict[str, dict]] = None) -> dict:
  """The JSON-able answer: {'a': run A's header, 'b': run B's, 'differences': [...], 'metrics':
  metrics_table(a, b), 'statistics_compared': bool, 'randomness': randomness's line,
  'tasks_differ': tasks_differ's line}."""
  found = differences(a, b, moved)
  table = metrics_table(a, b)
  return {
    'a': _header(a),
    'b': _header(b),
    'differences': found,
    'metrics': table,
    'statistics_compared': moved is not None,
    'randomness': randomness(a, b, found),
    'tasks_differ': tasks_differ(table),
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
    store = run_reader.open_store(path)
    facts.append(run_facts(store, find_run(store, run_id, pipeline_name, path), path))
  return compare(facts[0], facts[1], moved_features(facts[0], facts[1], distances))
