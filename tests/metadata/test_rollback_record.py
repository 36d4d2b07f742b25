"""metadata/rollback_record.py on a small store made here: a rollback makes the rolled-back
model the one TFX's LatestBlessedModelStrategy resolves, and a model pushed again after it is
named the baseline again (the whole story on real runs: tests/e2e/test_runs.py)."""

import pytest

from metadata import connection, rollback_record
from metadata.run_reader import property_value

PIPELINE = 'tfrecord-pipeline'


@pytest.fixture
def store_path(tmp_path):
  """Two trained models, each blessed and pushed by a Pusher execution (v1: model A, v2: B)."""
  from ml_metadata.proto import metadata_store_pb2 as pb

  path = str(tmp_path / 'metadata.sqlite')
  store = connection.open_or_create(path)
  types = {
    name: store.put_artifact_type(pb.ArtifactType(name=name))
    for name in ('Model', 'ModelBlessing', 'PushedModel')
  }
  pusher = store.put_execution_type(pb.ExecutionType(name='Pusher'))
  context_type = store.put_context_type(pb.ContextType(name='pipeline'))
  [context] = store.put_contexts([pb.Context(type_id=context_type, name=PIPELINE)])
  [context] = store.get_contexts_by_id([context])
  for version in ('1', '2'):
    model = pb.Artifact(type_id=types['Model'], uri=f'/out/Trainer/model/{version}')
    [model.id] = store.put_artifacts([model])
    blessing = pb.Artifact(type_id=types['ModelBlessing'], uri=f'/out/blessing/{version}')
    blessing.custom_properties['blessed'].int_value = 1
    blessing.custom_properties['current_model_id'].int_value = model.id
    push = pb.Artifact(type_id=types['PushedModel'], uri=f'/out/push/{version}')
    push.custom_properties['pushed'].int_value = 1
    push.custom_properties['pushed_destination'].string_value = f'/out/serving/{version}'
    events = [
      (model, _event(pb.Event.INPUT, 'model')),
      (blessing, _event(pb.Event.INPUT, 'model_blessing')),
      (push, _event(pb.Event.OUTPUT, 'pushed_model')),
    ]
    store.put_execution(pb.Execution(type_id=pusher), events, [context])
  return path


def _event(kind, key):
  from ml_metadata.proto import metadata_store_pb2 as pb

  event = pb.Event(type=kind)
  event.path.steps.add().key = key
  return event


def _resolved(path: str) -> int:
  """What LatestBlessedModelStrategy returns (the blessed Model of highest id), as the model
  whose files it holds."""
  store = connection.open_read_only(path)
  blessed = [
    property_value(b, 'current_model_id')
    for b in store.get_artifacts_by_type('ModelBlessing')
    if property_value(b, 'blessed')
  ]
  [model] = store.get_artifacts_by_id([max(blessed)])
  return property_value(model, rollback_record.COPY_OF) or model.id


def test_a_rollback_makes_the_earlier_model_the_resolved_baseline_with_its_reason(store_path):
  first = rollback_record.pushed_model_id(store_path, '/out/serving/1')
  assert rollback_record.pushed_model_id(store_path, '/out/serving/2') == _resolved(store_path)
  rollback_record.record(store_path, PIPELINE, '/out/serving/1', '/out/serving/3', 'bad answers')
  assert _resolved(store_path) == first
  [rollback] = rollback_record.rollbacks(connection.open_read_only(store_path))
  assert {k: rollback[k] for k in ('from_version', 'version', 'path', 'reason', 'model_id')} == {
    'from_version': '1',
    'version': '3',
    'path': '/out/serving/3',
    'reason': 'bad answers',
    'model_id': first,
  }
  store = connection.open_read_only(store_path)
  [copy] = store.get_artifacts_by_id([rollback['copy_id']])
  assert copy.uri == '/out/Trainer/model/1'  # the Evaluator loads the rolled-back files
  context = store.get_context_by_type_and_name('pipeline', PIPELINE)
  assert copy.id in [a.id for a in store.get_artifacts_by_context(context.id)]  # the Resolver's
  assert rollback_record.pushed_model_id(store_path, '/out/serving/3') == first


def test_a_version_no_push_went_to_is_not_rolled_back(store_path):
  with pytest.raises(LookupError):
    rollback_record.record(store_path, PIPELINE, '/out/serving/9', '/out/serving/10', '')
  assert rollback_record.pushed_model_id(store_path, '/out/serving/9') is None


def test_a_model_pushed_again_after_a_rollback_is_the_baseline_again(store_path):
  second = rollback_record.pushed_model_id(store_path, '/out/serving/2')
  assert rollback_record.keep_baseline(store_path, PIPELINE, '/out/serving/2') is None  # no copy
  rollback_record.record(store_path, PIPELINE, '/out/serving/1', '/out/serving/3', '')
  # a run pushes model B again, as version 4 (its Pusher's push, made here by hand)
  from ml_metadata.proto import metadata_store_pb2 as pb

  store = connection.open_read_write(store_path)
  [model] = store.get_artifacts_by_id([second])
  push = pb.Artifact(type_id=store.get_artifact_type('PushedModel').id, uri='/out/push/4')
  push.custom_properties['pushed'].int_value = 1
  push.custom_properties['pushed_destination'].string_value = '/out/serving/4'
  store.put_execution(
    pb.Execution(type_id=store.get_execution_type('Pusher').id),
    [(model, _event(pb.Event.INPUT, 'model')), (push, _event(pb.Event.OUTPUT, 'pushed_model'))],
    [],
  )
  assert rollback_record.keep_baseline(store_path, PIPELINE, '/out/serving/4') is not None
  assert _resolved(store_path) == second
  assert rollback_record.rollbacks(connection.open_read_only(store_path))[0]['version'] == '3'
