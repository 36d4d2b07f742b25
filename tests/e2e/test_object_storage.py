"""The pipeline with --data and --output on an S3 server on loopback (moto, a real HTTP server):
data read and shards, statistics and the model written through TensorFlow I/O's S3 plugin and
Beam's S3 file system, in Beam worker processes too (the default multi_processing mode)."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, SMALL_EVAL, library_noise
from tests.support import s3_server

pytestmark = pytest.mark.slow  # whole pipeline runs against a loopback S3 server


# Credentials the runs get, which must never be written anywhere (the server accepts any).
SENTINELS = {
  'AWS_ACCESS_KEY_ID': 'SENTINELKEYID7731',
  'AWS_SECRET_ACCESS_KEY': 'SENTINELSECRET7732',
  'AWS_SESSION_TOKEN': 'SENTINELTOKEN7733',
  'GOOGLE_OAUTH_ACCESS_TOKEN': 'SENTINELOAUTH7734',
}


@pytest.fixture(scope='module')
def s3(tmp_path_factory):
  with s3_server.loopback_s3(str(tmp_path_factory.mktemp('moto') / 'server.log')) as env:
    env.update(SENTINELS)
    import boto3

    client = boto3.client(
      's3',
      endpoint_url=env['AWS_ENDPOINT_URL'],
      aws_access_key_id=env['AWS_ACCESS_KEY_ID'],
      aws_secret_access_key=env['AWS_SECRET_ACCESS_KEY'],
      aws_session_token=env['AWS_SESSION_TOKEN'],
      region_name=env['AWS_REGION'],
    )
    client.create_bucket(Bucket='data')
    client.create_bucket(Bucket='runs')
    yield client, dict(os.environ, **env)


def _sentinels_in(data: bytes, sentinels: dict = SENTINELS) -> list:
  return [name for name, value in sentinels.items() if value.encode() in data]


def _files_with_sentinels(folder, sentinels: dict = SENTINELS) -> dict:
  found = {}
  for root, _, names in os.walk(folder):
    for name in names:
      with open(os.path.join(root, name), 'rb') as f:
        hits = _sentinels_in(f.read(), sentinels)
      if hits:
        found[os.path.join(root, name)] = hits
  return found


def run_remote(env, data: str, output: str, local, *beam: str) -> tuple:
  """`run` from and to object storage, state in `local`, with the `beam` flags: (the finished
  process, last_run.json)."""
  done = s3_server.pipeline(
    env,
    'run',
    '--data',
    data,
    '--output',
    output,
    '--local-dir',
    str(local),
    '--train-steps',
    '150',
    '--min-accuracy',
    '0.3',
    *SMALL_EVAL,
    *beam,
  )
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  with open(local / 'last_run.json') as f:
    return done, json.load(f)


def _keys(client, bucket, prefix):
  pages = client.get_paginator('list_objects_v2').paginate(Bucket=bucket, Prefix=prefix)
  return {o['Key']: o['Size'] for page in pages for o in page.get('Contents', [])}


def test_default_pipeline_reads_and_writes_s3(s3, digits_subset, tmp_path):
  client, env = s3
  # Laid out as lakeFS's S3 gateway shows a commit: s3://<repository>/<commit>/<path>.
  uploaded = s3_server.upload_folder(client, digits_subset, 'data', '64d1f0c2e9/digits')
  local = tmp_path / 'state'
  done, result = run_remote(  # Beam's worker processes, which load the S3 plugin too
    env, 's3://data/64d1f0c2e9/digits', 's3://runs/first', local, '--beam-workers', '2'
  )
  # The endpoint and the path (with lakeFS, the commit in it) are the data's revision.
  assert result['data_revision'] == {
    'data_source': 's3://data/64d1f0c2e9/digits',
    'data_s3_endpoint': env['AWS_ENDPOINT_URL'],
  }
  assert f'data rev:   s3://data/64d1f0c2e9/digits at {env["AWS_ENDPOINT_URL"]}' in done.stdout
  assert 'pure virtual method' not in done.stderr and 'exited with return code' not in done.stderr
  assert not library_noise(done.stdout + done.stderr)  # not from the worker processes either
  assert result['examples_per_split'] == {
    'train': result['examples_per_split']['train'],
    'eval': uploaded - result['examples_per_split']['train'],
  }
  assert sorted(os.listdir(local)) == [
    'last_run.json',
    'logs',
    'metadata.sqlite',
    'report.html',
    'reports',  # every run's report kept (issue 69)
    'run.lock',
    'runs.html',
  ]

  keys = _keys(client, 'runs', 'first/')
  shards = {
    k: size for k, size in keys.items() if '/ImageExampleGen/examples/' in k and '/Split-' in k
  }
  assert {k.rsplit('/', 2)[1] for k in shards} == {'Split-train', 'Split-eval'}
  assert all(size > 0 for size in shards.values()) and not any('.partial' in k for k in keys)
  # The train shard, fetched from the server, holds exactly the records the run counted.
  import tensorflow as tf

  train_shard = next(k for k in shards if '/Split-train/' in k)
  local_shard = str(tmp_path / 'train.tfrecord')
  client.download_file('runs', train_shard, local_shard)
  assert (
    sum(1 for _ in tf.data.TFRecordDataset(local_shard)) == result['examples_per_split']['train']
  )
  assert any('/StatisticsGen/statistics/' in k and k.endswith('FeatureStats.pb') for k in keys)

  pushed = result['pushed_to']
  assert pushed.startswith('s3://runs/first/serving/')
  model_prefix = pushed[len('s3://runs/') :]
  model_keys = [k for k in keys if k.startswith(model_prefix + '/')]
  assert model_prefix + '/saved_model.pb' in model_keys
  assert any('/variables/variables.data' in k for k in model_keys)
  # Nothing of the run landed in the working folder's default output.
  assert not os.path.exists(os.path.join(ROOT, 'output', 'remote', 's3', 'runs', 'first'))
  # No credential in anything written (metadata, logs, report, artifacts) or printed.
  assert not _files_with_sentinels(local)
  for key in keys:
    assert not _sentinels_in(client.get_object(Bucket='runs', Key=key)['Body'].read()), key
  assert not _sentinels_in((done.stdout + done.stderr).encode())


def test_compile_and_submit_write_and_print_no_credentials(s3, tmp_path):
  _, env = s3
  spec = tmp_path / 'spec' / 'pipeline.json'
  done = s3_server.pipeline(
    env,
    'compile',
    '--data',
    's3://data/digits',
    '--pipeline-root',
    's3://runs/root',
    '--out',
    str(spec),
  )
  assert done.returncode == 0, done.stderr[-2000:]
  with open(spec) as f:
    assert '--s3_endpoint_url=' in f.read()  # Beam's S3 flags are there, without keys
  dry = s3_server.pipeline(
    env,
    'submit',
    '--target',
    'vertex',
    '--project',
    'p',
    '--region',
    'us-central1',
    '--template',
    str(spec),
    '--pipeline-root',
    'gs://runs/root',  # Vertex AI takes gs:// only; the token still comes from the environment
    '--dry-run',
  )
  assert dry.returncode == 0, dry.stderr[-2000:]
  assert not _files_with_sentinels(tmp_path)
  assert not _sentinels_in((done.stdout + done.stderr + dry.stdout + dry.stderr).encode())


def test_missing_s3_data_is_one_line(s3):
  _, env = s3
  done = s3_server.pipeline(
    env, 'run', '--data', 's3://data/nothing-here', '--output', 's3://runs/x'
  )
  assert done.returncode == 2
  assert done.stderr.strip() == 'error: --data s3://data/nothing-here: no such file or folder'


_GLOB_CHECK = """
import json, sys
from utils import object_storage
import tensorflow as tf
from tfx.dsl.io import fileio

out = {}
for pattern in sys.argv[1:]:
  out[pattern] = [fileio.glob(pattern), tf.io.gfile.glob(pattern)]
path = 's3://data/tree/a/x.png'
fileio.glob('s3://data/tree/*/*')
out['stat'] = [fileio.stat(path).length, fileio.stat(path).length]  # listed, then asked
print(json.dumps(out))
sys.stdout.flush()
object_storage.os._exit(0)
"""


def test_listing_glob_finds_what_tensorflow_io_finds(s3):
  """ListingFilesystem (one listing) against TensorFlow I/O's glob (a request per entry)."""
  client, env = s3
  for key in ('tree/a/x.png', 'tree/a/y.jpg', 'tree/b/sub/z.png', 'tree/top.txt'):
    client.put_object(Bucket='data', Key=key, Body=b'12345')
  patterns = [
    's3://data/tree/*',
    's3://data/tree/*/*',
    's3://data/tree/?/*.png',
    's3://data/tree/[ab]/sub',
    's3://data/tree/a/x.png',
    's3://data/tree/none/*',
  ]
  done = subprocess.run(
    [sys.executable, '-c', _GLOB_CHECK, *patterns],
    cwd=ROOT,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
  )
  assert done.returncode == 0, done.stderr[-3000:]
  found = json.loads(done.stdout.strip().splitlines()[-1])
  for pattern in patterns:
    listing, tensorflow_io = found[pattern]
    assert sorted(listing) == sorted(tensorflow_io), pattern
  assert found['s3://data/tree/*/*'][0] == [
    's3://data/tree/a/x.png',
    's3://data/tree/a/y.jpg',
    's3://data/tree/b/sub',
  ]
  assert found['stat'] == [5, 5]


@pytest.mark.parametrize(
  'where, message',
  [
    ('bucket', 'error: --output s3://no-such-bucket/run: bucket no-such-bucket: no such bucket'),
    (
      'endpoint',
      'error: --output s3://no-such-bucket/run: cannot reach S3 (Could not connect '
      'to the endpoint URL: "http://127.0.0.1:{port}/no-such-bucket")',
    ),
  ],
)
def test_unusable_s3_is_one_line_at_once(s3, where, message):
  """A missing bucket or an unreachable endpoint: exit 2 in one line, without the minutes of
  retries TensorFlow I/O's client would spend first."""
  _, env = s3
  if where == 'endpoint':
    port = s3_server.free_port()  # nothing listens there
    env = dict(env, AWS_ENDPOINT_URL=f'http://127.0.0.1:{port}')
    message = message.format(port=port)
  done = s3_server.pipeline(env, 'run', '--output', 's3://no-such-bucket/run')
  assert done.returncode == 2
  assert done.stderr.strip() == message
