"""The cache keys the DAG gives TFX beyond its own: code fingerprints of the project modules a
component runs (TFX does not fingerprint code referenced by module path), with the local data by
content and the files options name (a model file, a weights file, a curated schema). pipeline.py
builds the DAG with them; utils/fingerprint.py computes them.
"""

import os
from typing import Dict, List

import config as cfg
from contracts.errors import UserError, first_line
from trainer import models
from utils import data_index, fingerprint, module_reach


def data_fingerprint(config: cfg.PipelineConfig, data, module: str) -> str:
  """An ExampleGen's code fingerprint with its local data by content (utils/data_index.py): TFX's
  own input fingerprint is the files' sizes and modification times, which `touch -r` sets back.
  Data in object storage, or a pipeline parameter (compiled), is TFX's alone. The index is read,
  not written: building the DAG writes nothing (cli/prepare_run.py brings it up to date)."""
  known = {}
  if isinstance(data, str) and data and not cfg.is_remote(data):
    index = os.path.join(config.local_dir, data_index.INDEX_FILE)
    digest = data_index.digest(data, index, config.read_patterns(), update=False)
    known[data_index.DATA_KEY + data] = digest
  return fingerprint.of(module, known=known)


def trainer_fingerprint(config: cfg.PipelineConfig) -> str:
  """run_fn's code (TFX does not fingerprint code referenced by module path), with the model:
  a built-in's file, or the user's model file by its path (its text is in custom_config too)
  and the project modules it imports; and a --weights file by its content."""
  executors = [
    'components.recording_trainer.executor',
    'components.recording_trainer.tuner_executor',
  ]
  modules = ['trainer.task', 'trainer.tuning', *executors]
  options = config.trainer
  if options.module_file:  # TFX's run_fn: the module file and the files beside it it imports
    path = options.module_file
    files = {'module_file': path, **{f'imported {p}': p for p in module_reach.local_imports(path)}}
    return files_fingerprint('trainer.module_file', *executors, files=files)
  weights = {key: path for key, path in config.input_files.items() if key == 'weights'}
  if options.model_source:
    return files_fingerprint(
      *modules, files=dict(weights, model=options.model), imported_by=options.model_source
    )
  name = options.model or models.DEFAULT[options.data_kind]
  return files_fingerprint(*modules, f'trainer.models.{name}', files=weights)


def transform_fingerprint(config: cfg.PipelineConfig) -> str:
  """Transform's key beyond TFX's: the code the module file's preprocessing_fn (and
  stats_options_updater_fn) reaches, not the whole file (utils/module_reach.py): an edit of
  run_fn alone leaves Transform cached; and its executor (the last analyzer cache's lookup)."""
  path = config.trainer.module_file
  reach = {
    f'{path}:{name}': module_reach.digest(path, name)
    for name in ('preprocessing_fn', 'stats_options_updater_fn')
    if name in config.trainer.module_functions
  }
  return fingerprint.of('trainer.module_file', 'components.cached_transform.executor', known=reach)


def files_fingerprint(*modules: str, files: Dict[str, str], imported_by: str = '') -> str:
  """fingerprint.of(modules) with the files options name ({field: path}): a local file by its
  content, an object in object storage by its store's checksum (asked, not read), a file that
  exists only in a compiled pipeline's image by nothing."""
  remote = {field: path for field, path in files.items() if path and cfg.is_remote(path)}
  known = {}
  if remote:
    from utils import object_storage  # the store's clients: imported only here

    for field, path in remote.items():
      try:
        known[path] = object_storage.checksum(path)
      except Exception as e:
        raise UserError(f'--{field} {path}: cannot read its checksum ({first_line(e)})') from None
  local = _existing([path for path in files.values() if path and path not in remote.values()])
  return fingerprint.of(*modules, data_files=local, known=known, imported_by=imported_by)


def _existing(paths: List[str]) -> List[str]:
  """Paths that exist here (a compiled pipeline may name a file that exists only in its image)."""
  return [path for path in paths if os.path.isfile(path)]
