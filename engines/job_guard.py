"""No silent wait for a Beam job on Flink: while a component's job runs, a thread looks at the
cluster every second and ends the job, with one line naming what was waited for and the log to
read, when

- a process of the local cluster (`make flink-up`'s) died: its JobManager, Beam's job server or
  the SDK worker pool (named within a second or two);
- a TaskManager logged Beam's 'Still waiting for startup of environment' (an SDK worker asked
  of the pool did not connect within Beam's own 2 minutes);
- the job waited longer than WAIT_SECONDS for a task slot, kept restarting that long, was not
  submitted by the job service that long, or the JobManager's REST API did not answer that long.

The job is cancelled (nothing of the run is left running on the cluster) and the thread that
entered the guard gets EngineError(the line).
"""

import ctypes
import glob
import os
import threading
import time
from typing import Optional
import urllib.request

from engines import common, flink, flink_rest

# The bound, in seconds, on every wait above: Flink's own recovery from a lost TaskManager (8 s
# heartbeat timeout, then restarts 1, 2, 4… s apart) fits well inside it.
WAIT_SECONDS = float(os.environ.get('TFRP_ENGINE_WAIT_SECONDS', '120'))
POLL_SECONDS = 1.0
STILL_WAITING = b'Still waiting for startup of environment'


class _Stopped(BaseException):
  """Raised in the guarded thread (no `except Exception` of Beam's or gRPC's catches it)."""


class JobGuard:
  """`with JobGuard(master, job_name):` around the code that runs the Beam job named job_name."""

  def __init__(self, master: str, job_name: str, wait_seconds: float = WAIT_SECONDS):
    self.master, self.job_name, self.wait_seconds = master, job_name, wait_seconds
    state = common.read_state(flink.NAME) or {}
    local = state.get('rest', '').replace('127.0.0.1', 'localhost')
    self.local = state if master.replace('127.0.0.1', 'localhost') == local else {}
    self.reason: Optional[str] = None
    self._done, self._firing = threading.Event(), threading.Lock()
    self._since = {}  # what is being waited for → when the wait began
    self._job_seen = False

  def __enter__(self):
    self._thread_id = threading.get_ident()
    self._log_sizes = {path: os.path.getsize(path) for path in self._task_manager_logs()}
    self._started = time.monotonic()
    self._watcher = threading.Thread(target=self._watch, name='flink-job-guard', daemon=True)
    self._watcher.start()
    return self

  def __exit__(self, kind, error, traceback):
    try:
      with self._firing:
        self._done.set()
        # A stop raised just before this point lands here, or is still pending: drop it.
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._thread_id), None)
      self._watcher.join()
    except _Stopped:
      pass
    if self.reason:
      raise common.EngineError(self.reason) from None
    return False

  def _watch(self) -> None:
    while not self._done.wait(POLL_SECONDS):
      reason = self.check()
      if reason:
        self.reason = reason
        self._cancel()
        with self._firing:
          if not self._done.is_set():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
              ctypes.c_ulong(self._thread_id), ctypes.py_object(_Stopped)
            )
        return

  def _waited(self, what: str, waiting: bool) -> bool:
    """Whether `what` has been waited for longer than the bound (and note that it is)."""
    if not waiting:
      self._since.pop(what, None)
      return False
    return time.monotonic() - self._since.setdefault(what, time.monotonic()) > self.wait_seconds

  def check(self) -> Optional[str]:
    """One look at the cluster and the job: the line that ends it, or None."""
    if self.local:
      alive = flink.processes(self.local)
      for role, what in (
        ('jobmanager', 'the Flink JobManager'),
        ('job_server', "Beam's Flink job server"),
        ('worker_pool', f'the SDK worker pool ({self.local.get("worker_pool")})'),
      ):
        if not alive[role]:
          return f'{what} died while the job {self.job_name} ran; see {flink.log_of(role)}'
      waiting_log = self._still_waiting_log()
      if waiting_log:
        return (
          f'the job {self.job_name} waited over 2 min for an SDK worker from the pool at '
          f'{self.local.get("worker_pool")}; see {waiting_log}'
        )
    try:
      jobs = [
        job
        for job in flink_rest.rest('/jobs/overview', master=self.master)['jobs']
        if job['name'] == self.job_name
      ]
    except (OSError, ValueError) as e:
      if self._waited('rest', True):
        return (
          f'the Flink JobManager at {self.master} has not answered for {self.wait_seconds:.0f} s '
          f'({e}); see its log'
        )
      return None
    self._waited('rest', False)
    if not jobs:
      if not self._job_seen and self._waited('submission', True):
        return (
          f'the job service did not submit the job {self.job_name} within '
          f'{self.wait_seconds:.0f} s; see {flink.log_of("job_server")}'
        )
      return None
    self._job_seen = True
    self._waited('submission', False)
    job = max(jobs, key=lambda job: job['start-time'])
    self._jid = job['jid']
    tasks = job.get('tasks', {})
    if self._waited('slot', tasks.get('scheduled', 0) > 0):
      return (
        f'the job {self.job_name} waited {self.wait_seconds:.0f} s for a task slot of the Flink '
        f'cluster at {self.master}; see {flink.log_of("jobmanager")}'
      )
    if self._waited('restart', job['state'] in ('RESTARTING', 'FAILING')):
      return (
        f'the job {self.job_name} kept failing and restarting for {self.wait_seconds:.0f} s; '
        f'see {flink.log_of("jobmanager")}'
      )
    return None

  def _task_manager_logs(self):
    if not self.local:
      return []
    return glob.glob(os.path.join(common.log_dir(flink.NAME), 'flink-*-taskexecutor-*.log'))

  def _still_waiting_log(self) -> Optional[str]:
    """A TaskManager log that said STILL_WAITING since the guard began."""
    for path in self._task_manager_logs():
      try:
        with open(path, 'rb') as f:
          f.seek(self._log_sizes.get(path, 0))
          if STILL_WAITING in f.read():
            return path
          self._log_sizes[path] = max(0, f.tell() - len(STILL_WAITING))
      except OSError:
        continue
    return None

  def _cancel(self) -> None:
    """Cancel the job on the cluster (when its JobManager still answers)."""
    jid = getattr(self, '_jid', None)
    if not jid:
      return
    url = self.master if '://' in self.master else f'http://{self.master}'
    request = urllib.request.Request(f'{url}/jobs/{jid}?mode=cancel', method='PATCH')
    try:
      urllib.request.urlopen(request, timeout=3).close()
    except OSError:
      pass
