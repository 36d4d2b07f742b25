"""TFX's Transform executor handed the analyzer cache of the node's last execution, looked up in
ML Metadata (metadata/transform_cache.py) only now that Transform executes: the cache is no input
of the node, so TFX's execution cache and the project's code-aware keys are as without it.

What the cache saved is read from the Beam pipeline TFX built: each analyzer read from the cache
is a `ReadCache/Read[…]` step, each computed anew a `WriteCache/Write[…]` step. Both counts and
the cache used go to the run log and onto the `updated_analyzer_cache` artifact.
"""

import logging
import re

from tfx.components.transform import executor as transform_executor
from tfx.types import standard_artifacts, standard_component_specs
from tfx.utils import json_utils

from metadata import transform_cache

METADATA_PATH_KEY = 'metadata_path'  # custom_config's key: the store the last cache is found in
_READ = re.compile(r'(^|/)ReadCache/Read\[[^/]*\]\[CacheKeyIndex\d+\]$')
_WRITE = re.compile(r'(^|/)WriteCache/Write\[[^/]*\]\[CacheKeyIndex\d+\]$')


class Executor(transform_executor.Executor):
  """Transform with the last TransformCache of its node, when there is one."""

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self._pipelines = []

  def _make_beam_pipeline(self):
    pipeline = super()._make_beam_pipeline()
    self._pipelines.append(pipeline)
    return pipeline

  def Do(self, input_dict, output_dict, exec_properties):
    cache_key = standard_component_specs.ANALYZER_CACHE_KEY
    given = input_dict.get(cache_key)  # wired as an input (TFX's way): used as it is
    uri = given[0].uri if given else self.last_cache(exec_properties)
    if uri and not given:
      cache = standard_artifacts.TransformCache()
      cache.uri = uri
      input_dict = dict(input_dict, **{cache_key: [cache]})
      logging.info('Transform: the analyzer cache of the last execution: %s', uri)
    super().Do(input_dict, output_dict, exec_properties)
    self.record(uri, output_dict.get(standard_component_specs.UPDATED_ANALYZER_CACHE_KEY))

  def last_cache(self, exec_properties) -> str:
    """The newest TransformCache of this node in the run's store ('' : none, or no store)."""
    config = json_utils.loads(exec_properties.get('custom_config') or 'null') or {}
    context = self._context
    node = context and context.pipeline_node
    if not config.get(METADATA_PATH_KEY) or node is None or context.pipeline_info is None:
      return ''
    try:
      found = transform_cache.newest(
        config[METADATA_PATH_KEY], context.pipeline_info.id, node.node_info.id
      )
    except Exception as e:  # noqa: BLE001 (the cache saves time; it never fails the step)
      logging.warning('Transform: no analyzer cache, the store could not be read: %s', e)
      return ''
    return found or ''

  def record(self, uri, updated) -> None:
    """The cache used and what it saved: in the run log and on the updated cache artifact."""
    labels = set().union(*(getattr(p, 'applied_labels', ()) for p in self._pipelines))
    read = sum(1 for label in labels if _READ.search(label))
    written = sum(1 for label in labels if _WRITE.search(label))
    if uri:
      logging.info(
        'Transform: %d analyzers read from the analyzer cache, %d computed', read, written
      )
    for artifact in updated or ():
      artifact.set_string_custom_property(transform_cache.CACHE_FROM, uri or '')
      artifact.set_int_custom_property(transform_cache.FROM_CACHE, read)
      artifact.set_int_custom_property(transform_cache.COMPUTED, written)
