"""A run with nothing to do, answered before TensorFlow or TFX is imported.

Every component of a run is taken from TFX's cache when its inputs, parameters and code are the
ones of an earlier execution; when nothing a run depends on changed since the last finished run,
all of them would be. This module records, at the end of a run that finished, what it depended
on (`<local_dir>/last_run_state.json`): the options (the whole PipelineConfig, the model file's
text among them), the project's code and lock file, the data and --infer-data files (their paths
and content, known as git knows them: utils/data_index.py; a file saved again with the same
content, or edited with its size and time set back, is seen as what it holds), the content of
every other file an option names (config.input_files: the curated schema, a --weights file), the
ML Metadata store and the serving model's versions.
The next run compares; when all are equal it prints that run's summary and exits with its code,
without running anything, importing TFX (~8 s) or TensorFlow (~3 s).

A model that was just pushed is the serving model: the run after a push compares nothing with
itself (TFX would re-run the Evaluator, ServingCheck and Pusher to find the same model blessed).
Anything else written to the store (another command, another run) or any data file whose content
changed sends the run through TFX as before. `--no-cache` and remote data, outputs or option files
never take this path.
"""

import dataclasses
import hashlib
import json
import os
import sys
from typing import Optional

import config as cfg
from utils import data_index, fingerprint

STATE_FILE = 'last_run_state.json'
SUMMARY_FILE = 'last_run.json'
# The project's own code: a change to any of it sends the run through TFX.
CODE_FOLDERS = (
  'cli',
  'components',
  'contracts',
  'data_revisions',
  'engines',
  'metadata',
  'records',
  'reporting',
  'trainer',
  'utils',
  'schema',
)
CODE_FILES = ('pipeline.py', 'example_gens.py', 'cache_keys.py', 'config.py', 'requirements.lock')


def code_digest() -> str:
  """Every project source file's and the lock file's content (utils/fingerprint.py's root)."""
  digest = hashlib.sha256(sys.version.encode())
  paths = [os.path.join(fingerprint.ROOT, name) for name in CODE_FILES]
  for folder in CODE_FOLDERS:
    for root, subfolders, names in os.walk(os.path.join(fingerprint.ROOT, folder)):
      subfolders[:] = sorted(s for s in subfolders if s != '__pycache__')
      paths += [os.path.join(root, n) for n in sorted(names) if not n.endswith('.pyc')]
  for path in paths:
    with open(path, 'rb') as f:
      digest.update(path.encode() + b'\0' + f.read())
  return digest.hexdigest()


def _stat(path: str) -> list:
  try:
    stat = os.stat(path)
  except FileNotFoundError:
    return []
  return [stat.st_size, stat.st_mtime_ns]


def current(config: cfg.PipelineConfig) -> Optional[dict]:
  """What a run of `config` depends on, or None when this path does not apply (no cache, or
  data or outputs in object storage: their listing is what TFX's driver does anyway)."""
  paths = (config.data, config.output, config.pipeline_root, config.infer_data)
  paths += tuple(config.input_files.values())
  if not config.enable_cache or any(cfg.is_remote(p) for p in paths if p):
    return None
  index = os.path.join(config.local_dir, data_index.INDEX_FILE)
  return {
    'config': json.loads(json.dumps(dataclasses.asdict(config), default=str)),
    'code': code_digest(),
    'data': data_index.digest(config.data, index, config.read_patterns()),
    'infer_data': (
      data_index.digest(config.infer_data, index, config.read_patterns(unlabeled=True))
      if config.infer_data
      else ''
    ),
    'files': {field: _content(path) for field, path in config.input_files.items()},
    'store': _stat(config.metadata_path),
    'serving': sorted(os.listdir(config.serving_dir)) if os.path.isdir(config.serving_dir) else [],
  }


def _content(path: str) -> str:
  """A file an option names (config.input_files), by its content: the same digest as in the
  component's cache key (a file replaced by another of the same size and time is seen)."""
  try:
    return fingerprint.file_digest(os.path.abspath(path))
  except OSError:
    return ''


def previous_result(config: cfg.PipelineConfig) -> Optional[dict]:
  """The last run's summary when nothing it depended on changed, else None."""
  now = current(config)
  path = os.path.join(config.local_dir, STATE_FILE)
  if now is None or not os.path.exists(path):
    return None
  try:
    with open(path) as f:
      recorded = json.load(f)
    with open(os.path.join(config.local_dir, SUMMARY_FILE)) as f:
      result = json.load(f)
  except (OSError, ValueError):  # half a file from a full disk: run as usual
    return None
  if recorded != now or result.get('run_id') is None or 'error' in result:
    return None
  return result


def record(config: cfg.PipelineConfig) -> None:
  """After a run that finished: what it depended on, for the next run to compare."""
  now = current(config)
  path = os.path.join(config.local_dir, STATE_FILE)
  if now is None:
    return
  with open(path + '.partial', 'w') as f:
    json.dump(now, f)
  os.replace(path + '.partial', path)


def forget(config: cfg.PipelineConfig) -> None:
  """Before a run: the recorded state no longer holds once anything is run."""
  try:
    os.remove(os.path.join(config.local_dir, STATE_FILE))
  except FileNotFoundError:
    pass
