"""--model, --weights and the fine-tuning flags: what the command line refuses in one line,
exit 2, before anything runs (cli/model_options.py: model_options, check_imagenet)."""

import argparse
import os

import pytest

from cli import main as cli_main
from cli import model_options


@pytest.fixture
def csv_file(tmp_path):
  data = tmp_path / 'rows.csv'
  data.write_text('x,label\n1,0\n2,1\n')
  return str(data)


def _refused(capsys, tmp_path, *args) -> str:
  output = tmp_path / 'out'
  code = cli_main.main(['run', '--output', str(output), *args])
  captured = capsys.readouterr()
  lines = captured.err.strip().splitlines()
  assert code == 2 and len(lines) == 1, lines
  assert captured.out == ''  # nothing else: Keras once printed `Downloading data from …` here
  assert not os.path.exists(output / 'pipeline_root')
  return lines[0]


@pytest.mark.parametrize(
  'source,expected',
  [
    ('def build_model(spec, hp)\n  pass\n', 'line 1: '),  # SyntaxError: no colon
    ('def make_model(spec, hp):\n  pass\n', 'defines no build_model(spec, hp)'),
  ],
  ids=['syntax', 'no-build_model'],
)
def test_a_model_file_that_cannot_be_a_model_is_refused(
  tmp_path, capsys, csv_file, source, expected
):
  path = tmp_path / 'my_model.py'
  path.write_text(source)
  line = _refused(capsys, tmp_path, '--data', csv_file, '--model', str(path))
  assert line.startswith(f'error: --model {path}: ') and expected in line


@pytest.mark.parametrize(
  'flags,expected',
  [
    (['--model', 'missing.py'], '--model missing.py: No such file or directory'),
    (['--model', 'vgg16'], '--model vgg16: not a built-in model (cnn, mlp, bag_of_words, '),
    (['--model', 'resnet50'], '--model resnet50: a model for image data; this data is tabular'),
    (['--weights', 'none'], '--weights: only for a backbone model'),
    (['--model', 'mlp', '--fine-tune-steps', '5'], '--fine-tune-steps: only for a backbone'),
    (['--fine-tune-layers', '0'], '--fine-tune-layers 0: must be positive'),
    (['--tune-trials', '-1'], '--tune-trials -1: must be 0 (the default: no tuning) or more'),
    (['--model', 'gbt', '--loss', 'huber'], '--model gbt: --loss huber: the trees regress with'),
  ],
)
def test_model_flags_that_do_not_fit_are_refused(tmp_path, capsys, csv_file, flags, expected):
  assert expected in _refused(capsys, tmp_path, '--data', csv_file, *flags)


def test_trees_on_images_are_refused(tmp_path, capsys):
  line = _refused(capsys, tmp_path, '--model', 'gbt')  # the embedded digits: images
  assert (
    line == 'error: --model gbt: a model for tabular data; this data is image (its built-in: cnn)'
  )


def test_a_missing_weights_file_is_refused(tmp_path, capsys):
  line = _refused(capsys, tmp_path, '--model', 'resnet50', '--weights', 'nowhere.weights.h5')
  assert line == 'error: --weights nowhere.weights.h5: no such file (or imagenet, none)'


def test_imagenet_weights_that_cannot_be_fetched_say_what_to_pass_instead(
  tmp_path, capsys, monkeypatch
):
  monkeypatch.setenv('KERAS_HOME', str(tmp_path / 'keras'))  # an empty cache
  for proxy in ('https_proxy', 'HTTPS_PROXY'):  # and no way out: a refused connection
    monkeypatch.setenv(proxy, 'http://127.0.0.1:9')
  line = _refused(capsys, tmp_path, '--model', 'mobilenet_v3_small')
  assert line.startswith(
    'error: --model mobilenet_v3_small: its ImageNet weights cannot be fetched ('
  )
  assert line.endswith(
    'pass --weights none, or --weights FILE with the weights saved on a machine that can (docs/models.md)'
  )


BUILD = '\n\ndef build_model(spec, hp):\n  return helper.block(spec)\n'


@pytest.mark.parametrize(
  'imports,where',
  [
    ('import mylayers as helper', 'beside'),  # found only because it lies beside the model
    ('from mylayers import block as helper', 'path'),  # on PYTHONPATH, somewhere else
    ('from . import mylayers as helper', ''),  # a relative import
  ],
)
def test_a_model_file_importing_a_file_outside_installed_packages_is_refused(
  tmp_path, capsys, csv_file, monkeypatch, imports, where
):
  folder = tmp_path / ('elsewhere' if where == 'path' else 'models')
  folder.mkdir()
  (folder / 'mylayers.py').write_text('def block(spec):\n  return None\n')
  if where == 'path':
    monkeypatch.syspath_prepend(str(folder))
  (tmp_path / 'models').mkdir(exist_ok=True)
  path = tmp_path / 'models' / 'my_model.py'
  path.write_text(imports + BUILD)
  line = _refused(capsys, tmp_path, '--data', csv_file, '--model', str(path))
  module = '.mylayers' if imports.startswith('from .') else 'mylayers'
  assert line.startswith(f'error: --model {path}: imports {module}, a file outside installed ')
  assert 'may import installed packages only' in line
  assert (str(folder / 'mylayers.py') in line) == bool(where)


def test_installed_packages_the_project_and_missing_modules_are_left_to_the_trainer(tmp_path):
  path = tmp_path / 'my_model.py'
  imports = 'import json\nimport numpy\nfrom trainer.models import backbone\nimport not_installed_x'
  path.write_text(imports + BUILD)
  decided = model_options.model_options(argparse.Namespace(model=str(path), weights=''), 'csv')
  assert decided['model_source'] == path.read_text()
