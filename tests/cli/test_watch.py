"""`run --watch` (cli/watch.py): a save re-runs, a broken save waits for the next, a code edit
restarts, Ctrl-C ends; driven by a fake run and a fake clock, no pipeline."""

import argparse
import os
import shutil
import sys

import pytest

from cli import watch
from contracts.errors import EXIT_INTERRUPTED, UserError


def _args(**given):
  names = dict.fromkeys(watch.WATCHED_OPTIONS + ('output',), '')
  return argparse.Namespace(**{**names, 'beam_runner': 'DirectRunner', **given})


class Edits:
  """A sleep that makes the next edit on each call, then stops the watch with Ctrl-C."""

  def __init__(self, *edits):
    self.edits = list(edits)

  def __call__(self, seconds):
    if not self.edits:
      raise KeyboardInterrupt
    self.edits.pop(0)()


def _touch(path, text):
  def edit():
    with open(path, 'w') as f:
      f.write(text)
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a later save, surely

  return edit


def _watched(args, runs, *edits):
  """watch.watch on args with the project's code unchanged; each run appended to runs (exit 0)."""
  return watch.watch(
    args,
    lambda args: runs.append(1) or 0,
    lambda: 'code',
    lambda: pytest.fail('no code changed'),
    Edits(*edits),
  )


def test_a_save_runs_again_and_ctrl_c_ends_the_watch(tmp_path, capsys):
  data = tmp_path / 'rows.csv'
  data.write_text('x,y\n1,2\n')
  runs = []
  code = _watched(_args(data=str(data)), runs, _touch(data, 'x,y\n1,2\n3,4\n'))
  assert (code, len(runs)) == (EXIT_INTERRUPTED, 2)
  shown = capsys.readouterr().out
  assert 'watching: rows.csv changed: running again' in shown and 'watch ended (Ctrl-C)' in shown


def test_a_broken_save_is_one_line_and_the_next_save_runs(tmp_path, capsys):
  model = tmp_path / 'my_model.py'
  model.write_text('def build_model(spec, hp): ...\n')
  outcomes = [UserError('--model my_model.py: does not import (SyntaxError: …)'), 0]

  def run_once(args):
    outcome = outcomes.pop(0)
    if isinstance(outcome, Exception):
      raise outcome
    return outcome

  code = watch.watch(
    _args(model=str(model)),
    run_once,
    lambda: 'code',
    lambda: pytest.fail('no code changed'),
    Edits(_touch(model, 'def build_model(spec, hp): return None\n')),
  )
  assert code == EXIT_INTERRUPTED and not outcomes
  captured = capsys.readouterr()
  assert captured.err == 'error: --model my_model.py: does not import (SyntaxError: …)\n'
  assert 'exit code 2' in captured.out and 'my_model.py changed' in captured.out


def test_a_file_beside_the_module_file_that_it_imports_is_watched_too(tmp_path, capsys):
  module = tmp_path / 'taxi_utils.py'
  module.write_text('import features\nfrom constants import SCALE\ndef run_fn(fn_args): ...\n')
  helpers = {name: tmp_path / f'{name}.py' for name in ('features', 'constants', 'notes')}
  for helper in helpers.values():
    helper.write_text('SCALE = 2\n')
  args = _args(module_file=str(module))
  assert watch.watched_paths(args) == [
    str(module),
    str(helpers['constants']),
    str(helpers['features']),
  ]
  runs = []
  edits = (
    _touch(helpers['notes'], 'SCALE = 5\n'),  # not imported: no run
    _touch(helpers['constants'], 'SCALE = 3\n'),
  )
  assert _watched(args, runs, *edits) == EXIT_INTERRUPTED and len(runs) == 2
  shown = capsys.readouterr().out
  assert 'watching: constants.py changed: running again' in shown and 'notes.py' not in shown
  module.write_text('import features\ndef run_fn(fn_args):\n')  # a save half made: itself only
  assert watch.watched_paths(args) == [str(module)]


def test_an_edit_of_the_project_code_restarts_the_process(tmp_path):
  digests = iter(['before', 'before', 'after', 'after'])
  restarted = []

  def restart():
    restarted.append(1)
    raise SystemExit(0)  # os.execv does not return

  with pytest.raises(SystemExit):
    watch.watch(_args(), lambda args: 0, lambda: next(digests), restart, lambda s: None)
  assert restarted == [1]


@pytest.mark.parametrize(
  'given,said',
  [
    ({'data': 'gs://b/rows.csv'}, '--watch: gs://b/rows.csv is in object storage'),
    ({'beam_runner': 'FlinkRunner'}, '--watch: runs with the DirectRunner only'),
  ],
)
def test_remote_files_and_cluster_runners_are_refused(given, said):
  with pytest.raises(UserError, match=f'^{said}'):
    watch.check(_args(**given))


def _remove(path):
  def edit():
    if os.path.isdir(path):
      shutil.rmtree(path)
    else:
      os.remove(path)

  return edit


def test_a_deleted_data_folder_is_one_line_and_runs_again_once_back(tmp_path, capsys):
  images = tmp_path / 'images'
  (images / 'cat').mkdir(parents=True)
  (images / 'cat' / '1.png').write_bytes(b'png')
  runs = []

  def back():
    (images / 'cat').mkdir(parents=True)
    (images / 'cat' / '1.png').write_bytes(b'png again')

  code = _watched(
    _args(data=str(images)), runs, _remove(str(images)), lambda: None, lambda: None, back
  )
  assert (code, len(runs)) == (EXIT_INTERRUPTED, 2)  # no run while the folder was gone
  shown = capsys.readouterr().out.splitlines()
  gone = [line for line in shown if 'deleted' in line]
  assert gone == ['watching: images deleted: the next run waits for it (Ctrl-C ends)']  # once
  assert shown.index(gone[0]) < shown.index('watching: 1.png changed: running again')


def test_a_deleted_model_file_is_one_line_and_ctrl_c_still_ends_the_watch(tmp_path, capsys):
  model = tmp_path / 'my_model.py'
  model.write_text('def build_model(spec, hp): ...\n')
  runs = []
  code = _watched(_args(model=str(model)), runs, _remove(str(model)), lambda: None)
  assert (code, len(runs)) == (EXIT_INTERRUPTED, 1)
  captured = capsys.readouterr()
  assert 'watching: my_model.py deleted: the next run waits for it (Ctrl-C ends)' in captured.out
  assert captured.out.endswith('watch ended (Ctrl-C)\n') and captured.err == ''


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason="glibc's malloc_trim")
def test_what_a_run_freed_is_handed_back_to_the_system():
  assert watch.return_freed_memory()
