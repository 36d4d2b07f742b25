"""--module-file: a TFX user's module file, read with ast before TensorFlow is imported.

Which contract trains (docs/design/module_files.md): a file defining `run_fn` is TFX's (its
`preprocessing_fn` runs in Transform, its `tuner_fn` in the Tuner, `stats_options_updater_fn`
in Transform's statistics), whether or not it also defines `build_model`; a file defining
`build_model` alone is the project's model file (as `--model FILE`). Checked here: the file
exists, parses, defines one of the two, and every package it imports is installed or beside it.
"""

import argparse
import ast
import importlib.util
import os
from typing import List

from contracts.errors import UserError
from contracts.trainer_options import MODULE_FUNCTIONS
from utils import module_reach

FLAG = '--module-file'
PROJECT_CONTRACT = 'build_model'


def parsed(path: str, flag: str) -> tuple:
  """(text, ast tree) of a Python file a flag names; one UserError line when it cannot be read or
  does not parse."""
  try:
    with open(path, encoding='utf-8') as f:
      source = f.read()
  except OSError as e:
    raise UserError(f'{flag} {path}: {e.strerror or e}') from None
  except UnicodeDecodeError as e:
    raise UserError(f'{flag} {path}: not UTF-8 text ({e.reason})') from None
  try:
    return source, ast.parse(source, path)
  except SyntaxError as e:
    raise UserError(f'{flag} {path}: line {e.lineno}: {e.msg}') from None


def defined_names(tree) -> set:
  """The names a module's top level defines (functions, classes, assignments, imports)."""
  defined = set()
  for node in tree.body:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
      defined.add(node.name)
    elif isinstance(node, ast.Assign):
      defined.update(target.id for target in node.targets if isinstance(target, ast.Name))
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
      defined.update(alias.asname or alias.name for alias in node.names)
  return defined


def missing_packages(path: str, tree) -> List[str]:
  """Top-level packages the file imports that are neither installed nor beside it."""
  folder = os.path.dirname(os.path.abspath(path))
  missing = []
  for top in module_reach.imported_tops(tree.body):
    beside = os.path.isfile(os.path.join(folder, f'{top}.py')) or os.path.isdir(
      os.path.join(folder, top)
    )
    if beside:
      continue
    try:
      found = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
      found = False
    if not found:
      missing.append(top)
  return missing


def functions(path: str) -> List[str]:
  """TFX's functions (MODULE_FUNCTIONS) the file defines at its top level, checked: UserError
  when it cannot be read, does not parse, imports what is not installed, or defines neither
  run_fn nor build_model."""
  if not path.endswith('.py'):
    raise UserError(f'{FLAG} {path}: not a .py file')
  if not os.path.isfile(path):
    raise UserError(f'{FLAG} {path}: no such file')
  _, tree = parsed(path, FLAG)
  missing = missing_packages(path, tree)
  if missing:
    raise UserError(
      f'{FLAG} {path}: imports {missing[0]}, which is not installed here (nor a file beside it)'
    )
  defined = defined_names(tree)
  found = [name for name in MODULE_FUNCTIONS if name in defined]
  if 'run_fn' not in found and PROJECT_CONTRACT not in defined:
    raise UserError(
      f"{FLAG} {path}: defines neither run_fn(fn_args) (TFX's Trainer) nor "
      "build_model(spec, hp) (the project's model file, docs/models.md)"
    )
  if 'run_fn' not in found and found:
    raise UserError(
      f'{FLAG} {path}: defines {found[0]} but no run_fn(fn_args): '
      "TFX's Trainer needs run_fn to train on what it makes"
    )
  return found + ([PROJECT_CONTRACT] if PROJECT_CONTRACT in defined else [])


def module_options(args: argparse.Namespace) -> dict:
  """TrainerOptions fields for --module-file: module_file and module_functions (TFX's contract),
  or model (a build_model-only file: the project's model-file contract, as --model FILE)."""
  path = args.module_file
  if getattr(args, 'model', ''):
    raise UserError(f'{FLAG} {path}: --model {args.model} too; give one of them')
  found = functions(path)
  if 'run_fn' not in found:
    return dict(model=path)
  tuner = getattr(args, 'tune_trials', 0)
  if tuner and 'tuner_fn' not in found:
    raise UserError(f'--tune-trials {tuner}: {FLAG} {path} defines no tuner_fn(fn_args)')
  for flag, dest, unset in (
    ('--weights', 'weights', ''),
    ('--fine-tune-steps', 'fine_tune_steps', -1),
  ):
    if getattr(args, dest, unset) != unset:
      raise UserError(f"{flag}: for the project's models only, not with {FLAG} (its run_fn trains)")
  fns = [name for name in found if name in MODULE_FUNCTIONS]
  return dict(module_file=os.path.abspath(path), module_functions=fns)


def contract_line(path: str) -> str:
  """What trains, said once at the start of a run: which of the file's functions run where."""
  found = functions(path)
  name = os.path.basename(path)
  if 'run_fn' not in found:
    return f"{name}: build_model, the project's model-file contract (as --model {name})"
  used = ', '.join(f'{fn} ({MODULE_FUNCTIONS[fn]})' for fn in found if fn in MODULE_FUNCTIONS)
  unused = '; its build_model is not called (run_fn trains)' if PROJECT_CONTRACT in found else ''
  return f"{name}: TFX's module-file contract: {used}{unused}"
