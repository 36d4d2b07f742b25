"""--model, --weights and the fine-tuning flags checked without importing TensorFlow: a built-in
for the data or a model file that defines build_model, weights that exist or can be fetched."""

import argparse
import os

from cli import flags
from cli.inputs import module_file
import config as cfg
from contracts import trainer_options
from contracts.errors import UserError, first_line
from trainer import models
from utils import fingerprint


def model_options(args: argparse.Namespace, data_kind: str, local: bool = True) -> dict:
  """PipelineConfig fields for --model and --weights, checked without importing TensorFlow:
  a built-in for this kind of data, or a model file that parses and defines build_model (what
  it builds is checked by the Trainer, against the data). local: --weights FILE must exist."""
  name, weights = getattr(args, 'model', ''), getattr(args, 'weights', '')
  kind = cfg.trainer_kind(data_kind)
  decided = {}
  if getattr(args, 'module_file', ''):
    decided = module_file.module_options(args)
    if decided.get('module_file'):  # TFX's run_fn trains: the project's model flags do not apply
      return decided
    name = decided['model']
  if name.endswith('.py'):
    flag = '--module-file' if decided else '--model'
    decided = dict(model=os.path.abspath(name), model_source=_model_source(name, flag))
  elif name and name not in models.BUILT_IN:
    raise UserError(
      f'--model {name}: not a built-in model ({", ".join(models.BUILT_IN)}) nor a .py file'
    )
  elif name and models.BUILT_IN[name] != kind:
    raise UserError(
      f'--model {name}: a model for {models.BUILT_IN[name]} data; this data is {kind} '
      f'(its built-in: {models.DEFAULT[kind]})'
    )
  if name == models.TREES and getattr(args, 'loss', '') == trainer_options.HUBER:
    raise UserError(
      f'--model {name}: --loss huber: the trees regress with mse (the default) or mae'
    )
  backbone = name in models.BACKBONES or 'model_source' in decided
  for flag, value, unset in (
    ('--weights', weights, ''),
    (
      '--fine-tune-steps',
      getattr(args, 'fine_tune_steps', -1),
      flags.DEFAULTS.trainer.fine_tune_steps,
    ),
  ):
    if value != unset and not backbone:
      raise UserError(
        f'{flag}: only for a backbone model ({", ".join(models.BACKBONES)}) or a model file'
      )
  special = (trainer_options.IMAGENET, trainer_options.NO_WEIGHTS)
  if weights and weights not in special and local and not cfg.is_remote(weights):
    if not os.path.isfile(weights):
      raise UserError(f'--weights {weights}: no such file (or imagenet, none)')
    decided['weights'] = os.path.abspath(weights)
  return decided


def check_imagenet(args: argparse.Namespace) -> None:
  """A backbone starting from ImageNet weights: they are in Keras' cache or can be fetched now
  (the Trainer would fail on them after the data components ran)."""
  name, weights = getattr(args, 'model', ''), getattr(args, 'weights', '')
  if name not in models.BACKBONES or weights not in ('', trainer_options.IMAGENET):
    return
  from trainer.models import backbone

  try:
    backbone.fetch_imagenet(name)
  except Exception as e:
    raise UserError(
      f'--model {name}: its ImageNet weights cannot be fetched ({_reason(e)}); pass '
      '--weights none, or --weights FILE with the weights saved on a machine that can '
      '(docs/models.md)'
    ) from None


def _reason(error: BaseException) -> str:
  """The first line of the error at the root of `error` (Keras wraps urllib's)."""
  while error.__cause__ or error.__context__:
    error = error.__cause__ or error.__context__
  return first_line(error)


def _model_source(path: str, flag: str = '--model') -> str:
  """The model file's text, once it parses and defines build_model at its top level."""
  source, tree = module_file.parsed(path, flag)
  defined = module_file.defined_names(tree)
  if 'build_model' not in defined:
    raise UserError(f'{flag} {path}: defines no build_model(spec, hp) (docs/models.md)')
  _refuse_local_imports(path, tree)
  return source


def _refuse_local_imports(path: str, tree) -> None:
  """A model file travels as its text alone, and only that text (with the project's code) is in
  the Trainer's cache key: an import of a file outside installed packages and the project (a
  module beside it, one found through PYTHONPATH, a relative import) is refused now, before any
  component runs, rather than failing in the Trainer or being served stale from the cache."""
  import ast

  folder = os.path.dirname(os.path.abspath(path))
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
      names = ['.' * node.level + (node.module or node.names[0].name)]
    else:
      continue
    for name in names:
      found = _local_file(name, folder)
      if found:
        raise UserError(
          f'--model {path}: imports {name}, a file outside installed packages ({found}); a model '
          'file may import installed packages only, as its text alone travels with the pipeline '
          'and keys its cache (docs/models.md): move that code into the model file or install it'
        )


def _local_file(name: str, folder: str) -> str:
  """Where module `name` comes from when that is a file outside installed packages and the
  project ('' when it is installed, built in, the project's, or not found at all)."""
  import importlib.util

  if name.startswith('.'):
    return 'a relative import'
  top = name.split('.')[0]
  for beside in (f'{top}.py', os.path.join(top, '__init__.py')):
    if os.path.isfile(os.path.join(folder, beside)):
      return os.path.join(folder, beside)
  try:
    spec = importlib.util.find_spec(top)
  except (ImportError, ValueError):
    return ''
  if spec is None:
    return ''
  places = list(spec.submodule_search_locations or ()) or [spec.origin or '']
  outside = [p for p in places if os.path.isabs(p) and not _installed_or_project(p, top)]
  if outside and top not in _distributions():
    return outside[0]
  return ''


def _installed_or_project(place: str, top: str) -> bool:
  import site
  import sysconfig

  paths = sysconfig.get_paths()
  roots = [paths[key] for key in ('stdlib', 'platstdlib', 'purelib', 'platlib')]
  roots += site.getsitepackages() + [site.getusersitepackages()]
  real = os.path.realpath(place)
  if top in fingerprint.PROJECT and real.startswith(os.path.realpath(fingerprint.ROOT) + os.sep):
    return True
  return any(real.startswith(os.path.realpath(root) + os.sep) for root in roots)


def _distributions() -> dict:
  """Top-level module → installed distributions (an editable install's source lives elsewhere)."""
  import importlib.metadata

  return importlib.metadata.packages_distributions()
