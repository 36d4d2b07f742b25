"""`run --watch` for real: a save of the model file re-runs the Trainer and what follows it in
the same process, the data's components from TFX's cache; Ctrl-C ends it with the output folder
consistent and no serving-check worker left."""

import csv
import json
import os

import psutil
import pytest

from cli import main as cli_main
from cli import watch
from contracts.errors import EXIT_INTERRUPTED
from tests.conftest import FAST

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)


def test_a_saved_model_file_re_runs_the_trainer_and_what_follows_in_the_same_process(
  tmp_path, monkeypatch, capsys
):
  data = tmp_path / 'rooms.csv'
  with open(data, 'w', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(['rooms', 'area', 'price'])
    for i in range(300):
      writer.writerow(
        [1 + i % 5, 30 + (i * 7) % 90, 50_000 + 40_000 * (1 + i % 5) + (i * 13) % 900]
      )
  model = tmp_path / 'my_model.py'
  with open(os.path.join('trainer', 'models', 'mlp.py')) as f:
    model.write_text(f.read())
  edits = [lambda: model.write_text(model.read_text() + '\n# a comment: a new model file\n')]

  def next_edit(seconds):
    if not edits:
      raise KeyboardInterrupt  # Ctrl-C
    edits.pop(0)()
    stat = os.stat(model)
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))

  monkeypatch.setattr(watch, 'pause', next_edit)
  output = str(tmp_path / 'out')
  argv = ['run', '--watch', '--data', str(data), '--label', 'price', '--model', str(model)]
  code = cli_main.main([*argv, '--output', output, *FAST])
  assert code == EXIT_INTERRUPTED
  # The serving check's worker, kept for every watched run, ended with the watch.
  assert not [
    child
    for child in psutil.Process().children(recursive=True)
    if 'components.serving_check.probe' in ' '.join(child.cmdline())
  ]
  shown = capsys.readouterr().out
  assert shown.count('── summary ──') == 2
  assert 'watching: my_model.py changed: running again' in shown
  second = shown.split('running again', 1)[1]
  assert '[8/11] Trainer done in' in second
  assert 'CsvExampleGen done in' in second and '(cached)' in second.split('Trainer')[0]
  with open(os.path.join(output, 'last_run.json')) as f:
    last = json.load(f)
  assert 'Trainer' in last['executed'] and 'CsvExampleGen' in last['cached']
  assert os.path.isfile(last['report'])  # written by the second run too (blessed or not)
