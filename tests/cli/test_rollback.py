"""cli/rollback.py and the commands it sits beside (`runs`, `models`): bad input is one line,
exit 2, nothing written (a rollback that works: tests/e2e/test_runs.py)."""

import os
import subprocess
import sys

import pytest

from cli import main as cli_main
from cli import rollback
from contracts.errors import EXIT_BAD_INPUT
from tests.conftest import ROOT


@pytest.mark.parametrize(
  'argv', [['rollback', '5'], ['runs'], ['models'], ['runs', '--html']], ids=' '.join
)
def test_an_output_without_ml_metadata_is_one_line(tmp_path, capsys, argv):
  assert cli_main.main([*argv, '--output', str(tmp_path)]) == EXIT_BAD_INPUT
  assert capsys.readouterr().err == (
    f'error: {tmp_path}: no metadata.sqlite (run the pipeline there first)\n'
  )
  assert os.listdir(tmp_path) == []


def test_a_remote_serving_folder_is_refused(capsys):
  assert cli_main.main(['rollback', '5', '--output', 'gs://bucket/out']) == EXIT_BAD_INPUT
  assert 'rollback works on a local serving folder only' in capsys.readouterr().err


def test_the_new_version_is_above_every_version_and_the_time():
  assert int(rollback.new_version(['1', '2'])) > 10**9  # the time in seconds, as TFX's Pusher
  assert rollback.new_version(['1', str(10**12)]) == str(10**12 + 1)


@pytest.mark.parametrize('command', ['runs', 'models', 'rollback'])
def test_every_new_command_has_its_help(command):
  done = subprocess.run(
    [sys.executable, 'pipeline.py', command, '--help'],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=60,
  )
  assert done.returncode == 0 and f'usage: pipeline.py {command}' in done.stdout
