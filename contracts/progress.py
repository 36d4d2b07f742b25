"""Progress of long work inside a component, as log records on one logger: the run's terminal
shows them (cli/progress.py: one line redrawn on a terminal; when output is not one, a plain
line every PLAIN_SECONDS and the last one), and the run log keeps every record."""

import logging
import os
import threading
import time
from typing import Callable, Dict

LOGGER = 'tfrp.progress'
FINAL = 'progress_final'  # a record's attribute: the work is done (always shown)
# Seconds between plain progress lines when output is not a terminal (logs, CI, a pipe).
PLAIN_SECONDS = float(os.environ.get('TFRP_PROGRESS_SECONDS', '10'))


def report(node: str, text: str, final: bool = False) -> None:
  """`node: text` on the progress logger (node: the component's id, e.g. 'Trainer')."""
  logging.getLogger(LOGGER).info('%s: %s', node, text, extra={FINAL: final})


class FilesProgress:
  """While Beam writes files: the work in the files completed so far, of the total, and its rate,
  from the files renamed into place (a worker process logs nowhere the run's terminal sees; the
  files are visible to every mode and file system). `expected` maps each file to its share of the
  work; `describe(done, total, per_second)` words a line."""

  POLL_SECONDS = 1.0

  def __init__(
    self, node: str, expected: Dict[str, float], describe: Callable[[float, float, float], str]
  ):
    self._node, self._expected, self._describe = node, expected, describe
    self._stop = threading.Event()
    self._thread = threading.Thread(target=self._watch, daemon=True)
    self._started = time.monotonic()

  def __enter__(self):
    self._thread.start()
    return self

  def __exit__(self, *exc):
    self._stop.set()
    self._thread.join()
    if exc[0] is None:
      self._report(sum(self._expected.values()), final=True)

  def _watch(self) -> None:
    from tfx.dsl.io import fileio

    shown = 0
    while not self._stop.wait(self.POLL_SECONDS):
      done = sum(n for path, n in self._expected.items() if fileio.exists(path))
      if done != shown:
        shown = done
        self._report(done, final=False)

  def _report(self, done: float, final: bool) -> None:
    total = sum(self._expected.values())
    elapsed = max(time.monotonic() - self._started, 1e-9)
    report(self._node, self._describe(done, total, done / elapsed), final=final)
