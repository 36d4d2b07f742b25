"""--output and --local-dir: writable, outside the data, with a readable ML Metadata store; and
the one rule for a file a command writes (--out, --json, --html): it replaces no file unasked."""

import argparse
import os
import shutil
import tempfile
from typing import Callable, Optional

from cli.inputs import data_paths
import config as cfg
from contracts.errors import UserError

DEFAULT_OUTPUT = 'output'  # --output when not given


def check_outside_data(data: str, kind: str, flag: str, path: str) -> None:
  """Raises UserError when `path` (--output, --local-dir) is the --data folder or below it,
  other than in a hidden folder: a data folder is listed whole (an image folder to its last
  file, other folders for their data files or span-<N> folders), so the pipeline's own files
  would be read as data, and the data would change with every run."""
  if not data_paths.isdir(data):
    return  # one file: only it is read, whatever lies beside it
  if cfg.is_remote(data) or cfg.is_remote(path):
    folder, inside = data.rstrip('/'), path.rstrip('/')
  else:
    folder, inside = os.path.realpath(data), os.path.realpath(path)
  below = folder.rstrip('/') + '/'
  if not (inside == folder or inside.startswith(below)) or data_paths.skipped(inside[len(below) :]):
    return
  raise UserError(
    f'{flag} {path} is inside --data {data}: '
    + (
      'its files would be read as images (an extra class)'
      if kind == cfg.IMAGES
      else 'the next run would take its folder for part of the data'
    )
    + f'; choose {"an output" if flag == "--output" else "a " + flag} outside the data folder'
  )


def absolute(path: str) -> str:
  """--output or --local-dir as a run names it: an absolute path, or gs:// / s3:// without a
  trailing '/'."""
  return path.rstrip('/') if cfg.is_remote(path) else os.path.abspath(path)


def check_output(path: str) -> str:
  """Creates the output folder if needed and proves it writable; returns its absolute path."""
  pattern = sorted(set(path) & set('[]*?'))
  if pattern:  # Beam and TFX find artifact files by glob patterns built on this path
    raise UserError(
      f'--output {path}: {" ".join(pattern)} would be read as glob patterns by Beam and TFX, '
      'which find artifact files by pattern; choose a path without them'
    )
  path = absolute(path)
  if cfg.is_remote(path):
    return _check_remote_output(path)
  if os.path.exists(path) and not os.path.isdir(path):
    raise UserError(f'--output {path}: exists and is not a folder')
  created = not os.path.exists(path)
  try:
    os.makedirs(path, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path, prefix='.write-test-'):
      pass
  except OSError as e:
    if created and os.path.isdir(path):
      shutil.rmtree(path, ignore_errors=True)
    raise UserError(f'--output {path}: not writable ({e.strerror or e})') from None
  return path


def _check_remote_output(path: str) -> str:
  """Writes and deletes a marker object under a gs:// or s3:// output to prove access."""
  probe = f'{path}/.write-test-{os.getpid()}'
  try:
    gfile = data_paths.gfile()
    gfile.makedirs(path)
    with gfile.GFile(probe, 'w') as f:
      f.write('ok')
    gfile.remove(probe)
  except Exception as e:  # errors differ per store and plugin
    raise UserError(
      f'--output {path}: not writable ({str(e).splitlines()[0] if str(e) else e!r})'
    ) from None
  return path


def check_metadata(path: str) -> None:
  """Raises UserError when an existing ML Metadata store is not an SQLite database."""
  if not os.path.exists(path):
    return
  with open(path, 'rb') as f:
    header = f.read(16)
  if header != b'SQLite format 3\x00':
    raise UserError(
      f'{path}: not an SQLite database (damaged?); move it away to start afresh '
      '(every component then runs again)'
    )


def local_state_dir(output: str) -> str:
  """Where metadata.sqlite, logs and the run report go for a gs:// or s3:// --output:
  ML Metadata's SQLite store needs a local file (output/remote/<scheme>/<bucket>/<path>)."""
  scheme, rest = output.split('://', 1)
  return os.path.abspath(
    os.path.join(DEFAULT_OUTPUT, 'remote', scheme, *rest.strip('/').split('/'))
  )


def add_overwrite(parser: argparse.ArgumentParser, files: str, unless: str = '') -> None:
  """--overwrite: replace `files` (e.g. '--json or --html') when they exist; `unless`: which
  existing files are replaced without it (check_new_file's `ours`)."""
  unless = f', unless {unless}' if unless else ''
  parser.add_argument(
    '--overwrite',
    action='store_true',
    help=f'replace {files} when it exists (default: refuse{unless})',
  )


def check_new_file(
  flag: str,
  path: str,
  overwrite: bool,
  ours: Optional[Callable[[str], bool]] = None,
  what: str = '',
) -> None:
  """Raises UserError when `path` (given as `flag`) is a folder, or an existing file and not
  `overwrite`, unless `ours(path)` says it is this command's own earlier output (`what`, e.g.
  'a predictions file'), which is replaced as before. Call it before the command's work."""
  if not path:
    return
  gfile = data_paths.gfile() if cfg.is_remote(path) else None
  exists, isdir = (
    (gfile.exists(path), gfile.isdir(path))
    if gfile
    else (os.path.exists(path), os.path.isdir(path))
  )
  if isdir:
    raise UserError(f'{flag} {path}: is a folder (give a file name)')
  if exists and not overwrite and not (ours and ours(path)):
    raise UserError(
      f'{flag} {path}: already exists{" and is not " + what if what else ""} (give another '
      'name, or --overwrite to replace it)'
    )
