"""One run per output at a time: an advisory lock on `<local dir>/run.lock` (beside metadata.sqlite).

flock(2) locks belong to the open file, so the OS drops the lock when the process that holds it
dies, SIGKILL included: a lock never outlives its run and nothing has to clean it up. The file
holds the owner's PID for the message a second run prints. Readers (`lineage`, `verify`, the run
report) take no lock: SQLite lets them read while a run writes.

Because every run holds the lock before it looks at ML Metadata, the executions that crash
recovery (metadata/recovery.py) finds RUNNING belong to a run that is gone.
"""

import fcntl
import os
import sys

from contracts.errors import UserError

LOCK_FILE = 'run.lock'
_held = {}  # lock file → descriptor, held until this process ends


def hold(folder: str, what: str, wait: bool = False) -> None:
  """Takes the lock on `folder` for the rest of this process, or raises UserError naming the
  PID that holds it (`wait`: blocks until that run ends). `what` names the folder for the user."""
  path = os.path.realpath(os.path.join(folder, LOCK_FILE))
  if path in _held:
    return
  descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by child processes
  try:
    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
  except BlockingIOError:
    owner = _owner(descriptor)
    if not wait:
      os.close(descriptor)
      raise UserError(
        f'{what}: another run ({owner}) is using it; wait for it to end or add --wait'
      ) from None
    print(f'waiting for the other run on {what} ({owner}) to end', file=sys.stderr, flush=True)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
  os.ftruncate(descriptor, 0)
  os.pwrite(descriptor, f'{os.getpid()}\n'.encode(), 0)
  _held[path] = descriptor


def _owner(descriptor: int) -> str:
  pid = os.pread(descriptor, 32, 0).decode(errors='replace').strip()
  return f'PID {pid}' if pid.isdigit() else 'PID not yet written'
