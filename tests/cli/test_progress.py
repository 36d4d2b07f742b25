"""Progress lines go to the terminal as it is when a run starts."""

import io
import logging
import sys

from cli import progress


def test_progress_writes_to_the_current_stdout(monkeypatch):
  terminal = io.StringIO()
  monkeypatch.setattr(sys, 'stdout', terminal)  # after cli.progress was imported
  handler = progress.ComponentProgress(['ImageExampleGen', 'Trainer'])
  handler.emit(
    logging.LogRecord('absl', logging.INFO, '', 0, 'Component %s is running.', ('Trainer',), None)
  )
  assert terminal.getvalue() == '[2/2] Trainer running…\n'


def test_the_run_log_takes_only_what_is_logged_while_the_run_lasts(tmp_path, monkeypatch):
  """A notebook or test that goes on in the same process keeps its own logging."""
  terminal = io.StringIO()
  monkeypatch.setattr(sys, 'stdout', terminal)
  root = logging.getLogger()
  before = list(root.handlers), root.level
  log = tmp_path / 'run.log'
  with progress.logs_routed(str(log), progress.ComponentProgress(['Trainer'])):
    logging.getLogger('absl').info('Component %s is running.', 'Trainer')
    logging.info('during the run')
  logging.warning('after the run')
  assert (list(root.handlers), root.level) == before
  text = log.read_text()
  assert 'during the run' in text and 'after the run' not in text
  assert terminal.getvalue() == '[1/1] Trainer running…\n'
