"""utils/object_storage.checksum: an object in S3 (moto on loopback) known by the store's
checksum, which a rewrite of the same size changes; cache_keys.files_fingerprint puts it in the
cache key of the component that reads the file."""

import json

import pytest

import cache_keys
from contracts.errors import UserError
from tests.support import s3_server
from utils import object_storage


@pytest.fixture
def s3(tmp_path, monkeypatch):
  with s3_server.loopback_s3(str(tmp_path / 'server.log')) as env:
    for name, value in env.items():
      monkeypatch.setenv(name, value)
    import boto3

    client = boto3.client('s3', endpoint_url=env['AWS_ENDPOINT_URL'])
    client.create_bucket(Bucket='models')
    yield client


def test_a_rewritten_object_of_the_same_size_has_another_checksum_and_key(s3):
  path = 's3://models/w.weights.h5'
  s3.put_object(Bucket='models', Key='w.weights.h5', Body=b'weights-1')
  first = object_storage.checksum(path)
  key = json.loads(cache_keys.files_fingerprint(files={'weights': path}))[path]
  s3.put_object(Bucket='models', Key='w.weights.h5', Body=b'weights-2')
  assert object_storage.checksum(path) != first and first.startswith('s3:') and key == first
  assert json.loads(cache_keys.files_fingerprint(files={'weights': path}))[path] != first


def test_an_object_that_cannot_be_asked_is_one_error_line_naming_the_option(s3):
  with pytest.raises(UserError, match=r'^--weights s3://models/gone.h5: cannot read its checksum'):
    cache_keys.files_fingerprint(files={'weights': 's3://models/gone.h5'})
