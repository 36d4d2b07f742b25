"""Ctrl-C or SIGTERM during a local run, seen by every part of the process.

cli/run.py's handler of both signals calls `note` (REQUESTED set, the signal kept), then raises
KeyboardInterrupt as Python would for Ctrl-C: SIGTERM (`kill`, systemd, Kubernetes, a CI job's
timeout) ends a run as Ctrl-C does, summary and `last_run.json` written. Keras 3 can swallow that
exception: when it lands in fit's conversion of the logs to floats (a bare `except:` around
`float(value)`, which is where the main thread waits for each step), training goes on. The
Trainer's StopOnInterrupt callback (trainer/task.py) raises it again at the next batch.
"""

import signal
import threading
from typing import List

REQUESTED = threading.Event()
SIGNALS = (signal.SIGINT, signal.SIGTERM)  # what stops a run
_RECEIVED: List[int] = []  # the last of SIGNALS noted since `forget`


def note(signum: int) -> None:
  """What a handler of SIGNALS does before it raises KeyboardInterrupt."""
  _RECEIVED[:] = [signum]
  REQUESTED.set()


def received() -> str:
  """The name of the signal that stopped the run: 'SIGTERM', or 'SIGINT' (Ctrl-C; also for a
  KeyboardInterrupt no handler noted)."""
  return signal.Signals(_RECEIVED[0]).name if _RECEIVED else signal.SIGINT.name


def forget() -> None:
  """A new run: no stop requested, no signal received."""
  REQUESTED.clear()
  _RECEIVED.clear()
