"""The analyzer cache a Transform execution wrote last (TFX's TransformCache artifact), looked up
in ML Metadata by the executor that runs Transform again (components/cached_transform): the cache
is handed to TFX's Transform only when Transform executes anyway, so it is no input of the node
and no part of TFX's cache key.
"""

import os
from typing import Optional

from metadata import connection

CACHE_TYPE = 'TransformCache'  # TFX's standard_artifacts.TransformCache
UPDATED_CACHE = 'updated_analyzer_cache'  # Transform's output of that type
# The properties the executor writes on the updated cache: the cache it read and what it saved.
CACHE_FROM = 'analyzer_cache_from'
FROM_CACHE = 'analyzers_from_cache'
COMPUTED = 'analyzers_computed'


def newest(metadata_path: str, pipeline_name: str, node_id: str) -> Optional[str]:
  """The URI of the newest live TransformCache the node `node_id` of `pipeline_name` published
  that is still on disk; None without a store or such a cache."""
  if not metadata_path or not os.path.isfile(metadata_path):
    return None
  from ml_metadata.proto import metadata_store_pb2

  store = connection.open_read_only(metadata_path)
  context = store.get_context_by_type_and_name('node', f'{pipeline_name}.{node_id}')
  if context is None:
    return None
  caches = [
    a
    for a in store.get_artifacts_by_context(context.id)
    if a.type == CACHE_TYPE and a.state == metadata_store_pb2.Artifact.LIVE and a.uri
  ]
  for artifact in sorted(caches, key=lambda a: (a.create_time_since_epoch, a.id), reverse=True):
    if '://' in artifact.uri or os.path.isdir(artifact.uri):  # object storage: as recorded
      return artifact.uri
  return None


def used(artifact) -> Optional[dict]:
  """{'from': the cache read, 'from_cache': analyzers read from it, 'computed': analyzers computed}
  of an execution that read a cache, from its updated cache artifact (an ML Metadata Artifact);
  None when it read none."""
  props = artifact.custom_properties
  if CACHE_FROM not in props or not props[CACHE_FROM].string_value:
    return None
  return {
    'from': props[CACHE_FROM].string_value,
    'from_cache': props[FROM_CACHE].int_value if FROM_CACHE in props else 0,
    'computed': props[COMPUTED].int_value if COMPUTED in props else 0,
  }
