"""The serving check's process: `python -m components.serving_check.probe --serve`, a worker
that imports TensorFlow (~3 s) once and then answers checks read from its stdin, one line each,
loading each candidate model anew (tf.saved_model.load) in a process that has imported none of
the project's model code (the trainer, a --model file) and shares nothing with the one that
trained it. `start()` launches it ahead of need, so that its import overlaps the Evaluator (a local
run starts it when the Evaluator executes, cli/run.py); `ask()` hands it a check (launching one if
none is alive). A run ends its worker (`release()`); inside `kept()` (`run --watch`) the worker
outlives each run and ends with the block. A worker also ends when its stdin closes: when the
process that launched it exits, even by SIGKILL. Imports no TensorFlow.
"""

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from typing import List, Optional

from utils import fingerprint

_worker: Optional[subprocess.Popen] = None
_kept = [False]  # inside kept(): the worker outlives each run


def launch() -> subprocess.Popen:
  """A new worker waiting for its first check (the project's root importable, TensorFlow's C++
  log and Python warnings off, its stderr in an unnamed temporary file)."""
  env = dict(
    os.environ,
    PYTHONPATH=os.pathsep.join(filter(None, [fingerprint.ROOT, os.environ.get('PYTHONPATH')])),
    TF_CPP_MIN_LOG_LEVEL='3',
    PYTHONWARNINGS='ignore',
  )
  command = [sys.executable, '-m', 'components.serving_check.probe', '--serve']
  errors = tempfile.TemporaryFile()
  process = subprocess.Popen(
    command,
    env=env,
    cwd=os.environ.get('TMPDIR') or None,
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    stderr=errors,
  )
  process.errors = errors
  atexit.register(_end, process)
  return process


def start() -> subprocess.Popen:
  """Starts a worker unless one is alive; returns the live one."""
  global _worker
  if _worker is None or _worker.poll() is not None:
    _worker = launch()
  return _worker


def ask(argv: List[str], cwd: str, timeout: float) -> str:
  """One check by the worker (probe.run's `argv`, in `cwd`, TMPDIR as here): '' once answered,
  else why not in one line (the check's error; the worker's last line of error as it ended; no
  answer within `timeout` seconds: the worker ended)."""
  worker = start()
  offset = worker.errors.tell()
  request = {'argv': argv, 'cwd': cwd, 'tmpdir': os.environ.get('TMPDIR', '')}
  try:
    worker.stdin.write((json.dumps(request) + '\n').encode())
    worker.stdin.flush()
  except BrokenPipeError:
    pass  # it ended already: its exit and last line below
  deadline = time.monotonic() + timeout
  while worker.poll() is None:
    if select.select([worker.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
      answer = worker.stdout.readline()
      if answer:
        return json.loads(answer).get('error', '')
    elif time.monotonic() >= deadline:
      stop()
      return f'no answer within {timeout:g} s (load and check)'
  worker.errors.seek(offset)
  lines = worker.errors.read().decode('utf-8', 'replace').strip().splitlines() or ['no output']
  stop()
  return f'the serving process failed (exit {worker.returncode}): {lines[-1]}'


def _end(process: subprocess.Popen) -> None:
  if process.poll() is None:
    process.kill()
    process.wait()
  for stream in (process.stdin, process.stdout, process.errors):
    stream.close()


def stop() -> None:
  """Ends the worker, at once (not after its TensorFlow import or its check)."""
  global _worker
  worker, _worker = _worker, None
  if worker is not None:
    _end(worker)


def release() -> None:
  """A run's end: ends its worker, unless inside kept()."""
  if not _kept[0]:
    stop()


@contextlib.contextmanager
def kept():
  """Within: the worker outlives each run (`run --watch`); it ends when the block does, Ctrl-C
  and errors included."""
  _kept[0] = True
  try:
    yield
  finally:
    _kept[0] = False
    stop()
