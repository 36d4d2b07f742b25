"""The Trainer's training input on tf.data service: read, parse and decode on other CPUs.

  python -m trainer.input_service dispatcher [--port 5050] [--work-dir DIR]
  python -m trainer.input_service worker --dispatcher grpc://HOST:5050 [--port 5051]
      [--worker-address HOST:PORT]

Both block until SIGTERM or SIGINT (then exit 0). With custom_config `input_service`
(pipeline.py --input-service grpc://HOST:PORT) the Trainer hands its whole training pipeline —
shard list, shuffle, repeat, read, batch, parse, decode (trainer/shards.py, image_input.py,
unchanged) — to the service (`distribute`), and receives ready uint8 batches; evaluation stays
local. How to run it and how many workers: docs/input_service.md.

Choices, and why (2 cores, 224x224 JPEGs, batch 64: `python -m bench.input_service`,
docs/input_service.json and docs/input_service.md; another test suite shared the machine, so
the figures of three runs are given where they moved):
- distributed_epoch (ShardingPolicy.DYNAMIC): the dispatcher deals the shards to the workers
  one at a time, every pass over the shard list exactly once across all workers; a fast worker
  takes more. parallel_epochs would have each worker read every shard (with 2 workers every
  record twice per pass) and was no faster: 1.01x, 0.75x, 1.02x of distributed_epoch.
- The repeat runs on the service too: the stream never drains between passes, and each
  worker keeps its own shuffle buffer, as in-process.
- A worker lost mid-pass: distributed_epoch is at-most-once, so the shards that worker held in
  this pass (up to 4 open shards and its shuffle buffer) are lost for this pass, and the other
  workers go on serving every following pass. Training continues, without an error
  (tests/trainer/test_input_service.py kills a worker during fit).
- Batches travel uncompressed: tf.data's default ('AUTO' = snappy) costs CPU on both sides
  for little gain on decoded pixels: 0.74x (0.51x, 0.71x) the rate, 724 vs 478 µs of CPU per
  example in all, 178 vs 90 µs on the trainer. Smaller elements (batches of 8 or 16 rebatched
  to 64 by the trainer) were slower too (0.83-0.85x in a one-off comparison).
- Several trainers (MultiWorkerMirroredStrategy) share one job, named after the run's
  model_run_dir (the same on every trainer), first come first served: each trainer's share is
  what it pulls, together exactly the data. Measured once against the alternatives (two
  consumers in one process, 2 workers of one core each, median of 3 rounds of 4 s):
  shared job 3,408 examples/s together, coordinated reads (consumer_index/num_consumers,
  lock-step rounds) 2,592, each trainer its own job over its own shards 2,576.
- The dispatcher is asked for its workers (its GetWorkers RPC, 3 s deadline) before the
  Trainer reads anything and before a worker starts: tf.data's own clients and workers keep
  retrying an unreachable dispatcher (workers for an hour), and a bare TCP probe succeeds
  against anything that listens (a proxy, another server).
"""

import argparse
import hashlib
import logging
import signal
import socket
import sys
import threading
from typing import List, Optional, Tuple
import urllib.parse

PROBE_SECONDS = 3.0
DISPATCHER_PORT, WORKER_PORT = 5050, 5051
DISTRIBUTED_EPOCH = 'distributed_epoch'
HINT = (
  'more tf.data service workers (python -m trainer.input_service worker): each adds what '
  'one worker delivers; docs/input_service.md says how many'
)


class Unreachable(ValueError):
  """No tf.data service dispatcher answers at the address: one line for the user."""


def parse_address(service: str) -> Tuple[str, int]:
  """'grpc://HOST:PORT' → (HOST, PORT); ValueError with the expected form otherwise."""
  parts = urllib.parse.urlsplit(service)
  try:
    port = parts.port
  except ValueError:
    port = None
  if parts.scheme != 'grpc' or not parts.hostname or not port or parts.path or parts.query:
    raise ValueError(f'{service!r} is not grpc://HOST:PORT')
  return parts.hostname, port


def _strings(message: bytes, field: int) -> List[bytes]:
  """The length-delimited values of `field` in a serialized protobuf message (top level)."""
  values, at = [], 0

  def varint():
    nonlocal at
    value = shift = 0
    while True:
      byte = message[at]
      at += 1
      value |= (byte & 0x7F) << shift
      shift += 7
      if byte < 0x80:
        return value

  while at < len(message):
    tag = varint()
    kind = tag & 7
    if kind == 0:
      varint()
    elif kind == 2:
      size = varint()
      if tag >> 3 == field:
        values.append(message[at : at + size])
      at += size
    else:
      at += {1: 8, 5: 4}[kind]
  return values


def check(service: str, timeout: float = PROBE_SECONDS) -> List[str]:
  """The addresses of the workers registered with the dispatcher at `service`.

  Asks the dispatcher itself (its GetWorkers RPC), so that a closed port, a host that does not
  answer and something else listening there are all one-line errors (Unreachable) within
  `timeout` seconds; tf.data's own clients and workers keep retrying (workers for an hour).
  """
  import grpc

  host, port = parse_address(service)
  with grpc.insecure_channel(f'{host}:{port}') as channel:
    get_workers = channel.unary_unary('/tensorflow.data.DispatcherService/GetWorkers')
    try:
      response = get_workers(b'', timeout=timeout)  # an empty GetWorkersRequest
    except grpc.RpcError as e:
      reason = {
        grpc.StatusCode.UNAVAILABLE: 'nothing listens there',
        grpc.StatusCode.DEADLINE_EXCEEDED: f'no answer within {timeout:g} s',
      }.get(e.code(), f'something else answers there ({e.code().name})')
      raise Unreachable(f'tf.data service dispatcher {service} unreachable: {reason}') from None
  # GetWorkersResponse: repeated WorkerInfo workers = 1; WorkerInfo: string address = 1.
  return [_strings(info, 1)[0].decode() for info in _strings(response, 1)]


def local_address(service: str) -> str:
  """This host's address on its route to the dispatcher (what other hosts can reach it at)."""
  with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
    probe.connect(parse_address(service))  # UDP: picks the route, sends nothing
    return probe.getsockname()[0]


def connect(service: str) -> List[str]:
  """check(), logged for the Trainer: the workers registered so far."""
  workers = check(service)
  if workers:
    logging.info(
      'training input on tf.data service %s: %d worker(s): %s',
      service,
      len(workers),
      ', '.join(workers),
    )
  else:
    logging.warning(
      'training input on tf.data service %s: no worker registered yet; training '
      'waits for the first one (python -m trainer.input_service worker)',
      service,
    )
  return workers


def warn_salvaged(reports) -> None:
  """Salvaged copies of damaged shards are local files (shards.ShardGuard)."""
  salvaged = [r.salvaged_to for r in reports if r.salvaged_to]
  if salvaged:
    logging.warning(
      '%d damaged shard(s) are read from salvaged copies on this machine (%s): '
      'tf.data service workers on other machines cannot open them; repair the '
      'shards first (pipeline.py verify --repair)',
      len(salvaged),
      salvaged[0],
    )


def job_name(model_run_dir: str) -> str:
  """One job per Trainer run, shared by every trainer of a multi-worker run (same model_run_dir)."""
  return 'trainer-' + hashlib.sha1(model_run_dir.encode()).hexdigest()[:16]


def distribute(
  dataset, service: str, job: str, mode: str = DISTRIBUTED_EPOCH, compression: Optional[str] = None
):
  """`dataset` (everything up to and including decode) runs on the service's workers; `job`
  is shared by every trainer that passes the same name."""
  import tensorflow as tf

  return dataset.apply(
    tf.data.experimental.service.distribute(
      processing_mode=mode, service=service, job_name=job, compression=compression
    )
  )


def _check_port_free(port: int) -> None:
  """gRPC binds with SO_REUSEPORT: a second server on a taken port would start and share it."""
  with socket.socket() as probe:
    try:
      probe.bind(('', port))
    except OSError as e:
      raise OSError(f'port {port}: {e.strerror}') from None


def _serve(server, ready: str) -> int:
  """Prints `ready`, blocks until SIGTERM or SIGINT, stops the server."""
  stop = threading.Event()
  for signum in (signal.SIGTERM, signal.SIGINT):
    signal.signal(signum, lambda *_: stop.set())
  print(ready, flush=True)
  while not stop.wait(1.0):
    pass
  server.stop()
  return 0


def _dispatcher(args) -> int:
  _check_port_free(args.port)
  import tensorflow as tf

  service = tf.data.experimental.service
  server = service.DispatchServer(
    service.DispatcherConfig(
      port=args.port, work_dir=args.work_dir or None, fault_tolerant_mode=bool(args.work_dir)
    )
  )
  return _serve(server, f'dispatcher ready: grpc://{socket.gethostname()}:{args.port}')


def _worker(args) -> int:
  _check_port_free(args.port)
  check(args.dispatcher)
  address = args.worker_address or f'{local_address(args.dispatcher)}:{args.port}'
  import tensorflow as tf

  service = tf.data.experimental.service
  server = service.WorkerServer(
    service.WorkerConfig(
      dispatcher_address=args.dispatcher.split('://', 1)[1], worker_address=address, port=args.port
    )
  )
  return _serve(server, f'worker ready: {address}, dispatcher {args.dispatcher}')


def _service(value: str) -> str:
  try:
    parse_address(value)
  except ValueError as e:
    raise argparse.ArgumentTypeError(str(e)) from None
  return value


def _port(value: str) -> int:
  port = int(value) if value.isdigit() else -1
  if not 0 < port < 65536:
    raise argparse.ArgumentTypeError(f'{value!r} is not a port number (1-65535)')
  return port


class _Parser(argparse.ArgumentParser):
  """Bad input is one `error:` line and exit code 2 (argparse alone prints its usage too)."""

  def error(self, message):
    self.exit(2, f'error: {self.prog}: {message}\n')


def _parser() -> argparse.ArgumentParser:
  parser = _Parser(
    prog='python -m trainer.input_service',
    description=__doc__,
    formatter_class=argparse.RawDescriptionHelpFormatter,
  )
  commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')
  dispatcher = commands.add_parser('dispatcher', help='start the dispatcher (one per service)')
  dispatcher.add_argument(
    '--port', type=_port, default=DISPATCHER_PORT, help='gRPC port (default: %(default)s)'
  )
  dispatcher.add_argument(
    '--work-dir',
    default='',
    metavar='DIR',
    help='journal the dispatcher state here, so that a restarted '
    'dispatcher resumes its jobs (fault-tolerant mode)',
  )
  worker = commands.add_parser('worker', help='start a worker (as many as needed)')
  worker.add_argument('--dispatcher', required=True, type=_service, metavar='grpc://HOST:PORT')
  worker.add_argument(
    '--port', type=_port, default=WORKER_PORT, help='gRPC port (default: %(default)s)'
  )
  worker.add_argument(
    '--worker-address',
    default='',
    metavar='HOST:PORT',
    help="the address trainers reach this worker at (default: this host's "
    'address on the route to the dispatcher, and --port)',
  )
  return parser


def main(argv: Optional[List[str]] = None) -> int:
  parser = _parser()
  try:
    args = parser.parse_args(argv)
  except SystemExit as e:
    return int(e.code or 0)
  try:
    if args.command == 'worker':
      return _worker(args)
    return _dispatcher(args)
  except (ValueError, OSError) as e:
    print(f'error: {e}', file=sys.stderr)
    return 2


if __name__ == '__main__':
  sys.exit(main())
