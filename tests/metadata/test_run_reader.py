"""Execution properties followed to their leaves."""

from metadata import run_reader


def test_property_leaves_are_named_by_their_key_or_by_their_path():
  value = '{"splits": {"train": 8, "eval": 2}, "seed": 1}'
  assert run_reader.property_leaves('output_config', value) == {'train': 8, 'eval': 2, 'seed': 1}
  assert run_reader.property_leaves('output_config', value, keep_path=True) == {
    'output_config.splits.train': 8,
    'output_config.splits.eval': 2,
    'output_config.seed': 1,
  }
  assert run_reader.property_leaves('model_source', '{not json') == {'model_source': '{not json'}


def test_the_data_s_content_in_an_example_gen_s_key_is_data_not_code(tmp_path):
  """cache_keys.data_fingerprint puts the data's digest in the ExampleGen's code_fingerprint:
  a change of it reads `input data changed`, and `compare` does not list it as code."""
  import json

  from ml_metadata.metadata_store import metadata_store
  from ml_metadata.proto import metadata_store_pb2

  from metadata import run_reader
  from utils import data_index

  config = metadata_store_pb2.ConnectionConfig()
  config.sqlite.filename_uri = str(tmp_path / 'metadata.sqlite')
  store = metadata_store.MetadataStore(config)
  kind = store.put_execution_type(metadata_store_pb2.ExecutionType(name='ExampleGen'))

  def facts(content: str) -> dict:
    execution = metadata_store_pb2.Execution(type_id=kind)
    code = {'components/x.py': 'aaaa', data_index.DATA_KEY + '/data': content}
    execution.custom_properties['code_fingerprint'].string_value = json.dumps(code)
    execution.custom_properties['input_fingerprint'].string_value = 'split:single_split,size:9'
    [execution_id] = store.put_executions([execution])
    return run_reader.execution_facts(store, store.get_executions_by_id([execution_id])[0])

  before, after = facts('1111'), facts('2222')
  assert before['code'] == after['code'] == {'components/x.py': 'aaaa'}
  assert before['data'] != after['data']  # why_executed: `input data changed`
  assert after['data'] == ['split:single_split,size:9', {data_index.DATA_KEY + '/data': '2222'}]


def test_two_properties_holding_one_key_are_told_apart_in_any_order():
  """The Evaluator of a module-file run holds eval_config and regression_eval_config, both with
  model_specs and metrics_specs: two identical executions whose properties came in another order
  read the same (they read 'options changed (metrics_specs, model_specs)')."""
  classifier = '{"model_specs": [{"label_key": "tips"}], "metrics_specs": [1]}'
  regression = '{"model_specs": [{"label_key": "fare"}], "metrics_specs": [2]}'
  one = {'eval_config': classifier, 'regression_eval_config': regression, 'task': 'x'}
  other = dict(reversed(list(one.items())))
  assert list(other) != list(one)
  assert run_reader.options_of(one) == run_reader.options_of(other)
  assert run_reader.options_of(one) == {
    'eval_config.model_specs': [{'label_key': 'tips'}],
    'eval_config.metrics_specs': [1],
    'regression_eval_config.model_specs': [{'label_key': 'fare'}],
    'regression_eval_config.metrics_specs': [2],
    'task': 'x',
  }
  assert run_reader.options_of({'custom_config': '{"train_steps": 5}'}) == {'train_steps': 5}
