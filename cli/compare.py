"""`pipeline.py compare`: what differs between two runs (metadata/compare.py reads them), with the
drift check's comparators for the statistics (L-infinity for categorical features, Jensen-Shannon
divergence for numeric ones: monitoring/distances.py's comparator schema, TFDV's measurements)."""

import argparse
import json
import logging
import os
from typing import Dict, Optional, Tuple

from cli import output_folder
import config as cfg
from contracts.errors import EXIT_OK, UserError
from utils import atomic

HELP = 'what differs between two runs: data, statistics, schema, code, options, metrics'
DESCRIPTION = (
  'Compare two pipeline runs read from ML Metadata and their artifacts, most telling first: the '
  'data (source, span/version, revision, example counts per split and class), the features '
  'whose train distributions moved most, schema changes, the fingerprinted code files that '
  'changed, options and hyperparameters, and the metrics (accuracy, recall per class, per '
  'slice, blessing) with B − A. RUN_A and RUN_B are run ids (`pipeline.py run` prints them as '
  '"run id:") or output folders (their latest run). No run: the last two runs in --output; one: '
  'that run against the latest.'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument('run_a', nargs='?', metavar='RUN_A', help='a run id or an output folder')
  parser.add_argument(
    'run_b', nargs='?', metavar='RUN_B', help='a run id or an output folder (default: the latest)'
  )
  parser.add_argument(
    '--output',
    default=output_folder.DEFAULT_OUTPUT,
    metavar='DIR',
    help='the run folder of run ids (default: %(default)s)',
  )
  parser.add_argument('--json', default='', metavar='FILE', help='also write the answer as JSON')
  parser.add_argument(
    '--html', default='', metavar='FILE', help='also write a page with side-by-side charts'
  )
  output_folder.add_overwrite(parser, '--json or --html')


def feature_distances(statistics_a: str, statistics_b: str, schema_uri: str) -> Dict[str, dict]:
  """{feature: {'measure', 'value', 'threshold', 'flagged'}}: how far each feature of the
  schema moved between two StatisticsGen outputs' train splits (B against A as the previous
  version, as the drift check compares them), thresholds the monitor's defaults."""
  import tensorflow_data_validation as tfdv

  from metadata import artifact_reader
  from monitoring import distances

  previous, current = map(artifact_reader.train_statistics, (statistics_a, statistics_b))
  schema = tfdv.load_schema_text(os.path.join(schema_uri, 'schema.pbtxt'))
  schema = distances.monitoring_schema(schema, previous, label='', thresholds={})
  anomalies = tfdv.validate_statistics(
    current, schema, environment=distances.TRAINING, previous_statistics=previous
  )
  return distances.measurements(anomalies, 'drift_measurements')


def _store(folder: str) -> str:
  path = os.path.abspath(os.path.join(folder, cfg.METADATA_FILE))
  if not os.path.isfile(path):
    raise UserError(f'{folder}: no metadata.sqlite (run the pipeline there first)')
  return path


def _latest(path: str, count: int):
  from metadata import run_facts, run_reader

  runs = run_facts.runs_of(run_reader.open_store(path), cfg.PIPELINE_NAME)
  if len(runs) < count:
    raise UserError(
      f'{path}: {len(runs)} run(s), {count} needed to compare (run the pipeline again, or '
      'name an output folder of another run: pipeline.py compare FOLDER)'
      if count > 1
      else f'{path}: no pipeline run'
    )
  return [run.name for run in runs[-count:]]


def runs_to_compare(output: str, run_a: Optional[str], run_b: Optional[str]) -> Tuple[tuple, tuple]:
  """((store path, run id) of A, of B): a run id of --output's store, or an output folder's
  latest run; none given: the last two runs of --output; only A: B is --output's latest run.
  A run is not compared with itself (UserError)."""

  def resolve(given: str) -> tuple:
    if os.path.isdir(given) and os.path.isfile(os.path.join(given, cfg.METADATA_FILE)):
      path = _store(given)
      return path, _latest(path, 1)[0]
    return _store(output), given

  if run_a is None:
    path = _store(output)
    first, last = _latest(path, 2)
    return (path, first), (path, last)
  a = resolve(run_a)
  if run_b is None:
    path = _store(output)
    b = (path, _latest(path, 1)[0])
  else:
    b = resolve(run_b)
  if a == b:
    latest = ' (RUN_B is the latest run when not given)' if run_b is None else ''
    raise UserError(
      f'{a[0]}: run {a[1]} would be compared with itself{latest}; give two different runs'
    )
  return a, b


def main(args: argparse.Namespace) -> int:
  for flag, path in (('--json', args.json), ('--html', args.html)):
    output_folder.check_new_file(flag, path, args.overwrite)
  logging.getLogger('tensorflow').setLevel(logging.ERROR)  # TFMA's deprecation notes
  (path_a, a), (path_b, b) = runs_to_compare(args.output, args.run_a, args.run_b)
  from metadata import compare
  from reporting import compare_page

  result = compare.between(
    path_a, a, b, feature_distances, metadata_path_b=path_b, pipeline_name=cfg.PIPELINE_NAME
  )
  print('\n'.join(compare_page.render(result)))
  if args.json:
    atomic.write(args.json, json.dumps(result, indent=2, default=str))
  if args.html:
    atomic.write(args.html, compare_page.html_page(result))
    print(f'page:       {os.path.abspath(args.html)}')
  return EXIT_OK
