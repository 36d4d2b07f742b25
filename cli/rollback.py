"""`pipeline.py rollback VERSION`: an earlier pushed version made the serving one again, as a new
highest version holding its files (written atomically), recorded in ML Metadata as a push with
its reason so that the next run compares with it (metadata/rollback_record.py,
docs/design/rollback.md)."""

import argparse
import os
import shutil
import time

from cli import output_lock, runs
import config as cfg
from contracts.errors import EXIT_OK, UserError
from utils import atomic

HELP = 'make an earlier pushed model version the serving one again (a new highest version)'
DESCRIPTION = (
  'Copy an earlier version under <output>/serving/ to a new highest version (TensorFlow Serving '
  'and every reader of serving/ pick it up), recorded in ML Metadata as a push with its reason: '
  '`lineage`, `models` and `runs` show it, and the next run compares its model with this one. '
  'VERSION is a version folder name (as `pipeline.py models` lists them) or its path. Takes the '
  "output's lock, as `run` does."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument('version', metavar='VERSION', help='the version to serve again')
  runs.add_output(parser)
  parser.add_argument('--reason', default='', metavar='TEXT', help='why, kept in ML Metadata')
  parser.add_argument(
    '--wait', action='store_true', help='wait for a run on --output to end instead of refusing'
  )


def new_version(versions: list) -> str:
  """The next version's name: the time in seconds as TFX's Pusher names them, above the
  highest."""
  return str(max([int(time.time())] + [int(v) + 1 for v in versions]))


def main(args: argparse.Namespace) -> int:
  output = args.output
  if cfg.is_remote(output):
    raise UserError(f'--output {output}: rollback works on a local serving folder only')
  output = os.path.abspath(output)
  store_path = os.path.join(output, cfg.METADATA_FILE)
  if not os.path.isfile(store_path):
    raise UserError(f'{args.output}: no metadata.sqlite (run the pipeline there first)')
  serving_dir = os.path.join(output, 'serving')
  version = os.path.basename(args.version.rstrip('/'))
  output_lock.hold(output, f'--output {args.output}', wait=args.wait)
  from metadata import rollback_record
  from metadata import runs as gathering

  versions = gathering.serving_versions(serving_dir)
  if version not in versions:
    raise UserError(
      f'version {args.version}: not under {serving_dir} (versions there: '
      f'{", ".join(versions) or "none"}; pipeline.py models lists them)'
    )
  source = os.path.join(serving_dir, version)
  model_id = rollback_record.pushed_model_id(store_path, source)
  if model_id is None:
    raise UserError(
      f'version {version}: not a model this output pushed (no push to it in ML Metadata)'
    )
  if version == versions[-1]:
    raise UserError(f'version {version}: already the serving version (the highest)')
  destination = os.path.join(serving_dir, new_version(versions))
  with atomic.folder_atomically(destination) as staging:
    shutil.copytree(source, staging, dirs_exist_ok=True)
  try:
    execution = rollback_record.record(
      store_path, cfg.PIPELINE_NAME, source, destination, args.reason
    )
  except BaseException:  # not recorded: no version ML Metadata does not know of
    shutil.rmtree(destination, ignore_errors=True)
    raise
  print(
    f'rolled back: version {version} (model #{model_id}) serves again as '
    f'{os.path.basename(destination)}: {destination}'
  )
  print(f'recorded:   ML Metadata execution #{execution} ({rollback_record.ROLLBACK_EXECUTION})')
  from reporting import runs_page

  print(f'runs page:  {runs_page.write(runs.gathered(output))}')
  return EXIT_OK
