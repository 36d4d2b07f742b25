"""Turns TFX's log lines into one progress line per component, and shows the progress records
of long components (utils/progress.py); the full log goes to a file."""

import contextlib
import logging
import os
import sys
import time
from typing import Iterator
import warnings

from utils import progress


class ComponentProgress(logging.Handler):
  """Prints `[i/n] Component ... done in 3.1 s (cached)` as LocalDagRunner walks the DAG."""

  _NODE_MESSAGES = ('Component %s is running.', 'Component %s is finished.')

  def __init__(self, node_ids, stream=None, on_execute=None):
    """stream: default sys.stdout as it is now (not as it was when this module was imported);
    on_execute: {component id: a function called when that component's executor is about to
    run (not when the component is taken from the cache)}."""
    super().__init__(level=logging.INFO)
    self._order = {node_id: i + 1 for i, node_id in enumerate(node_ids)}
    self._on_execute = dict(on_execute or {})
    self._stream = stream or sys.stdout
    self._started = {}
    self._cached = set()
    self._current = None
    self._redrawn = False  # a progress line waits for its newline (terminal only)
    # -inf, not 0: monotonic time starts at boot, so the first line is printed however recent it was
    self._last_plain = float('-inf')

  def _progress(self, record: logging.LogRecord) -> None:
    """A progress record: redrawn in place on a terminal, else a plain line at most every
    progress.PLAIN_SECONDS (and the final one)."""
    line = f'      {record.getMessage()}'
    final = getattr(record, progress.FINAL, False)
    if getattr(self._stream, 'isatty', lambda: False)():
      self._stream.write('\r' + line + '\x1b[K' + ('\n' if final else ''))
      self._stream.flush()
      self._redrawn = not final
    elif final or time.monotonic() - self._last_plain >= progress.PLAIN_SECONDS:
      self._last_plain = time.monotonic()
      self._print(line)

  def emit(self, record: logging.LogRecord) -> None:
    if record.name == progress.LOGGER:
      self._progress(record)
      return
    if record.msg in self._NODE_MESSAGES and record.args[0] not in self._order:
      return  # a Resolver node: a lookup, not a component
    if record.msg == 'Component %s is running.':
      self._current = record.args[0]
      self._started[self._current] = time.monotonic()
      self._print(f'{self._tag(self._current)} {self._current} running…')
    elif record.msg == 'A cached execution %d is used.' and self._current:
      self._cached.add(self._current)
    elif record.msg == 'Going to run a new execution %d' and self._current in self._on_execute:
      self._on_execute[self._current]()
    elif record.msg == 'Component %s is finished.':
      node = record.args[0]
      took = time.monotonic() - self._started.get(node, time.monotonic())
      how = 'cached' if node in self._cached else 'executed'
      self._print(f'{self._tag(node)} {node} done in {took:.1f} s ({how})')

  def _tag(self, node_id: str) -> str:
    return f'[{self._order.get(node_id, "?")}/{len(self._order)}]'

  def _print(self, line: str) -> None:
    if self._redrawn:  # a redrawn progress line ends before the next line
      self._stream.write('\n')
      self._redrawn = False
    self._stream.write(line + '\n')
    self._stream.flush()


@contextlib.contextmanager
def logs_routed(log_path: str, progress: ComponentProgress) -> Iterator[None]:
  """While the block runs, everything at INFO and above goes to `log_path` and only progress
  lines to the terminal; then the root logger's handlers and level are as they were (a later
  test, notebook cell or run in this process does not write into this run's log)."""
  root = logging.getLogger()
  saved = list(root.handlers), root.level
  for handler in saved[0]:
    root.removeHandler(handler)
  file_handler = logging.FileHandler(log_path)
  file_handler.setFormatter(logging.Formatter('%(asctime)s %(levelname)s %(name)s: %(message)s'))
  root.addHandler(file_handler)
  root.addHandler(progress)
  root.setLevel(logging.INFO)
  tf_logger = logging.getLogger('tensorflow')  # TensorFlow adds its own stderr handler
  for handler in list(tf_logger.handlers):
    tf_logger.removeHandler(handler)
  tf_logger.propagate = True
  logging.captureWarnings(True)
  warnings.simplefilter('default')
  try:
    from absl import logging as absl_logging

    absl_logging.use_python_logging(quiet=True)
    absl_logging.set_verbosity(absl_logging.INFO)
  except ImportError:
    pass
  try:
    yield
  finally:
    for handler in (file_handler, progress):
      root.removeHandler(handler)
      handler.close()
    for handler in saved[0]:
      root.addHandler(handler)
    root.setLevel(saved[1])


@contextlib.contextmanager
def stderr_to(log_path: str) -> Iterator[None]:
  """Sends file descriptor 2 to `log_path` while the block runs: what libraries print there
  (TensorFlow's C++ logging, warnings at import, Beam's worker processes, which inherit it)
  goes to the run log instead of the terminal."""
  sys.stderr.flush()
  saved = os.dup(2)
  log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
  os.dup2(log, 2)
  os.close(log)
  try:
    yield
  finally:
    sys.stderr.flush()
    os.dup2(saved, 2)
    os.close(saved)
