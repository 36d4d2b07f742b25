"""The pipeline with --data and --output on a Google Cloud Storage emulator on loopback
(tests/support/gcs_server.py: gcp-storage-emulator, a real HTTP server, behind a TLS proxy): data listed
and read, shards, statistics and the model written through TensorFlow's own GCS file system
(over TLS, as to Google) and Beam's (google-cloud-storage), authenticated with a service account
key as on Vertex AI. Beam runs in one process (the default for 400 images): Beam worker
processes on object storage are tests/e2e/test_object_storage.py's S3 run."""

import os

import pytest

from tests.e2e.test_object_storage import (
  ROOT,
  _files_with_sentinels,
  _sentinels_in,
  run_remote,
)
from tests.support import gcs_server, s3_server

pytestmark = pytest.mark.slow  # a whole pipeline run against a loopback GCS server

# The service account key's id, standing for the key, which must never be written or printed.
KEY = {'private_key_id': 'SENTINELKEYID8841'}


@pytest.fixture(scope='module')
def gcs(tmp_path_factory):
  with gcs_server.loopback_gcs(str(tmp_path_factory.mktemp('gcs')), KEY['private_key_id']) as env:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    endpoint = env['STORAGE_EMULATOR_HOST']
    client = storage.Client(
      project='loopback',
      credentials=AnonymousCredentials(),
      client_options={'api_endpoint': endpoint},
    )
    client.create_bucket('data')
    client.create_bucket('runs')
    yield client, dict(os.environ, **env)


def _blobs(client, bucket, prefix=''):
  return {blob.name: blob.size for blob in client.list_blobs(bucket, prefix=prefix)}


def test_default_pipeline_reads_and_writes_gcs(gcs, digits_subset, tmp_path):
  client, env = gcs
  bucket = client.bucket('data')
  for folder, _, names in os.walk(digits_subset):
    for name in names:
      path = os.path.join(folder, name)
      bucket.blob(f'digits/{os.path.relpath(path, digits_subset)}').upload_from_filename(path)
  local = tmp_path / 'state'
  done, result = run_remote(env, 'gs://data/digits', 'gs://runs/first', local)
  counted = result['examples_per_split']
  assert counted['train'] + counted['eval'] == len(_blobs(client, 'data', 'digits/'))

  blobs = _blobs(client, 'runs', 'first/')
  assert not any(blobs[k] for k in blobs if k.endswith('/'))  # TensorFlow's folder markers
  blobs = {k: size for k, size in blobs.items() if not k.endswith('/')}
  shards = {
    k: size for k, size in blobs.items() if '/ImageExampleGen/examples/' in k and '/Split-' in k
  }
  assert {k.rsplit('/', 2)[1] for k in shards} == {'Split-train', 'Split-eval'}
  assert all(size > 0 for size in shards.values()) and not any('.partial' in k for k in blobs)
  import tensorflow as tf

  train = [k for k in shards if '/Split-train/' in k]
  records = 0
  for i, key in enumerate(train):
    local_shard = str(tmp_path / f'train-{i}.tfrecord')
    client.bucket('runs').blob(key).download_to_filename(local_shard)
    records += sum(1 for _ in tf.data.TFRecordDataset(local_shard))
  assert records == counted['train']  # the shards in the bucket hold what the run counted
  assert any('/StatisticsGen/statistics/' in k and k.endswith('FeatureStats.pb') for k in blobs)
  pushed = result['pushed_to']
  assert pushed.startswith('gs://runs/first/serving/')
  model = pushed[len('gs://runs/') :]
  assert model + '/saved_model.pb' in blobs
  assert any(k.startswith(model + '/variables/variables.data') for k in blobs)
  assert not os.path.exists(os.path.join(ROOT, 'output', 'remote', 'gs', 'runs'))
  assert not _files_with_sentinels(local, KEY)
  for key in blobs:
    assert not _sentinels_in(client.bucket('runs').blob(key).download_as_bytes(), KEY), key
  assert not _sentinels_in((done.stdout + done.stderr).encode(), KEY)


@pytest.mark.parametrize('where', ['bucket', 'endpoint'])
def test_unusable_gcs_is_one_line_at_once(gcs, where):
  """Checked before the run with one request and no retries, where the clients would retry an
  unreachable endpoint for minutes."""
  _, env = gcs
  expected = 'error: --output gs://no-such-bucket/run: bucket no-such-bucket: no such bucket'
  if where == 'endpoint':
    port = s3_server.free_port()  # nothing listens there
    env = dict(env, STORAGE_EMULATOR_HOST=f'http://127.0.0.1:{port}')
    expected = (
      'error: --output gs://no-such-bucket/run: cannot reach Google Cloud Storage at '
      f'http://127.0.0.1:{port}'
    )
  done = s3_server.pipeline(env, 'run', '--output', 'gs://no-such-bucket/run')
  assert (done.returncode, done.stderr.strip()) == (2, expected)
