"""Object storage (gs://, s3://) in every process of a run: importing this module enables it.

TensorFlow reads gs:// by itself; s3:// comes from TensorFlow I/O's file system plugin, loaded
by importing `tensorflow_io`. Beam has its own GCS
(google-cloud-storage) and S3 (boto3) file systems. S3 is configured from the standard AWS
variables: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION and, for an S3-compatible store
(MinIO, Ceph, a local test server), AWS_ENDPOINT_URL; GCS from Application Default Credentials
(and, for an emulator, STORAGE_EMULATOR_HOST, which TensorFlow's client does not read:
tests/support/gcs_server.py).

The run's process imports it when a path is remote (cli/config_builder.py checks the buckets with it),
and Beam worker processes (DirectRunner multi_processing, Flink, Spark) import it as a Beam
plugin (beam_args), so that TensorFlow code inside them (TFMA loading the model, our ExampleGen
writing shards) reads s3:// too.
"""

import atexit
import logging
import os
import re
import sys
import time
from typing import Dict, List, NamedTuple, Tuple
import warnings

from tfx.dsl.io import filesystem_registry
from tfx.dsl.io.plugins import tensorflow_gfile

BEAM_WORKER_MODULE = 'apache_beam.runners.worker.sdk_worker_main'


def _enable_s3() -> None:
  """Makes tf.io.gfile (and so TFX's fileio) read and write s3:// paths."""
  endpoint = os.environ.get('AWS_ENDPOINT_URL', '')
  if endpoint and 'S3_ENDPOINT' not in os.environ:  # TensorFlow I/O's name for it
    os.environ['S3_ENDPOINT'] = endpoint
    if endpoint.startswith('http://'):
      os.environ.setdefault('S3_VERIFY_SSL', '0')
  with warnings.catch_warnings():  # its Google Cloud imports warn about this Python version
    warnings.simplefilter('ignore', FutureWarning)
    import tensorflow_io  # noqa: F401  (importing it registers s3:// with TensorFlow)


def beam_args() -> List[str]:
  """Beam pipeline args that give its S3 file system the same endpoint and region.

  Never credentials: pipeline args are recorded (ML Metadata, compiled specs, logs). Beam's S3
  client is boto3, which reads AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN from
  each worker's own environment when no key is passed.
  """
  args = [f'--beam_plugins={__name__}']
  for flag, variable in (
    ('--s3_endpoint_url', 'AWS_ENDPOINT_URL'),
    ('--s3_region_name', 'AWS_REGION'),
  ):
    if os.environ.get(variable):
      args.append(f'{flag}={os.environ[variable]}')
  return args


class _Stat(NamedTuple):  # what tf.io.gfile.stat answers, for TFX's fingerprint
  length: int
  mtime_nsec: int
  is_directory: bool = False


class ListingFilesystem(tensorflow_gfile.TensorflowFilesystem):
  """TFX's `fileio` on s3:// and gs:// as TensorFlow's, except `glob`: one Beam listing (1,000
  keys a request) instead of TensorFlow I/O's request per entry, whose sizes and times then
  answer the `stat` of each file found once, within LISTING_FRESH_SECONDS.

  TFX's ExampleGen driver fingerprints its input with a glob and a stat per file: 1,797 digits
  on a loopback S3 server took ~40 s that way and ~0.5 s with this (tests/e2e/test_object_storage.py).
  """

  SUPPORTED_SCHEMES = ['s3://', 'gs://']
  LISTING_FRESH_SECONDS = 60.0
  _listed: Dict[str, Tuple[float, int, float]] = {}  # path: (listed at, size, mtime seconds)

  @classmethod
  def glob(cls, pattern: str) -> List[str]:
    from apache_beam.io.filesystem import FileSystem
    from apache_beam.io.filesystems import FileSystems

    static = re.split(r'[*?[]', pattern, maxsplit=1)[0]
    if static == pattern:
      return [pattern] if cls.exists(pattern) else []
    folder = static[: static.rfind('/') + 1]
    matches = re.compile(FileSystem.translate_pattern(pattern))
    now = time.monotonic()
    cls._listed = {
      path: seen for path, seen in cls._listed.items() if now - seen[0] < cls.LISTING_FRESH_SECONDS
    }
    found = set()
    for meta in FileSystems.match([folder + '**'])[0].metadata_list:
      cls._listed[meta.path] = (now, meta.size_in_bytes, meta.last_updated_in_seconds)
      path = meta.path.rstrip('/')  # the file, then its folders (objects named `x/` or none)
      while len(path) > len(folder):
        if matches.match(path):
          found.add(path)
        path = path[: path.rstrip('/').rfind('/')]
    return sorted(found)

  @classmethod
  def stat(cls, path: str):
    listed_at, size, mtime = cls._listed.pop(path, (0.0, 0, 0.0))
    if time.monotonic() - listed_at < cls.LISTING_FRESH_SECONDS:
      return _Stat(size, int(mtime * 1e9))
    return super().stat(path)


def check_bucket(path: str) -> None:
  """Raises ValueError (one line) unless the bucket of a gs:// or s3:// path answers: in
  seconds, where TensorFlow's clients retry an unreachable endpoint for minutes (2.5 measured
  with S3)."""
  scheme, rest = path.split('://', 1)
  bucket = rest.split('/', 1)[0]
  (_check_gcs_bucket if scheme == 'gs' else _check_s3_bucket)(bucket)


def _check_gcs_bucket(bucket: str) -> None:
  from google.api_core import exceptions
  from google.auth import exceptions as auth_exceptions
  from google.cloud import storage
  import requests

  try:
    # Application Default Credentials (anonymous on an emulator); a bucket needs no project, and
    # credentials without one (a user's gcloud login) must not fail the check.
    client = storage.Client(project=None)
  except auth_exceptions.DefaultCredentialsError:
    raise ValueError(
      'no Google Cloud credentials (gcloud auth application-default login, or '
      'GOOGLE_APPLICATION_CREDENTIALS)'
    ) from None
  try:
    client.get_bucket(bucket, timeout=(5, 20), retry=None)
  except exceptions.NotFound:
    raise ValueError(f'bucket {bucket}: no such bucket') from None
  except exceptions.Forbidden:
    raise ValueError(f'bucket {bucket}: access denied') from None
  except requests.exceptions.ConnectionError:
    raise ValueError(f'cannot reach Google Cloud Storage at {client.api_endpoint}') from None


def _check_s3_bucket(bucket: str) -> None:
  import boto3
  from botocore import config, exceptions

  client = boto3.client(
    's3', config=config.Config(connect_timeout=5, read_timeout=20, retries={'max_attempts': 2})
  )
  try:
    client.head_bucket(Bucket=bucket)
  except exceptions.NoCredentialsError:
    raise ValueError(
      'no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)'
    ) from None
  except exceptions.EndpointConnectionError as e:
    raise ValueError(f'cannot reach S3 ({e})') from None
  except exceptions.ClientError as e:
    code = e.response.get('Error', {}).get('Code', '')
    reason = {
      '404': 'no such bucket',
      'NoSuchBucket': 'no such bucket',
      '403': 'access denied',
    }.get(code, str(e))
    raise ValueError(f'bucket {bucket}: {reason}') from None


def checksum(path: str) -> str:
  """The store's own checksum of one object, asked without reading it (Beam's file systems):
  GCS's CRC32C, S3's ETag (the MD5 of an object written in one part). Any rewrite of the object
  changes it, same size or not."""
  from apache_beam.io.filesystems import FileSystems

  _configure_beam()  # the endpoint and region as they are now
  return f'{path.split("://", 1)[0]}:{FileSystems.checksum(path)}'


def _configure_beam() -> None:
  """Beam's S3 file system, used outside a pipeline too (listing image folders), needs its
  options set before the first pipeline sets them."""
  from apache_beam.io.filesystems import FileSystems
  from apache_beam.options.pipeline_options import PipelineOptions

  FileSystems.set_options(PipelineOptions(beam_args()))


def _skip_native_teardown_in_beam_worker() -> None:
  """TensorFlow I/O's S3 client aborts the interpreter's final teardown ("pure virtual method
  called", exit status 134, which Beam's runner reports as a worker failure). In a Beam worker
  process, leave right after Python's own exit handlers with the status Python would give.
  (pipeline.py does the same for the run's process.)"""
  main = sys.modules.get('__main__')
  if getattr(getattr(main, '__spec__', None), 'name', '') != BEAM_WORKER_MODULE:
    return
  failed = []
  previous_hook = sys.excepthook

  def record(*exc_info):
    failed.append(exc_info[0])
    previous_hook(*exc_info)

  def leave():
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1 if failed else 0)

  sys.excepthook = record
  atexit.register(leave)


_enable_s3()
_configure_beam()
filesystem_registry.DEFAULT_FILESYSTEM_REGISTRY.register(ListingFilesystem, priority=5)
_skip_native_teardown_in_beam_worker()
