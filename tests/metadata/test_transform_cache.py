"""metadata/transform_cache.py: the newest live TransformCache of a pipeline's Transform, found in
a store made here, and what an execution read from one."""

import os

from ml_metadata.proto import metadata_store_pb2

from metadata import connection, transform_cache

PIPELINE = 'taxi'


def _store(tmp_path, caches):
  """A store with the node context 'taxi.Transform' and TransformCache artifacts in it:
  caches: [(uri, state, on disk)], oldest first."""
  path = str(tmp_path / 'metadata.sqlite')
  store = connection.open_or_create(path)
  node_type = store.put_context_type(metadata_store_pb2.ContextType(name='node'))
  cache_type = store.put_artifact_type(metadata_store_pb2.ArtifactType(name='TransformCache'))
  other_type = store.put_artifact_type(metadata_store_pb2.ArtifactType(name='TransformGraph'))
  [context] = store.put_contexts(
    [metadata_store_pb2.Context(type_id=node_type, name=f'{PIPELINE}.Transform')]
  )
  artifacts = []
  for uri, state, on_disk in caches:
    if on_disk:
      os.makedirs(uri)
    artifacts.append(metadata_store_pb2.Artifact(type_id=cache_type, uri=uri, state=state))
  graph = str(tmp_path / 'graph')
  artifacts.append(
    metadata_store_pb2.Artifact(
      type_id=other_type, uri=graph, state=metadata_store_pb2.Artifact.LIVE
    )
  )
  ids = store.put_artifacts(artifacts)
  store.put_attributions_and_associations(
    [metadata_store_pb2.Attribution(artifact_id=i, context_id=context) for i in ids], []
  )
  return path


LIVE, PENDING = metadata_store_pb2.Artifact.LIVE, metadata_store_pb2.Artifact.PENDING


def test_the_newest_live_cache_on_disk_is_found(tmp_path):
  old, new, pending, gone = (str(tmp_path / name) for name in ('1', '2', '3', '4'))
  path = _store(
    tmp_path, [(old, LIVE, True), (new, LIVE, True), (pending, PENDING, True), (gone, LIVE, False)]
  )
  assert transform_cache.newest(path, PIPELINE, 'Transform') == new


def test_no_cache_without_a_store_a_node_or_a_cache(tmp_path):
  assert transform_cache.newest('', PIPELINE, 'Transform') is None
  assert transform_cache.newest(str(tmp_path / 'none.sqlite'), PIPELINE, 'Transform') is None
  path = _store(tmp_path, [])
  assert transform_cache.newest(path, PIPELINE, 'Transform') is None
  assert transform_cache.newest(path, 'other', 'Transform') is None


def test_what_an_execution_read_from_a_cache():
  artifact = metadata_store_pb2.Artifact()
  assert transform_cache.used(artifact) is None
  artifact.custom_properties[transform_cache.CACHE_FROM].string_value = ''
  assert transform_cache.used(artifact) is None
  artifact.custom_properties[transform_cache.CACHE_FROM].string_value = '/root/Transform/cache/7'
  artifact.custom_properties[transform_cache.FROM_CACHE].int_value = 9
  artifact.custom_properties[transform_cache.COMPUTED].int_value = 1
  assert transform_cache.used(artifact) == {
    'from': '/root/Transform/cache/7',
    'from_cache': 9,
    'computed': 1,
  }
