"""monitoring/run.py for a module file's model (TFX's taxi pipeline,
tests/support/taxi_module_run.py): the serving model's training data is the raw data Transform
read, so serving rows are compared with it."""

import json
import os
import shutil

import pytest

from cli import main as cli_main

pytestmark = pytest.mark.slow  # TFX's taxi pipeline runs once (tests/conftest.py)


def test_serving_rows_are_compared_with_the_data_before_transform(
  taxi_module_run, tmp_path, capsys
):
  output = tmp_path / 'out'  # monitor records its run in the store: a copy of it
  shutil.copytree(
    os.path.dirname(taxi_module_run.metadata), output, ignore=shutil.ignore_patterns('root')
  )
  code = cli_main.main(
    ['monitor', '--output', str(output), '--serving-data', taxi_module_run.held_out]
  )
  printed = capsys.readouterr().out
  assert code in (0, 1), printed  # 1: something flagged
  line = next(line for line in printed.splitlines() if line.startswith('monitor: '))
  assert f'{sum(1 for _ in open(taxi_module_run.held_out)) - 1} serving examples' in line
  (found,) = [p for p in os.listdir(output / 'monitoring')]
  with open(output / 'monitoring' / found / 'monitoring.json') as f:
    summary = json.load(f)
  assert '/CsvExampleGen/' in summary['trained_on']['examples_uri']  # not Transform's output
  assert 'fare' in summary['features']
