"""--module-file read before TensorFlow: which contract trains, and bad files in one line."""

import argparse
import shutil

import pytest

from cli import model_options
from cli.inputs import module_file
from contracts.errors import UserError
from tests.support.tfx_data import TAXI_MODULE

RUN_FN = 'def run_fn(fn_args):\n  pass\n'


def _args(path, **given) -> argparse.Namespace:
  values = dict(module_file=str(path), model='', weights='', fine_tune_steps=-1, tune_trials=0)
  return argparse.Namespace(**dict(values, **given))


def _write(tmp_path, text: str, name: str = 'module.py'):
  path = tmp_path / name
  path.write_text(text)
  return path


def test_taxi_module_file_is_tfx_contract(tmp_path):
  path = tmp_path / 'taxi_utils.py'
  shutil.copy(TAXI_MODULE, path)
  decided = model_options.model_options(_args(path), 'csv')
  assert decided == dict(module_file=str(path), module_functions=['preprocessing_fn', 'run_fn'])
  line = module_file.contract_line(str(path))
  assert 'preprocessing_fn (Transform), run_fn (Trainer)' in line


def test_build_model_only_is_the_project_model_file(tmp_path):
  path = _write(tmp_path, 'def build_model(spec, hp):\n  return None\n')
  decided = model_options.model_options(_args(path), 'csv')
  assert decided['model'] == str(path) and 'build_model' in decided['model_source']
  assert 'module_file' not in decided


def test_both_contracts_run_fn_trains_and_the_line_says_so(tmp_path):
  path = _write(tmp_path, RUN_FN + 'def build_model(spec, hp):\n  return None\n')
  assert model_options.model_options(_args(path), 'csv')['module_functions'] == ['run_fn']
  assert 'its build_model is not called' in module_file.contract_line(str(path))


@pytest.mark.parametrize(
  'text, said',
  [
    ('def run_fn(fn_args)\n  pass\n', "line 1: expected ':'"),
    ('import no_such_package_here\n' + RUN_FN, 'imports no_such_package_here, which is not'),
    ('def train(x):\n  pass\n', 'defines neither run_fn(fn_args)'),
    (
      'def preprocessing_fn(inputs):\n  return inputs\ndef build_model(spec, hp):\n  pass\n',
      'defines preprocessing_fn but no run_fn',
    ),
  ],
)
def test_bad_module_files_are_one_line(tmp_path, text, said):
  path = _write(tmp_path, text)
  with pytest.raises(UserError) as raised:
    model_options.model_options(_args(path), 'csv')
  assert str(raised.value).startswith(f'--module-file {path}: ') and said in str(raised.value)


def test_missing_file_and_not_python(tmp_path):
  with pytest.raises(UserError, match='no such file'):
    module_file.functions(str(tmp_path / 'absent.py'))
  with pytest.raises(UserError, match='not a .py file'):
    module_file.functions(str(_write(tmp_path, RUN_FN, 'module.txt')))


def test_a_file_beside_it_may_be_imported(tmp_path):
  _write(tmp_path, 'X = 1\n', 'helpers.py')
  path = _write(tmp_path, 'import helpers\n' + RUN_FN)
  assert module_file.functions(str(path)) == ['run_fn']


@pytest.mark.parametrize(
  'given, said',
  [
    (dict(model='mlp'), '--model mlp too'),
    (dict(tune_trials=3), '--tune-trials 3: --module-file'),
    (dict(weights='none'), "--weights: for the project's models only"),
  ],
)
def test_options_that_do_not_go_with_a_run_fn(tmp_path, given, said):
  path = _write(tmp_path, RUN_FN)
  with pytest.raises(UserError, match=said):
    model_options.model_options(_args(path, **given), 'csv')
