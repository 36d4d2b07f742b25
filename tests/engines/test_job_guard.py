"""engines.job_guard against a stand-in for Flink's REST API (no cluster): a job that waits for a
slot, or is never submitted, past the bound ends the guarded code with one line and is
cancelled; a job that finishes is left alone."""

import http.server
import json
import threading
import time

import pytest

from engines import common, job_guard

JOB = 'tfrp-statisticsgen-0123abcd'


@pytest.fixture
def rest():
  """A REST stand-in answering /jobs/overview with `jobs` (a list to fill) and recording PATCHes."""
  jobs, patched = [], []

  class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
      body = json.dumps({'jobs': jobs}).encode()
      self.send_response(200)
      self.send_header('Content-Length', str(len(body)))
      self.end_headers()
      self.wfile.write(body)

    def do_PATCH(self):
      patched.append(self.path)
      self.send_response(202)
      self.send_header('Content-Length', '0')
      self.end_headers()

    def log_message(self, *args):
      pass

  server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  yield f'127.0.0.1:{server.server_address[1]}', jobs, patched
  server.shutdown()


def _job(state: str, **tasks) -> dict:
  return {'jid': 'j1', 'name': JOB, 'state': state, 'start-time': 1, 'tasks': tasks}


def _guarded(master: str, seconds: float, wait_seconds: float = 1.0) -> float:
  """Busy Python code under the guard for up to `seconds`: how long it ran."""
  started = time.monotonic()
  with job_guard.JobGuard(master, JOB, wait_seconds=wait_seconds):
    while time.monotonic() - started < seconds:
      time.sleep(0.05)
  return time.monotonic() - started


def test_a_job_waiting_for_a_slot_past_the_bound_is_ended_and_cancelled(rest):
  master, jobs, patched = rest
  jobs.append(_job('RUNNING', running=1, scheduled=1))
  with pytest.raises(common.EngineError, match=f'the job {JOB} waited 1 s for a task slot'):
    _guarded(master, seconds=30.0)
  assert patched == ['/jobs/j1?mode=cancel']


def test_a_job_never_submitted_names_the_job_service(rest):
  master, _, patched = rest
  with pytest.raises(common.EngineError, match='the job service did not submit the job'):
    _guarded(master, seconds=30.0)
  assert patched == []  # nothing to cancel


def test_a_job_that_keeps_restarting_is_ended(rest):
  master, jobs, _ = rest
  jobs.append(_job('RESTARTING', created=2))
  with pytest.raises(common.EngineError, match='kept failing and restarting'):
    _guarded(master, seconds=30.0)


def test_a_running_job_is_left_alone(rest):
  master, jobs, patched = rest
  jobs.append(_job('RUNNING', running=2))
  assert _guarded(master, seconds=3.0) >= 3.0
  jobs[0] = _job('FINISHED', finished=2)
  assert _guarded(master, seconds=2.5) >= 2.5
  assert patched == []
