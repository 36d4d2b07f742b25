"""The serving check's fresh process, started ahead of need: `start()` launches
`python -m components.serving_check.probe --wait`, which imports TensorFlow (~3 s) and then waits
for one request on its stdin; the executor `take()`s it when the check runs, so those seconds
overlap the Evaluator (a local run starts it when the Evaluator executes, cli/run.py). The process
has loaded no model and shares nothing with the one that trained it; without a started one, the
executor starts its own the same way. Imports no TensorFlow.
"""

import json
import os
import subprocess
import sys
from typing import List, Optional

from utils import fingerprint

_started: Optional[subprocess.Popen] = None


def launch() -> subprocess.Popen:
  """A new probe process waiting for its request (the project's root importable, TensorFlow's
  C++ log and Python warnings off, in the temporary folder of the moment)."""
  env = dict(
    os.environ,
    PYTHONPATH=os.pathsep.join(filter(None, [fingerprint.ROOT, os.environ.get('PYTHONPATH')])),
    TF_CPP_MIN_LOG_LEVEL='3',
    PYTHONWARNINGS='ignore',
  )
  command = [sys.executable, '-m', 'components.serving_check.probe', '--wait']
  return subprocess.Popen(
    command,
    env=env,
    cwd=os.environ.get('TMPDIR') or None,
    stdin=subprocess.PIPE,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.PIPE,
  )


def start() -> subprocess.Popen:
  """Starts a waiting probe process unless one is waiting already; returns the waiting one."""
  global _started
  if _started is None or _started.poll() is not None:
    _started = launch()
  return _started


def take() -> subprocess.Popen:
  """The waiting process started by start() if it is still alive, else a new one."""
  global _started
  process, _started = _started, None
  return process if process is not None and process.poll() is None else launch()


def stop() -> None:
  """Ends a started process nobody took (the run ended before its serving check) at once, not
  after its TensorFlow import."""
  global _started
  process, _started = _started, None
  if process is not None and process.poll() is None:
    process.kill()
    process.wait()


def request(argv: List[str], cwd: str) -> bytes:
  """The one line a waiting probe reads: its arguments and working folder."""
  return (json.dumps({'argv': argv, 'cwd': cwd}) + '\n').encode()
