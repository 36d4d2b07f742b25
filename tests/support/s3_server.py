"""An S3-compatible server on loopback for tests: moto in server mode, in its own process.

(moto's in-process ThreadedMotoServer deadlocks once TensorFlow I/O's S3 client writes from
the same process: the server needs the GIL that the writing thread holds.)
"""

import contextlib
import os
import socket
import subprocess
import sys
import time
from typing import Dict, Iterator

import pytest

_STARTUP_SECONDS = 30
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port() -> int:
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


@contextlib.contextmanager
def loopback_s3(log_path: str) -> Iterator[Dict[str, str]]:
  """Starts the server; yields the AWS_* environment that points clients at it."""
  port = free_port()
  with open(log_path, 'w') as log:
    server = subprocess.Popen(
      [sys.executable, '-m', 'moto.server', '-H', '127.0.0.1', '-p', str(port)],
      stdout=log,
      stderr=subprocess.STDOUT,
    )
  try:
    wait_for_port(server, port, log_path)
    yield {
      'AWS_ENDPOINT_URL': f'http://127.0.0.1:{port}',
      'AWS_ACCESS_KEY_ID': 'test',
      'AWS_SECRET_ACCESS_KEY': 'test',
      'AWS_REGION': 'us-east-1',
    }
  finally:
    server.terminate()
    server.wait(timeout=30)


def wait_for_port(server: subprocess.Popen, port: int, log_path: str) -> None:
  """Returns once the server listens on `port`; fails the test if it exits or never does."""
  deadline = time.monotonic() + _STARTUP_SECONDS
  while True:
    with contextlib.suppress(OSError), socket.create_connection(('127.0.0.1', port), 0.5):
      return
    if server.poll() is not None or time.monotonic() > deadline:
      pytest.fail(f'{" ".join(server.args)} did not start (log: {log_path})')
    time.sleep(0.2)


def upload_folder(client, local_root: str, bucket: str, prefix: str) -> int:
  """Copies every file below `local_root` to s3://bucket/prefix/…; returns the count."""
  count = 0
  for folder, _, files in os.walk(local_root):
    for name in files:
      path = os.path.join(folder, name)
      client.upload_file(path, bucket, f'{prefix}/{os.path.relpath(path, local_root)}')
      count += 1
  return count


def pipeline(env: Dict[str, str], *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
  """`pipeline.py ARGS` in a process of its own with `env` (an S3 server's AWS_* included)."""
  return subprocess.run(
    [sys.executable, 'pipeline.py', *args],
    cwd=_ROOT,
    env=env,
    capture_output=True,
    text=True,
    timeout=timeout,
  )
