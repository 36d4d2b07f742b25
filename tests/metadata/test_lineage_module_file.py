"""metadata/lineage.py on a module file's run (TFX's taxi pipeline,
tests/support/taxi_module_run.py): a model trained through Transform is traced to the raw data
and the transform graph, and `pipeline.py lineage` and `compare` say so."""

import os
import shutil
import sqlite3

import pytest

from cli import main as cli_main
from contracts.errors import EXIT_OK
from metadata import lineage

pytestmark = pytest.mark.slow  # TFX's taxi pipeline runs once (tests/conftest.py)


def _output(taxi_module_run) -> str:
  """The folder whose metadata.sqlite `lineage` and `compare` read (--output)."""
  return os.path.dirname(taxi_module_run.metadata)


def test_the_model_was_trained_on_the_raw_data_through_the_transform_graph(taxi_module_run):
  report = lineage.trace(taxi_module_run.metadata)
  (version,) = report['data_versions']  # Transform's transformed examples are no data version
  assert version['producer'] == 'CsvExampleGen'
  (model,) = report['models']
  assert model['trained_on'] == version['examples_id']
  transform = model['transform']
  assert transform['examples'] == version['examples_id']
  assert transform['transform_graph_uri'].rstrip('/').split('/')[-2] == 'transform_graph'
  assert model['module'].startswith('taxi_utils_native_keras (code ')
  assert model['pushed_to']
  pushed = model['pushed_to'][0]
  assert lineage.which_data(report, pushed)['trained_on'] == version


def test_lineage_names_the_transform_graph_and_module(taxi_module_run, capsys):
  code = cli_main.main(['lineage', '--output', _output(taxi_module_run)])
  printed = capsys.readouterr().out
  assert code == EXIT_OK
  model_line = next(line for line in printed.splitlines() if 'model #' in line)
  assert ' through transform graph #' in model_line
  assert 'module taxi_utils_native_keras (code ' in model_line
  assert 'accuracy ?' not in model_line  # TFMA's binary_accuracy is read


def test_compare_shows_a_changed_module_file(taxi_module_run, tmp_path, capsys):
  other = tmp_path / 'other'
  shutil.copytree(_output(taxi_module_run), other, ignore=shutil.ignore_patterns('root'))
  with sqlite3.connect(other / 'metadata.sqlite') as db:  # the module file edited, run again
    changed = db.execute(
      "UPDATE ExecutionProperty SET string_value = replace(string_value, '+', '+0ther')"
      " WHERE name = 'module_path'"
    ).rowcount
  assert changed == 2  # Transform's and the Trainer's
  code = cli_main.main(['compare', _output(taxi_module_run), str(other)])
  printed = capsys.readouterr().out
  assert code == EXIT_OK
  line = next(line for line in printed.splitlines() if 'module_file' in line)
  assert '(Trainer, Transform)' in line and '(code 0th' in line  # cells are cut
