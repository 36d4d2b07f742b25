"""Progress of long work inside a component, as log records on one logger: the run's terminal
shows them (cli/progress.py: one line redrawn on a terminal; when output is not one, a plain
line every PLAIN_SECONDS and the last one), and the run log keeps every record."""

import logging
import os
import shutil
import tempfile
import threading
import time
from typing import Callable, Dict, Optional

from utils import background

LOGGER = 'tfrp.progress'
FINAL = 'progress_final'  # a record's attribute: the work is done (always shown)
# Seconds between plain progress lines when output is not a terminal (logs, CI, a pipe).
PLAIN_SECONDS = float(os.environ.get('TFRP_PROGRESS_SECONDS', '10'))


def report(node: str, text: str, final: bool = False) -> None:
  """`node: text` on the progress logger (node: the component's id, e.g. 'Trainer')."""
  logging.getLogger(LOGGER).info('%s: %s', node, text, extra={FINAL: final})


class _Watch(background.Background):
  """While work runs: a line every POLL_SECONDS when done() changed, the last one (done: the
  total) when the work ends without an error."""

  POLL_SECONDS = 1.0

  def __init__(self, node: str, total: float, describe: Callable[[float, float, float], str]):
    super().__init__()
    self._node, self._total, self._describe = node, total, describe
    self._started = time.monotonic()

  def __exit__(self, *exc):
    super().__exit__(*exc)
    if exc[0] is None:
      self._report(self._final(), final=True)

  def done(self) -> float:
    raise NotImplementedError

  def _final(self) -> float:
    return self._total

  def _run(self) -> None:
    shown = 0
    while not self._stop.wait(self.POLL_SECONDS):
      done = min(self.done(), self._total)
      if done != shown and done < self._total:  # all done: the last line will say so
        shown = done
        self._report(done, final=False)

  def _report(self, done: float, final: bool) -> None:
    elapsed = max(time.monotonic() - self._started, 1e-9)
    report(self._node, self._describe(done, self._total, done / elapsed), final=final)


class FilesProgress(_Watch):
  """While Beam writes files: the work in the files completed so far, of the total, and its rate,
  from the files renamed into place (a worker process logs nowhere the run's terminal sees; the
  files are visible to every mode and file system). `expected` maps each file to its share of the
  work; `describe(done, total, per_second)` words a line."""

  def __init__(
    self, node: str, expected: Dict[str, float], describe: Callable[[float, float, float], str]
  ):
    super().__init__(node, sum(expected.values()), describe)
    self._expected = expected

  def done(self) -> float:
    from tfx.dsl.io import fileio

    return sum(n for path, n in self._expected.items() if fileio.exists(path))


# CountsProgress: the folder where each counting process keeps its count (Beam's worker
# processes inherit the variable; remote workers have no such folder and count nothing).
COUNTS_ENV = 'TFRP_PROGRESS_COUNTS_DIR'
COUNT_WRITE_SECONDS = 1.0
_counted = {'folder': '', 'done': 0, 'written': 0.0}
_count_lock = threading.Lock()


# The Beam counter every count() adds to (inside a Beam step): what a runner whose workers share
# no folder with the run (Flink, Spark, Dataflow) reports back while the job runs.
BEAM_COUNTER = ('tfrp', 'progress')
_beam_counter = []


def _add_to_beam_counter(n: int) -> None:
  if not _beam_counter:
    from apache_beam.metrics import Metrics

    _beam_counter.append(Metrics.counter(*BEAM_COUNTER))
  _beam_counter[0].inc(n)


def count(n: int = 1) -> None:
  """n more units of the running CountsProgress's work done in this process (the run's, or a
  Beam worker's): added to Beam's counter BEAM_COUNTER and, where the run's counts folder is
  known (the DirectRunner's processes), to this process's file there, rewritten at most once
  every COUNT_WRITE_SECONDS. Thread-safe: Beam runs bundles of one process in several threads."""
  _add_to_beam_counter(n)
  folder = os.environ.get(COUNTS_ENV)
  if not folder:
    return
  with _count_lock:
    if _counted['folder'] != folder:  # a new piece of work (a worker process can outlive one)
      _counted.update(folder=folder, done=0, written=time.monotonic())  # first write in 1 s
    _counted['done'] += n
    due = time.monotonic() - _counted['written'] >= COUNT_WRITE_SECONDS
  if due:
    flush()


def flush() -> None:
  """Writes this process's count now (the end of a Beam bundle: the last counts are exact).
  One writer at a time, each writing the count as it is then, so the last write holds the sum."""
  from utils import atomic

  folder = os.environ.get(COUNTS_ENV)
  with _count_lock:
    if folder and _counted['folder'] == folder and os.path.isdir(folder):
      _counted['written'] = time.monotonic()
      atomic.write(os.path.join(folder, str(os.getpid())), str(_counted['done']))


class CountsProgress(_Watch):
  """While work counted with count() runs, in this process or Beam's worker processes: the sum of
  every process's count, of `total`. `exact`: the counting flushes at the end of its work (a Beam
  DoFn's bundles), so the last line gives the sum rather than the total.

  `reported`, for a runner whose workers cannot see the run's folder: the runner's own report of
  BEAM_COUNTER so far (None while it has none); None for a runner that reports nothing while it
  runs, which one line then says once."""

  def __init__(
    self,
    node: str,
    total: float,
    describe: Callable[[float, float, float], str],
    exact: bool = False,
    reported: Optional[Callable[[], Optional[float]]] = None,
    runner: str = '',
  ):
    super().__init__(node, total, describe)
    self._folder = tempfile.mkdtemp(prefix='progress-counts-')
    self._exact = exact
    self._reported, self._runner = reported, runner
    if runner and not reported:
      report(node, f'{runner} reports no counts while it runs: no live progress for this step')

  def __enter__(self):
    os.environ[COUNTS_ENV] = self._folder
    return super().__enter__()

  def __exit__(self, *exc):
    try:
      super().__exit__(*exc)
    finally:
      os.environ.pop(COUNTS_ENV, None)
      shutil.rmtree(self._folder, ignore_errors=True)

  def done(self) -> float:
    if self._reported:
      try:
        return self._reported() or 0
      except (OSError, ValueError, KeyError):  # the runner's API did not answer: next poll
        return 0
    if self._runner:
      return 0
    done = 0
    for name in filter(str.isdigit, os.listdir(self._folder)):  # a pid: not a temporary file
      try:
        with open(os.path.join(self._folder, name)) as f:
          done += int(f.read() or 0)
      except (OSError, ValueError):  # a file being renamed into place: next poll
        continue
    return done

  def _final(self) -> float:
    counted = self._exact and (self._reported or not self._runner)
    return self.done() if counted else self._total
