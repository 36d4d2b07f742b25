"""`pipeline.py runs`: every run of an output folder, newest first, from ML Metadata
(metadata/runs.py gathers, reporting/runs_text.py and runs_page.py draw)."""

import argparse
import json
import logging
import os

from cli import output_folder
import config as cfg
from contracts.errors import EXIT_OK, UserError
from utils import atomic

HELP = 'every run of an output folder, newest first: data, figures, blessing, push, exit code'
DESCRIPTION = (
  'List every pipeline run recorded in <output>/metadata.sqlite, newest first: run id, wall '
  'time, the data (path, rows, revision), task and model, the headline figure (accuracy or '
  'MAE), blessed or why not, the version pushed, the exit code, and which components executed '
  'and why; rollbacks where they happened. --html rewrites <output>/runs.html (every run also '
  'does).'
)


def add_output(parser: argparse.ArgumentParser) -> None:
  """--output, as `runs`, `models` and `rollback` take it."""
  parser.add_argument(
    '--output',
    default=output_folder.DEFAULT_OUTPUT,
    metavar='DIR',
    help='the run folder (default: %(default)s)',
  )


def add_json(parser: argparse.ArgumentParser, what: str) -> None:
  """--json FILE (`what` it holds) and --overwrite."""
  parser.add_argument('--json', default='', metavar='FILE', help=f'also write {what} as JSON')
  output_folder.add_overwrite(parser, '--json')


def add_arguments(parser: argparse.ArgumentParser) -> None:
  add_output(parser)
  add_json(parser, 'the runs')
  parser.add_argument(
    '--html', action='store_true', help='also rewrite <output>/runs.html (the runs page)'
  )


def local_dir(output: str) -> str:
  """Where an output's metadata.sqlite, reports and runs page are."""
  return output_folder.local_state_dir(output) if cfg.is_remote(output) else output


def gathered(output: str) -> dict:
  """The output folder's runs and model versions (metadata/runs.gather); UserError without a
  store."""
  local = local_dir(output)
  store_path = os.path.join(local, cfg.METADATA_FILE)
  if not os.path.isfile(store_path):
    raise UserError(f'{output}: no metadata.sqlite (run the pipeline there first)')
  logging.getLogger('tensorflow').setLevel(logging.ERROR)  # TFMA's deprecation notes
  from metadata import runs

  return runs.gather(
    store_path, cfg.PIPELINE_NAME, os.path.join(output, 'serving'), os.path.abspath(local)
  )


def main(args: argparse.Namespace) -> int:
  output_folder.check_new_file('--json', args.json, args.overwrite)
  facts = gathered(args.output)
  from reporting import runs_page, runs_text

  print('\n'.join(runs_text.render_runs(facts)))
  if args.html:
    print(f'runs page:  {runs_page.write(facts)}')
  if args.json:
    atomic.write(args.json, json.dumps(facts, indent=2, default=str))
  return EXIT_OK
