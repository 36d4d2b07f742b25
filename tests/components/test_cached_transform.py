"""components/cached_transform: TFX's Transform given the last analyzer cache only when it
executes (its executor with TFX's own Do stubbed), and its construction for a module file."""

import json

import apache_beam as beam
from tfx.components.transform import executor as transform_executor
from tfx.dsl.components.base import base_beam_executor
from tfx.proto.orchestration import pipeline_pb2
from tfx.types import standard_artifacts

from components.cached_transform import component, executor
from metadata import transform_cache


def _executor():
  node = pipeline_pb2.PipelineNode()
  node.node_info.id = 'Transform'
  context = base_beam_executor.BaseBeamExecutor.Context(
    beam_pipeline_args=['--direct_running_mode=in_memory'],
    pipeline_node=node,
    pipeline_info=pipeline_pb2.PipelineInfo(id='taxi'),
  )
  return executor.Executor(context)


def _run(monkeypatch, custom_config, found='/root/Transform/updated_analyzer_cache/7'):
  """(the stock Do's input_dict, the lookups asked, the updated cache artifact)."""
  asked, seen = [], {}

  def newest(path, pipeline, node):
    asked.append((path, pipeline, node))
    if isinstance(found, Exception):
      raise found
    return found

  def stock_do(self, input_dict, output_dict, exec_properties):
    seen.update(input_dict)
    pipeline = self._make_beam_pipeline()  # as TFX's Transform builds its steps
    _ = (
      pipeline
      | 'OptimizeRun' >> beam.Create([1])
      | 'ReadCache/Read[AnalysisIndex0]][CacheKeyIndex3]' >> beam.Map(str)
    )
    _ = pipeline | 'WriteCache/Write[AnalysisIndex0][CacheKeyIndex9]' >> beam.Create([2])

  monkeypatch.setattr(transform_cache, 'newest', newest)
  monkeypatch.setattr(transform_executor.Executor, 'Do', stock_do)
  updated = standard_artifacts.TransformCache()
  outputs = {'updated_analyzer_cache': [updated]}
  properties = {'custom_config': json.dumps(custom_config)}
  _executor().Do({'examples': []}, outputs, properties)
  return seen, asked, updated


def test_the_last_cache_is_handed_to_transform_with_what_it_saved(monkeypatch):
  seen, asked, updated = _run(
    monkeypatch, {'module_file': 'm.py', 'metadata_path': '/out/metadata.sqlite'}
  )
  assert asked == [('/out/metadata.sqlite', 'taxi', 'Transform')]
  assert [a.uri for a in seen['analyzer_cache']] == ['/root/Transform/updated_analyzer_cache/7']
  assert (
    updated.get_string_custom_property(transform_cache.CACHE_FROM) == seen['analyzer_cache'][0].uri
  )
  assert updated.get_int_custom_property(transform_cache.FROM_CACHE) == 1
  assert updated.get_int_custom_property(transform_cache.COMPUTED) == 1


def test_no_cache_without_a_store_or_a_last_cache(monkeypatch):
  seen, asked, updated = _run(monkeypatch, {'module_file': 'm.py'})
  assert asked == [] and 'analyzer_cache' not in seen
  assert updated.get_string_custom_property(transform_cache.CACHE_FROM) == ''
  seen, asked, _ = _run(monkeypatch, {'metadata_path': '/out/metadata.sqlite'}, found=None)
  assert asked and 'analyzer_cache' not in seen


def test_an_unreadable_store_runs_transform_without_the_cache(monkeypatch, caplog):
  seen, _, _ = _run(monkeypatch, {'metadata_path': '/out/metadata.sqlite'}, found=OSError('locked'))
  assert 'analyzer_cache' not in seen
  assert 'no analyzer cache, the store could not be read: locked' in caplog.text


def test_a_module_files_transform_carries_the_store_unless_compiled():
  from tfx.types import channel

  examples = channel.Channel(type=standard_artifacts.Examples)
  schema = channel.Channel(type=standard_artifacts.Schema)
  built = component.transform(
    examples, schema, 'm.py', ['preprocessing_fn'], 'fp', '/out/metadata.sqlite'
  )
  config = json.loads(built.exec_properties['custom_config'])
  assert config == {
    'module_file': 'm.py',
    'code_fingerprint': 'fp',
    'metadata_path': '/out/metadata.sqlite',
  }
  assert built.id == 'Transform' and 'analyzer_cache' not in built.inputs
  assert 'updated_analyzer_cache' in built.outputs
  compiled = component.transform(examples, schema, 'm.py', ['preprocessing_fn'], 'fp')
  assert 'metadata_path' not in json.loads(compiled.exec_properties['custom_config'])
