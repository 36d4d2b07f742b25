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


def test_a_hook_runs_when_its_component_executes_not_when_it_is_cached():
  calls = []
  handler = progress.ComponentProgress(
    ['Trainer', 'Evaluator'],
    stream=io.StringIO(),
    on_execute={'Evaluator': lambda: calls.append(1)},
  )
  record = lambda msg, *args: logging.LogRecord('absl', logging.INFO, '', 0, msg, args, None)
  for node, how in (
    ('Evaluator', 'A cached execution %d is used.'),
    ('Trainer', 'Going to run a new execution %d'),
  ):
    handler.emit(record('Component %s is running.', node))
    handler.emit(record(how, 7))
    handler.emit(record('Component %s is finished.', node))
  assert calls == []  # the Evaluator cached, the Trainer has no hook
  handler.emit(record('Component %s is running.', 'Evaluator'))
  handler.emit(record('Going to run a new execution %d', 8))
  assert calls == [1]


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


class _Terminal(io.StringIO):
  def isatty(self):
    return True


def _progress_record(text: str, final: bool = False) -> logging.LogRecord:
  from utils import progress as contract

  record = logging.LogRecord(
    contract.LOGGER, logging.INFO, '', 0, '%s: %s', ('Trainer', text), None
  )
  setattr(record, contract.FINAL, final)
  return record


def test_progress_inside_a_component_is_redrawn_on_a_terminal_and_throttled_in_a_pipe(monkeypatch):
  from utils import progress as contract

  terminal = _Terminal()
  handler = progress.ComponentProgress(['Trainer'], stream=terminal)
  for step in (1, 2):
    handler.emit(_progress_record(f'step {step}/3'))
  handler.emit(
    logging.LogRecord('absl', logging.INFO, '', 0, 'Component %s is finished.', ('Trainer',), None)
  )
  assert terminal.getvalue().startswith(
    '\r      Trainer: step 1/3\x1b[K\r      Trainer: step 2/3\x1b[K\n[1/1] Trainer done in '
  )  # the redrawn line ends before the next one

  monkeypatch.setattr(contract, 'PLAIN_SECONDS', 3600.0)
  pipe = io.StringIO()
  handler = progress.ComponentProgress(['Trainer'], stream=pipe)
  for step in (1, 2):
    handler.emit(_progress_record(f'step {step}/3'))
  handler.emit(_progress_record('step 3/3', final=True))
  assert pipe.getvalue() == '      Trainer: step 1/3\n      Trainer: step 3/3\n'
