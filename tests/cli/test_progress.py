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
