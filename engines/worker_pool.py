"""A warm Beam SDK worker pool (EXTERNAL environment):

  python -m engines.worker_pool --port N [--host 127.0.0.1]

Beam's own pool (apache_beam.runners.worker.worker_pool_main) binds every interface and starts
each SDK worker as a fresh `python` that imports TensorFlow, TFX, TFMA and TFDV again for every
job. This one imports them once, in a fork server (multiprocessing's `forkserver`, preloaded
with WARM_MODULES), and forks each worker from it. A worker is still a process of its own: no
GIL shared with other workers, and a crash, a leak, a job's pipeline options, pickled main
session or sys.path additions end with it. The project's own modules are not preloaded: each
worker imports them (~0.1 s), so an edit reaches the next job without a restart of the pool.
Each worker is made as Beam's boot program makes one: the job's pipeline options (its S3
endpoint, beam plugins, log level) from the runner's provision service, then sdk_worker_main's
harness; so the containerised cluster's sidecars run this pool too.

The pool listens on exactly --host (default loopback) once the fork server is warm, so a port
that answers means workers start warm. StopWorker: Beam's worker ids are not unique across
TaskManagers that share a pool ('1-1' on each), so a stopped id's workers are given
STOP_GRACE_S to end on their own (a worker ends when its control stream does) and only those
whose control endpoint no longer answers are then killed: never another TaskManager's live one.
"""

import argparse
from concurrent import futures
import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
import traceback
from typing import Dict, List, NamedTuple
import warnings

warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

from apache_beam.portability.api import beam_fn_api_pb2, beam_fn_api_pb2_grpc  # noqa: E402
import grpc  # noqa: E402

WARM_MODULES = (
  'apache_beam.runners.worker.sdk_worker',
  'tensorflow',
  'tfx.v1',
  'tfx_bsl.public.beam',
  'tensorflow_data_validation',
  'tensorflow_model_analysis',
  'PIL.Image',
)
STOP_GRACE_S = 15.0
PROVISION_TIMEOUT_S = 60.0
DEFAULT_HOST = '127.0.0.1'
_LOG = logging.getLogger('engines.worker_pool')


def worker_environment(request, timeout: float = PROVISION_TIMEOUT_S) -> Dict[str, str]:
  """What Beam's boot program gives sdk_worker_main for a StartWorker request: the runner's
  endpoints and, from its provision service, the job's pipeline options (S3 endpoint, plugins,
  log level) and capabilities."""
  from apache_beam.portability.api import (
    beam_provision_api_pb2,
    beam_provision_api_pb2_grpc,
    endpoints_pb2,
  )
  from google.protobuf import json_format

  info = beam_provision_api_pb2.ProvisionInfo()
  if request.provision_endpoint.url:
    with grpc.insecure_channel(request.provision_endpoint.url) as channel:
      info = (
        beam_provision_api_pb2_grpc.ProvisionServiceStub(channel)
        .GetProvisionInfo(
          beam_provision_api_pb2.GetProvisionInfoRequest(),
          metadata=[('worker_id', request.worker_id)],
          timeout=timeout,
        )
        .info
      )
  descriptor = lambda url: str(endpoints_pb2.ApiServiceDescriptor(url=url))
  environment = {
    'WORKER_ID': request.worker_id,
    'CONTROL_API_SERVICE_DESCRIPTOR': descriptor(
      info.control_endpoint.url or request.control_endpoint.url
    ),
    'PIPELINE_OPTIONS': json_format.MessageToJson(info.pipeline_options),
    'RUNNER_CAPABILITIES': ' '.join(info.runner_capabilities),
  }
  logging_url = info.logging_endpoint.url or request.logging_endpoint.url
  if logging_url:  # the worker's log records go to the runner's log, as the boot program's do
    environment['LOGGING_API_SERVICE_DESCRIPTOR'] = descriptor(logging_url)
  if info.HasField('status_endpoint'):
    environment['STATUS_API_SERVICE_DESCRIPTOR'] = str(info.status_endpoint)
  return environment


def run_worker(environment: Dict[str, str]) -> None:
  """A forked worker: Beam's SDK harness made by sdk_worker_main from `environment`, as the boot
  program's python runs it; the process ends when the harness does (no wait for threads it
  leaves behind)."""
  from apache_beam.runners.worker import sdk_worker_main

  warm, code, log_handler = set(sys.modules), 1, None
  worker_id = environment['WORKER_ID']
  try:
    log_handler, harness, _ = sdk_worker_main.create_harness(environment)
    harness.run()
    code = 0
  except Exception:  # the traceback goes to the pool's log; the runner sees the stream end
    traceback.print_exc()
  finally:
    if log_handler:
      log_handler.close()
    cold = sorted({name.split('.')[0] for name in set(sys.modules) - warm})
    print(
      f'worker {worker_id} ended ({code}); packages it imported itself: {cold}', file=sys.stderr
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def report_cold_modules() -> None:
  """In a forked probe: a warning line for each WARM_MODULES the fork server could not import
  (multiprocessing skips those silently); exit 3 when any."""
  cold = [name for name in WARM_MODULES if name not in sys.modules]
  if cold:
    print(f'warning: worker pool: not preloaded (workers import them): {cold}', file=sys.stderr)
  sys.stderr.flush()
  os._exit(3 if cold else 0)


def endpoint_answers(url: str, timeout: float = 1.0) -> bool:
  """Whether a TCP connection to `host:port` (a runner's control endpoint) is accepted."""
  host, _, port = url.rpartition(':')
  try:
    with socket.create_connection((host.strip('[]'), int(port)), timeout=timeout):
      return True
  except (OSError, ValueError):
    return False


class Worker(NamedTuple):
  process: multiprocessing.process.BaseProcess
  control_url: str


class WarmWorkerPool(beam_fn_api_pb2_grpc.BeamFnExternalWorkerPoolServicer):
  """Beam's BeamFnExternalWorkerPool service: StartWorker forks a worker from the warm fork
  server; StopWorker stops a worker whose runner is gone (see the module's docstring)."""

  def __init__(self, context, stop_grace_s: float = STOP_GRACE_S):
    self._context = context
    self._stop_grace_s = stop_grace_s
    self._workers: Dict[str, List[Worker]] = {}
    self._lock = threading.Lock()

  def StartWorker(self, request, unused_context):
    url, worker_id = request.control_endpoint.url, request.worker_id
    try:
      process = self._context.Process(
        target=run_worker, args=(worker_environment(request),), name=f'sdk-worker-{worker_id}'
      )
      process.start()
    except Exception:
      return beam_fn_api_pb2.StartWorkerResponse(error=traceback.format_exc())
    with self._lock:
      self._prune()
      self._workers.setdefault(worker_id, []).append(Worker(process, url))
    _LOG.info('worker %s: pid %d, control %s', worker_id, process.pid, url)
    return beam_fn_api_pb2.StartWorkerResponse()

  def StopWorker(self, request, unused_context):
    threading.Thread(target=self.stop, args=(request.worker_id,), daemon=True).start()
    return beam_fn_api_pb2.StopWorkerResponse()

  def stop(self, worker_id: str) -> None:
    """The workers of `worker_id` given the grace to end; then those whose runner is gone are
    stopped and those whose runner answers left running."""
    with self._lock:
      workers = list(self._workers.get(worker_id, []))
    deadline = time.monotonic() + self._stop_grace_s
    for worker in workers:
      worker.process.join(max(0.0, deadline - time.monotonic()))
    for worker in workers:
      pid = worker.process.pid
      if not worker.process.is_alive():
        continue
      if endpoint_answers(worker.control_url):
        _LOG.info('worker %s (pid %d): its runner still answers: left running', worker_id, pid)
      else:
        _LOG.warning('worker %s (pid %d): its runner is gone: stopped', worker_id, pid)
        stop(worker.process)
    with self._lock:
      self._prune()

  def _prune(self) -> None:
    """Forget the workers that ended (the lock held)."""
    for worker_id in list(self._workers):
      alive = [w for w in self._workers[worker_id] if w.process.is_alive()]
      if alive:
        self._workers[worker_id] = alive
      else:
        del self._workers[worker_id]

  def stop_all(self) -> None:
    with self._lock:
      workers = [w for ws in self._workers.values() for w in ws]
    for worker in workers:
      stop(worker.process)


def stop(process, grace: float = 5.0) -> None:
  """SIGTERM, then SIGKILL after `grace` seconds."""
  process.terminate()
  process.join(grace)
  if process.is_alive():
    process.kill()
    process.join(2.0)


def bind_address(host: str, port: int) -> str:
  return f'[{host}]:{port}' if ':' in host else f'{host}:{port}'


def bind_error(host: str, port: int) -> str:
  """Why host:port cannot be listened on ('' when it can). SO_REUSEADDR, as gRPC's own listener
  sets it: the connections of a pool stopped seconds ago (TIME_WAIT) do not hold the port, a
  listening socket does."""
  family = socket.AF_INET6 if ':' in host else socket.AF_INET
  with socket.socket(family) as s:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
      s.bind((host, port))
      return ''
    except OSError as e:
      return e.strerror or str(e)


def warm_context():
  """A forkserver context preloaded with WARM_MODULES, its server started and warm (a probe
  process forked from it has ended)."""
  context = multiprocessing.get_context('forkserver')
  context.set_forkserver_preload(list(WARM_MODULES))
  probe = context.Process(target=report_cold_modules, name='warm-probe')
  probe.start()
  probe.join()
  return context


def serve(host: str, port: int, stop_event: threading.Event) -> int:
  """Warm the fork server, listen on exactly host:port, serve until stop_event; an exit code."""
  address = bind_address(host, port)
  error = bind_error(host, port)  # before the warm-up's seconds
  if error:
    print(f'error: worker pool: cannot listen on {address}: {error}', file=sys.stderr)
    return 2
  started = time.monotonic()
  context = warm_context()
  _LOG.info('fork server warm in %.1f s: %s', time.monotonic() - started, ', '.join(WARM_MODULES))
  pool = WarmWorkerPool(context)
  server = grpc.server(
    futures.ThreadPoolExecutor(max_workers=16),
    # no SO_REUSEPORT: a second pool on the same port is an error, not a silent twin
    options=[('grpc.so_reuseport', 0)],
  )
  beam_fn_api_pb2_grpc.add_BeamFnExternalWorkerPoolServicer_to_server(pool, server)
  try:
    server.add_insecure_port(address)
  except RuntimeError:  # taken during the warm-up
    print(f'error: worker pool: cannot listen on {address}: taken meanwhile', file=sys.stderr)
    return 2
  server.start()
  _LOG.info('listening on %s', address)
  while not stop_event.wait(1.0):
    pass
  server.stop(1.0)
  pool.stop_all()
  _LOG.info('stopped')
  return 0


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(
    prog='python -m engines.worker_pool', description=__doc__.split('\n\n')[0]
  )
  parser.add_argument('--port', type=int, required=True, help='the port to listen on')
  parser.add_argument(
    '--host',
    default=DEFAULT_HOST,
    help=f'the address to listen on, exactly (default {DEFAULT_HOST}; a container: its own)',
  )
  args = parser.parse_args(argv)
  logging.basicConfig(level=logging.INFO, format='%(asctime)s worker pool: %(message)s')
  # The fork server and its workers inherit these (a user's own settings win).
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
  os.environ.setdefault('PYTHONWARNINGS', 'ignore::FutureWarning')
  stop_event = threading.Event()
  for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda *_: stop_event.set())
  return serve(args.host, args.port, stop_event)


if __name__ == '__main__':
  sys.exit(main())
