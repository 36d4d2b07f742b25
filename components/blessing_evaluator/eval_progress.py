"""The Evaluator's live progress: eval examples counted into the confusion matrix, of the eval
split's records; runs without TFX.

TFMA's combiner runs in the run's process (Beam in_memory) or in Beam's worker processes, which
log nowhere the run's terminal sees. So each process that counts writes its count to a file of
its own in a folder named by an environment variable (worker processes inherit it) at most once
a second, and the executor's watcher sums the files and reports through contracts.progress.
Without the variable (remote workers, a test calling TFMA directly) counting costs one test.
"""

import os
import tempfile
import threading
import time
from typing import List

from contracts import atomic, evaluation, progress

FOLDER_ENV = 'TFRP_EVALUATOR_PROGRESS_DIR'
WRITE_SECONDS = 1.0
POLL_SECONDS = 1.0
_counted = {'examples': 0, 'written': 0.0}


def count(model_name: str) -> None:
  """One example of `model_name` went into the matrix (only the candidate's are counted)."""
  folder = os.environ.get(FOLDER_ENV)
  if not folder or model_name not in ('', evaluation.CANDIDATE):
    return
  _counted['examples'] += 1
  now = time.monotonic()
  if now - _counted['written'] >= WRITE_SECONDS and os.path.isdir(folder):
    _counted['written'] = now
    atomic.write(os.path.join(folder, str(os.getpid())), str(_counted['examples']))


def record_count(files: List[str]) -> int:
  """The records in TFRecord shards (GZIP by their .gz name), counted by tf.data in C++."""
  import tensorflow as tf

  total = 0
  for path in files:
    dataset = tf.data.TFRecordDataset(path, 'GZIP' if path.endswith('.gz') else '')
    total += int(dataset.reduce(0, lambda n, _: n + 1))
  return total


class Watch:
  """While TFMA runs: `node: D of T eval examples, R/s` from the counting processes' files."""

  def __init__(self, node: str, total: int):
    self._node, self._total = node, total
    self._folder = tempfile.mkdtemp(prefix='evaluator-progress-')
    self._stop = threading.Event()
    self._thread = threading.Thread(target=self._watch, daemon=True)
    self._started = time.monotonic()

  def __enter__(self):
    os.environ[FOLDER_ENV] = self._folder
    _counted.update(examples=0, written=0.0)
    self._thread.start()
    return self

  def __exit__(self, *exc):
    self._stop.set()
    self._thread.join()
    os.environ.pop(FOLDER_ENV, None)
    for name in os.listdir(self._folder):
      os.remove(os.path.join(self._folder, name))
    os.rmdir(self._folder)
    if exc[0] is None:
      self._report(self._total, final=True)

  def _done(self) -> int:
    done = 0
    for name in filter(str.isdigit, os.listdir(self._folder)):  # a pid: not a temporary file
      try:
        with open(os.path.join(self._folder, name)) as f:
          done += int(f.read() or 0)
      except (OSError, ValueError):  # a file being renamed into place: next poll
        continue
    return done

  def _watch(self) -> None:
    shown = 0
    while not self._stop.wait(POLL_SECONDS):
      done = min(self._done(), self._total)
      if done != shown:
        shown = done
        self._report(done, final=False)

  def _report(self, done: int, final: bool) -> None:
    rate = done / max(time.monotonic() - self._started, 1e-9)
    text = f'{done:,} of {self._total:,} eval examples evaluated, {rate:,.0f}/s'
    progress.report(self._node, text, final=final)
