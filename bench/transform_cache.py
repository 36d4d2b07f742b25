"""Transform re-run after a preprocessing_fn edit, with and without the analyzer cache of the run
before, side by side in each round (issue 67: the Transform cache used on a re-run).

  .venv/bin/python -m bench.transform_cache [--rounds N] [--quick] [--json OUT]

Once: `pipeline.py run --module-file` with the tfx wheel's `taxi_utils_native_keras.py`, as it is,
on the wheel's taxi CSV (15,002 rows; --quick: the first 3,000), few train steps: its ExampleGen,
schema and Transform (which wrote its TransformCache). Then the module file is edited as a user
adds one feature, two ways (EDITS): `analyzer`: `trip_start_timestamp` joins
`_DENSE_FLOAT_FEATURE_KEYS` (one more z-score analyzer beside the 9 of the file); `no_analyzer`:
a log of `trip_miles` (no analyzer: all 9 are in the cache). Each round runs, each in a fresh process and a fresh output
folder, in alternating order, the project's Transform executor (components/cached_transform) on
the same examples and schema with the edited module: once given the first run's cache, once not.
Printed per contender: the executor's seconds (Do, imports left out) and the analyzers read from
the cache / computed, with the ratio with / without per round and its spread.
"""

import json
import os
import statistics
import sys
import tempfile
import time

from bench import figures
from bench.module_file import data_copy, module_copy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK_ROWS = 3000
DENSE = "_DENSE_FLOAT_FEATURE_KEYS = ['trip_miles', 'fare', 'trip_seconds']"
EDITED = DENSE[:-1] + ", 'trip_start_timestamp']"
TIPPER = '  # Was this passenger a big tipper?'
LOG_MILES = (
  "  outputs['trip_miles_log_xf'] = tf.math.log1p(_fill_in_missing(inputs['trip_miles']))\n"
)
EDITS = {'analyzer': (DENSE, EDITED), 'no_analyzer': (TIPPER, LOG_MILES + TIPPER)}


def first_run(folder: str, rows: int) -> dict:
  """The once-only run and the edits: {'examples', 'schema', 'cache', 'modules'} (artifact URIs
  and {edit: the edited module file's path})."""
  import subprocess

  module = module_copy(folder)
  data = data_copy(folder, rows)
  output = os.path.join(folder, 'out')
  argv = [sys.executable, os.path.join(ROOT, 'pipeline.py'), 'run', '--data', data]
  argv += ['--output', output, '--label', 'tips', '--module-file', module, '--train-steps', '10']
  argv += ['--eval-steps', '2', '--min-accuracy', '0', '--allow-missed-classes']
  subprocess.run(argv, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  found = transform_inputs(os.path.join(output, 'metadata.sqlite'))
  with open(module) as f:
    text = f.read()
  modules = {}
  for edit, (before, after) in EDITS.items():
    assert text.count(before) == 1, f'the taxi module file changed: the {edit} edit does not apply'
    modules[edit] = os.path.join(folder, f'taxi_utils_{edit}.py')
    with open(modules[edit], 'w') as f:
      f.write(text.replace(before, after))
  return dict(found, modules=modules)


def transform_inputs(metadata_path: str) -> dict:
  """The URIs of the examples and schema the last Transform execution read, and the cache it
  wrote."""
  from metadata import connection

  store = connection.open_read_only(metadata_path)
  execution = max(
    (
      e
      for e in store.get_executions()
      if any(
        c.type == 'node' and c.name.endswith('.Transform')
        for c in store.get_contexts_by_execution(e.id)
      )
    ),
    key=lambda e: e.id,
  )
  events = store.get_events_by_execution_ids([execution.id])
  by_id = {a.id: a for a in store.get_artifacts_by_id([e.artifact_id for e in events])}
  found = {}
  for event in events:
    key = event.path.steps[0].key
    if key in ('examples', 'schema', 'updated_analyzer_cache'):
      found['cache' if key == 'updated_analyzer_cache' else key] = by_id[event.artifact_id].uri
  return found


def child(inputs: dict, use_cache: bool, out: str) -> None:
  """inputs: first_run's, with 'module': the edited module file."""
  # One Transform (this process): prints {'seconds', 'from_cache', 'computed'} last.
  from tfx.dsl.components.base import base_beam_executor
  from tfx.types import artifact_utils, standard_artifacts

  from components import module_transform
  from components.cached_transform import executor
  import config as cfg

  def made(kind, name, **properties):
    artifact = kind()
    artifact.uri = os.path.join(out, name)
    for key, value in properties.items():
      setattr(artifact, key, value)
    return artifact

  examples = standard_artifacts.Examples()
  examples.uri = inputs['examples']
  examples.split_names = artifact_utils.encode_split_names(['train', 'eval'])
  schema = standard_artifacts.Schema()
  schema.uri = inputs['schema']
  input_dict = {'examples': [examples], 'schema': [schema]}
  if use_cache:
    cache = standard_artifacts.TransformCache()
    cache.uri = inputs['cache']
    input_dict['analyzer_cache'] = [cache]
  updated = made(standard_artifacts.TransformCache, 'cache')
  output_dict = {
    'transform_graph': [made(standard_artifacts.TransformGraph, 'graph')],
    'transformed_examples': [made(standard_artifacts.Examples, 'transformed')],
    'updated_analyzer_cache': [updated],
    'pre_transform_schema': [made(standard_artifacts.Schema, 'pre_schema')],
    'pre_transform_stats': [made(standard_artifacts.ExampleStatistics, 'pre_stats')],
    'post_transform_schema': [made(standard_artifacts.Schema, 'post_schema')],
    'post_transform_stats': [made(standard_artifacts.ExampleStatistics, 'post_stats')],
    'post_transform_anomalies': [made(standard_artifacts.ExampleAnomalies, 'anomalies')],
  }
  properties = {
    'preprocessing_fn': module_transform.PREPROCESSING_FN,
    'custom_config': json.dumps({'module_file': inputs['module']}),
    'force_tf_compat_v1': 0,
    'disable_statistics': 0,
  }
  beam_args = cfg.PipelineConfig(data='', data_kind=cfg.CSV, output=out).beam_pipeline_args
  context = base_beam_executor.BaseBeamExecutor.Context(beam_pipeline_args=beam_args, tmp_dir=out)
  start = time.perf_counter()
  executor.Executor(context).Do(input_dict, output_dict, properties)
  seconds = time.perf_counter() - start
  counts = {
    'from_cache': updated.get_int_custom_property('analyzers_from_cache'),
    'computed': updated.get_int_custom_property('analyzers_computed'),
  }
  print(json.dumps(dict(seconds=round(seconds, 2), **counts)))


def measure(quick: bool, rounds: int) -> dict:
  rounds = rounds or (1 if quick else 3)
  rows = QUICK_ROWS if quick else 0
  with tempfile.TemporaryDirectory(prefix='transform_cache_') as folder:
    inputs = first_run(folder, rows)
    runs = {edit: {'with': [], 'without': []} for edit in EDITS}
    for number in range(rounds):
      order = ('with', 'without') if number % 2 == 0 else ('without', 'with')
      for edit in EDITS:
        for name in order:
          out = os.path.join(folder, f'round{number}_{edit}_{name}')
          argv = [sys.executable, '-m', 'bench.transform_cache', '--child', name, '--out', out]
          argv += ['--inputs', json.dumps(dict(inputs, module=inputs['modules'][edit]))]
          found, _ = figures.measured_process(argv, ROOT)
          runs[edit][name].append(found)
  return {'rows': rows or 15002, 'rounds': rounds, 'edits': {e: ratios(r) for e, r in runs.items()}}


def ratios(runs: dict) -> dict:
  """{'runs', 'ratio' (with / without, median of the rounds), 'ratio_spread'} of one edit."""
  seconds = {name: [r['seconds'] for r in found] for name, found in runs.items()}
  return {
    'runs': runs,
    'ratio': statistics.median(a / b for a, b in zip(seconds['with'], seconds['without'])),
    'ratio_spread': figures.ratio_rounds(seconds['with'], seconds['without']),
  }


def report(found: dict) -> None:
  print(f'Transform after a preprocessing_fn edit (one more feature), {found["rows"]:,} taxi rows')
  for edit, measured in found['edits'].items():
    print(f'  edit: {edit}')
    for name in ('without', 'with'):
      runs = measured['runs'][name]
      times = ', '.join(f'{r["seconds"]:.1f}' for r in runs)
      print(
        f'    {name:<8} cache: {times} s; analyzers from the cache {runs[0]["from_cache"]},'
        f' computed {runs[0]["computed"]}'
      )
    low, high = measured['ratio_spread']
    print(f'    with / without: {measured["ratio"]:.2f} (rounds {low:.2f}–{high:.2f})')


def main(argv=None) -> None:
  argv = sys.argv[1:] if argv is None else argv
  if argv and argv[0] == '--child':
    child(
      json.loads(argv[argv.index('--inputs') + 1]), argv[1] == 'with', argv[argv.index('--out') + 1]
    )
    return
  figures.main_in_rounds(__doc__, 'the first 3,000 rows, 1 round', measure, report, argv)


if __name__ == '__main__':
  main()
