"""The warm SDK worker pool without a cluster: a fake runner's control service stands in for a
TaskManager. The pool as a process (`python -m engines.worker_pool`): it listens on exactly the
address asked for, a worker it starts connects with its id and has TensorFlow loaded before any
work reaches it, ends when its control stream does, and SIGTERM leaves no process behind; a
taken port is one `error:` line. StopWorker in process: a worker whose runner still answers is
left running, one whose runner is gone is stopped."""

from concurrent import futures
import multiprocessing
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time

from apache_beam.portability.api import (
  beam_fn_api_pb2,
  beam_fn_api_pb2_grpc,
  beam_provision_api_pb2,
  beam_provision_api_pb2_grpc,
  endpoints_pb2,
)
from google.protobuf import struct_pb2
import grpc
import pytest

from engines import worker_pool

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('engines')]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class FakeRunner(beam_fn_api_pb2_grpc.BeamFnControlServicer):
  """A runner's control service: records which worker connected, holds its stream open until
  `release` is set, then ends it (as a finished job does). With `options`, its provision service
  answers them as the job's pipeline options (`provisioned`: the worker ids that asked)."""

  def __init__(self, options: dict = None):
    self.connected = queue.Queue()
    self.provisioned = queue.Queue()
    self.release = threading.Event()
    self.server = grpc.server(futures.ThreadPoolExecutor(4))
    beam_fn_api_pb2_grpc.add_BeamFnControlServicer_to_server(self, self.server)
    if options is not None:
      provision = _FakeProvision(options, self.provisioned)
      beam_provision_api_pb2_grpc.add_ProvisionServiceServicer_to_server(provision, self.server)
    self.url = f'127.0.0.1:{self.server.add_insecure_port("127.0.0.1:0")}'
    self.server.start()

  def Control(self, requests, context):
    self.connected.put(dict(context.invocation_metadata()).get('worker_id'))
    self.release.wait(120)
    yield from ()


class _FakeProvision(beam_provision_api_pb2_grpc.ProvisionServiceServicer):
  def __init__(self, options: dict, asked: queue.Queue):
    self.options, self.asked = struct_pb2.Struct(), asked
    self.options.update(options)

  def GetProvisionInfo(self, request, context):
    self.asked.put(dict(context.invocation_metadata()).get('worker_id'))
    info = beam_provision_api_pb2.ProvisionInfo(pipeline_options=self.options)
    return beam_provision_api_pb2.GetProvisionInfoResponse(info=info)


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


def _listening_addresses(pid: int) -> set:
  listing = subprocess.run(['ss', '-Hltnp'], capture_output=True, text=True, check=True).stdout
  return {line.split()[3] for line in listing.splitlines() if f'pid={pid},' in line}


def _start_request(worker_id: str, url: str, provision: bool = False):
  endpoint = endpoints_pb2.ApiServiceDescriptor(url=url)
  return beam_fn_api_pb2.StartWorkerRequest(
    worker_id=worker_id,
    control_endpoint=endpoint,
    provision_endpoint=endpoint if provision else None,
  )


def _wait_until(condition, timeout: float = 60.0) -> bool:
  deadline = time.monotonic() + timeout
  while not condition():
    if time.monotonic() > deadline:
      return False
    time.sleep(0.2)
  return True


def _alive(pid: int) -> bool:
  try:
    with open(f'/proc/{pid}/stat') as f:
      return f.read().split(') ')[-1][:1] != 'Z'
  except OSError:
    return False


@pytest.fixture(scope='module')
def pool(tmp_path_factory):
  """The pool as its own process (session and group of its own) on a free loopback port: (its
  process, port, log path)."""
  port = _free_port()
  log = tmp_path_factory.mktemp('pool') / 'pool.log'
  with open(log, 'wb') as out:
    process = subprocess.Popen(
      [sys.executable, '-m', 'engines.worker_pool', '--port', str(port), '--host', '127.0.0.1'],
      cwd=ROOT,
      env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL='3'),
      stdout=out,
      stderr=subprocess.STDOUT,
      start_new_session=True,
    )
  assert _wait_until(lambda: _listening_addresses(process.pid), 180), log.read_text()
  yield process, port, log
  if process.poll() is None:
    os.killpg(process.pid, signal.SIGKILL)


def test_the_pool_listens_on_exactly_the_address_asked_for(pool):
  process, port, _ = pool
  addresses = _listening_addresses(process.pid)
  assert addresses and all(
    re.fullmatch(rf'(\[::ffff:)?127\.0\.0\.1\]?:{port}', a) for a in addresses
  )


def test_a_worker_starts_warm_and_ends_with_its_control_stream(pool):
  process, port, log = pool
  runner = FakeRunner()
  with grpc.insecure_channel(f'127.0.0.1:{port}') as channel:
    answer = beam_fn_api_pb2_grpc.BeamFnExternalWorkerPoolStub(channel).StartWorker(
      _start_request('w-1', runner.url), timeout=60
    )
  assert answer.error == ''
  assert runner.connected.get(timeout=60) == 'w-1'
  pid = int(re.search(r'worker w-1: pid (\d+)', log.read_text()).group(1))
  with open(f'/proc/{pid}/maps') as f:
    assert 'libtensorflow' in f.read()  # loaded before any work: forked from the warm server
  runner.release.set()
  assert _wait_until(lambda: not _alive(pid), 30)
  runner.server.stop(0)


def test_a_worker_gets_the_jobs_pipeline_options_from_the_provision_service(pool):
  """As from Beam's boot program: the worker asks with its id, and the options take effect (a
  beam plugin the options name, which nothing else imports, is imported by the worker)."""
  _, port, log = pool
  plugin = 'tabnanny'
  runner = FakeRunner(options={'beam:option:beam_plugins:v1': [plugin]})
  with grpc.insecure_channel(f'127.0.0.1:{port}') as channel:
    answer = beam_fn_api_pb2_grpc.BeamFnExternalWorkerPoolStub(channel).StartWorker(
      _start_request('w-options', runner.url, provision=True), timeout=60
    )
  assert answer.error == ''
  assert runner.provisioned.get(timeout=60) == 'w-options'
  assert runner.connected.get(timeout=60) == 'w-options'
  runner.release.set()
  ended = r'worker w-options ended \(\d+\); packages it imported itself: (.*)'
  assert _wait_until(lambda: re.search(ended, log.read_text()), 30), log.read_text()[-3000:]
  assert plugin in re.search(ended, log.read_text()).group(1)
  runner.server.stop(0)


def test_a_killed_worker_leaves_the_pool_serving(pool):
  _, port, log = pool
  runner = FakeRunner()
  with grpc.insecure_channel(f'127.0.0.1:{port}') as channel:
    stub = beam_fn_api_pb2_grpc.BeamFnExternalWorkerPoolStub(channel)
    stub.StartWorker(_start_request('w-killed', runner.url), timeout=60)
    assert runner.connected.get(timeout=60) == 'w-killed'
    os.kill(int(re.search(r'worker w-killed: pid (\d+)', log.read_text()).group(1)), signal.SIGKILL)
    assert stub.StartWorker(_start_request('w-next', runner.url), timeout=60).error == ''
    assert runner.connected.get(timeout=60) == 'w-next'
  runner.release.set()
  runner.server.stop(0)


def test_a_taken_port_is_one_error_line(pool):
  _, port, _ = pool
  done = subprocess.run(
    [sys.executable, '-m', 'engines.worker_pool', '--port', str(port)],
    cwd=ROOT,
    env=dict(os.environ, PYTHONPATH=ROOT),
    capture_output=True,
    text=True,
    timeout=60,
  )
  assert done.returncode == 2
  assert done.stderr.strip().splitlines() == [
    f'error: worker pool: cannot listen on 127.0.0.1:{port}: Address already in use'
  ]


def test_sigterm_leaves_no_process_of_the_pool(pool):
  process, _, _ = pool
  runner = FakeRunner()
  with grpc.insecure_channel(f'127.0.0.1:{pool[1]}') as channel:
    beam_fn_api_pb2_grpc.BeamFnExternalWorkerPoolStub(channel).StartWorker(
      _start_request('w-2', runner.url), timeout=60
    )
  assert runner.connected.get(timeout=60) == 'w-2'
  group = [p for p in os.listdir('/proc') if p.isdigit() and _in_group(int(p), process.pid)]
  assert len(group) >= 3  # the pool, its fork server, the worker
  process.send_signal(signal.SIGTERM)
  assert process.wait(30) == 0
  assert _wait_until(lambda: not any(_alive(int(p)) for p in group), 30)
  runner.release.set()
  runner.server.stop(0)


def _in_group(pid: int, group: int) -> bool:
  try:
    return os.getpgid(pid) == group
  except ProcessLookupError:
    return False


def test_stop_worker_stops_only_workers_whose_runner_is_gone():
  """Two workers of one id (two TaskManagers number their workers alike): one on a runner that
  answers and holds its stream, one stuck on an endpoint that accepts TCP but never speaks (its
  harness waits for a channel). Stopped while both answer: both left; the stuck one's endpoint
  closed, stopped again: it alone is stopped, the other ends with its stream, exit 0."""
  pool = worker_pool.WarmWorkerPool(multiprocessing.get_context('forkserver'), stop_grace_s=1.0)
  runner = FakeRunner()
  silent = socket.socket()
  silent.bind(('127.0.0.1', 0))
  silent.listen()
  started = []
  for url in (runner.url, f'127.0.0.1:{silent.getsockname()[1]}'):
    before = set(multiprocessing.active_children())
    assert pool.StartWorker(_start_request('1-1', url), None).error == ''
    (process,) = set(multiprocessing.active_children()) - before
    started.append(process)
  live, stuck = started
  assert runner.connected.get(timeout=60) == '1-1'
  pool.stop('1-1')
  assert live.is_alive() and stuck.is_alive()
  silent.close()
  pool.stop('1-1')
  assert not stuck.is_alive() and stuck.exitcode == -signal.SIGTERM
  assert live.is_alive()
  runner.release.set()
  live.join(30)
  assert live.exitcode == 0
  runner.server.stop(0)
