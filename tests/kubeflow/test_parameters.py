"""Pipeline parameters of a compiled spec: declared types, compiled defaults, --param."""

import pytest

from contracts.errors import UserError
from kubeflow import parameters


def _job(runtime_config=None, default_in_spec=False):
  declared = {
    'data': {'type': 'STRING'},
    'train_steps': {'type': 'INT'},
    'learning_rate': {'parameterType': 'NUMBER_DOUBLE'},
  }
  if default_in_spec:
    declared['train_steps']['defaultValue'] = 600
  return {
    'pipelineSpec': {'root': {'inputDefinitions': {'parameters': declared}}},
    'runtimeConfig': runtime_config or {},
  }


def test_defaults_come_from_the_runtime_config_or_the_declaration():
  job = _job(
    {'parameters': {'data': {'stringValue': 'gs://b/d'}, 'train_steps': {'intValue': '9'}}}
  )
  assert parameters.defaults(job) == {'data': 'gs://b/d', 'train_steps': 9}
  assert parameters.defaults(_job(default_in_spec=True)) == {'train_steps': 600}


def test_overrides_are_typed_by_the_declaration():
  job = _job()
  assert parameters.overrides(['train_steps=800', 'learning_rate=0.01', 'data=a=b'], job) == {
    'train_steps': 800,
    'learning_rate': 0.01,
    'data': 'a=b',
  }


@pytest.mark.parametrize(
  'pair,message',
  [
    ('steps=3', 'no such parameter (it has: data, learning_rate, train_steps)'),
    ('train_steps=1.5', 'train_steps is an int'),
    ('learning_rate=fast', 'learning_rate is a float'),
    ('train_steps', 'want NAME=VALUE'),
    ('train_steps=-5', '--param train_steps=-5: must be positive'),  # as `run --train-steps`
    ('learning_rate=0', '--param learning_rate=0: must be positive'),
  ],
)
def test_a_bad_override_names_itself(pair, message):
  with pytest.raises(UserError) as raised:
    parameters.overrides([pair], _job())
  assert message in str(raised.value)


def test_every_parameter_needs_a_value():
  job = _job({'parameters': {'data': {'stringValue': 'gs://b/d'}}}, default_in_spec=True)
  with pytest.raises(UserError, match='no value for pipeline parameter learning_rate'):
    parameters.values(job)
  assert parameters.values(job, ['learning_rate=0.1'])['learning_rate'] == 0.1
