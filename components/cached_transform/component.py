"""CachedTransform: TFX's Transform whose executor reads the analyzer cache of the node's last
execution from ML Metadata (executor.py), instead of an `analyzer_cache` input: a Resolver's
newest cache would change Transform's inputs on every run and nothing would be cached again.

As custom_config it gets the module file's path, the fingerprint of the code preprocessing_fn
reaches (cache_keys.transform_fingerprint: its cache key changes when that code does, not when
run_fn does) and the store's path (the same on every run of an output).
"""

from typing import List

from tfx import components as tfx_components
from tfx.dsl.components.base import executor_spec

from components import module_transform
from components.cached_transform import executor


class CachedTransform(tfx_components.Transform):
  """tfx.components.Transform's parameters; custom_config['metadata_path']: the store."""

  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)


def transform(
  examples, schema, module_file: str, functions: List[str], code_fingerprint: str, store: str = ''
):
  """The Transform step of a module file that defines preprocessing_fn (`functions`: those it
  defines, contracts/trainer_options.MODULE_FUNCTIONS); `store`: the run's ML Metadata, where the
  last analyzer cache is found ('' : none, a compiled pipeline)."""
  stats = 'stats_options_updater_fn' in functions
  config = {'module_file': module_file, 'code_fingerprint': code_fingerprint}
  if store:
    config[executor.METADATA_PATH_KEY] = store
  return CachedTransform(
    examples=examples,
    schema=schema,
    preprocessing_fn=module_transform.PREPROCESSING_FN,
    stats_options_updater_fn=module_transform.STATS_OPTIONS_UPDATER_FN if stats else None,
    custom_config=config,
  ).with_id(module_transform.TRANSFORM)
