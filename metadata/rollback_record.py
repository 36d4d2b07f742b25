"""A rollback in ML Metadata: an earlier pushed version made the serving one again
(`pipeline.py rollback`, docs/design/rollback.md).

The pipeline's `serving_model` Resolver (TFX's LatestBlessedModelStrategy) takes the blessed Model
with the highest id of the pipeline's context. So a rollback records an execution of type
ROLLBACK_EXECUTION that used the rolled-back Model and its PushedModel (inputs 'model',
'rolled_back_from') and produced, in the pipeline's context: a new Model on the same files (the
same uri: the Evaluator sees a candidate on those files as the serving model itself), a
ModelBlessing blessing it, and a PushedModel for the new version. The next run's Resolver then
finds the rolled-back model as the baseline, and `lineage` lists the push. A model older than such
a copy that a later run pushes again gets a blessed copy too (`keep_baseline`, after each run), so
that the baseline is always the model serving.
"""

import os
import time
from typing import List, Optional

from metadata import connection
from metadata.run_reader import property_value

ROLLBACK_EXECUTION = 'pipeline.py rollback'
ROLLED_BACK_FROM = 'rolled_back_from'  # the input key of the PushedModel rolled back to
COPY_OF = 'copy_of'  # a Model's (and its blessing's) property: the id of the model it copies
# A model pushed again after a rollback, named the Resolver's baseline again (keep_baseline).
SERVING_AGAIN = 'pipeline.py run: serving model named again'


def pushed_model(store, destination: str) -> Optional[tuple]:
  """(the PushedModel pushed to `destination`, the id of the Model pushed), or None when no
  push of this store went there."""
  from ml_metadata.proto import metadata_store_pb2 as pb

  for pushed in store.get_artifacts_by_type('PushedModel'):
    if not property_value(pushed, 'pushed') or (
      str(property_value(pushed, 'pushed_destination') or '').rstrip('/') != destination.rstrip('/')
    ):
      continue
    events = store.get_events_by_artifact_ids([pushed.id])
    producer = next((e.execution_id for e in events if e.type == pb.Event.OUTPUT), None)
    if producer is None:
      continue
    for event in store.get_events_by_execution_ids([producer]):
      keys = [step.key for step in event.path.steps if step.HasField('key')]
      if event.type == pb.Event.INPUT and 'model' in keys:
        return pushed, event.artifact_id
  return None


def _event(kind: int, key: str):
  from ml_metadata.proto import metadata_store_pb2 as pb

  event = pb.Event(type=kind)
  event.path.steps.add().key = key
  event.path.steps.add().index = 0
  return event


def pushed_model_id(metadata_path: str, destination: str) -> Optional[int]:
  """The id of the Model pushed to `destination`, or None when no push of this store went
  there."""
  found = pushed_model(connection.open_read_only(metadata_path), destination)
  return found[1] if found else None


def record(
  metadata_path: str,
  pipeline_name: str,
  source: str,
  destination: str,
  reason: str,
) -> int:
  """Records the rollback of the version pushed to `source` as a copy at `destination` (the
  version is each folder's name); returns the execution's id. LookupError when no push of this
  store went to `source`."""
  from ml_metadata.proto import metadata_store_pb2 as pb

  store = connection.open_read_write(metadata_path)
  from_version, version = (os.path.basename(p.rstrip('/')) for p in (source, destination))
  found = pushed_model(store, source)
  if found is None:
    raise LookupError(source)
  pushed, model_id = found
  [model] = store.get_artifacts_by_id([model_id])
  execution_type = store.put_execution_type(
    pb.ExecutionType(
      name=ROLLBACK_EXECUTION,
      properties={name: pb.STRING for name in ('reason', 'from_version', 'version')},
    ),
    can_add_fields=True,
    can_omit_fields=True,
  )
  execution = pb.Execution(type_id=execution_type, last_known_state=pb.Execution.COMPLETE)
  execution.name = f'rollback-{time.time_ns()}'
  for name, value in (('reason', reason), ('from_version', from_version), ('version', version)):
    execution.properties[name].string_value = value
  copy, blessing = _blessed_copy(store, model, destination)
  push = pb.Artifact(type_id=pushed.type_id, uri=destination, state=pb.Artifact.LIVE)
  push.custom_properties['pushed'].int_value = 1
  push.custom_properties['pushed_destination'].string_value = destination
  push.custom_properties['pushed_version'].string_value = version
  context = store.get_context_by_type_and_name('pipeline', pipeline_name)
  execution_id, _, _ = store.put_execution(
    execution,
    [
      (model, _event(pb.Event.INPUT, 'model')),
      (pushed, _event(pb.Event.INPUT, ROLLED_BACK_FROM)),
      (copy, _event(pb.Event.OUTPUT, 'model')),
      (blessing, _event(pb.Event.OUTPUT, 'blessing')),
      (push, _event(pb.Event.OUTPUT, 'pushed_model')),
    ],
    [context] if context is not None else [],
  )
  return execution_id


def _blessed_copy(store, model, destination: str) -> tuple:
  """A new Model on `model`'s files (stored: the blessing names its id) and a ModelBlessing
  blessing it: what LatestBlessedModelStrategy takes from now on."""
  from ml_metadata.proto import metadata_store_pb2 as pb

  copy = pb.Artifact(type_id=model.type_id, uri=model.uri, state=pb.Artifact.LIVE)
  copy.custom_properties[COPY_OF].int_value = model.id
  [copy_id] = store.put_artifacts([copy])
  [copy] = store.get_artifacts_by_id([copy_id])
  blessing_type = store.get_artifact_type('ModelBlessing')
  blessing = pb.Artifact(
    type_id=blessing_type.id, uri=f'{destination}#blessing', state=pb.Artifact.LIVE
  )
  blessing.custom_properties['blessed'].int_value = 1
  blessing.custom_properties['current_model_id'].int_value = copy_id
  blessing.custom_properties['current_model'].string_value = model.uri
  blessing.custom_properties[COPY_OF].int_value = model.id
  return copy, blessing


def keep_baseline(metadata_path: str, pipeline_name: str, destination: str) -> Optional[int]:
  """After a run pushed to `destination`: when the model it pushed is older than a rollback's
  copy (a model pushed again after a rollback), a blessed copy of it too, so that the Resolver's
  baseline is the serving model again; the execution's id, None when none was needed."""
  from ml_metadata.proto import metadata_store_pb2 as pb

  store = connection.open_read_write(metadata_path)
  copies = [m.id for m in store.get_artifacts_by_type('Model') if COPY_OF in m.custom_properties]
  found = pushed_model(store, destination) if copies else None
  if found is None or found[1] > max(copies):
    return None
  [model] = store.get_artifacts_by_id([found[1]])
  copy, blessing = _blessed_copy(store, model, destination)
  execution = pb.Execution(
    type_id=store.put_execution_type(pb.ExecutionType(name=SERVING_AGAIN)),
    last_known_state=pb.Execution.COMPLETE,
  )
  context = store.get_context_by_type_and_name('pipeline', pipeline_name)
  execution_id, _, _ = store.put_execution(
    execution,
    [
      (model, _event(pb.Event.INPUT, 'model')),
      (copy, _event(pb.Event.OUTPUT, 'model')),
      (blessing, _event(pb.Event.OUTPUT, 'blessing')),
    ],
    [context] if context is not None else [],
  )
  return execution_id


def rollbacks(store) -> List[dict]:
  """Every rollback, oldest first: {'execution_id', 'when', 'from_version', 'version', 'path',
  'reason', 'model_id' (the rolled-back model), 'copy_id' (its copy, the Resolver's baseline)}."""
  import datetime

  from ml_metadata.proto import metadata_store_pb2 as pb

  found = []
  for execution in sorted(store.get_executions_by_type(ROLLBACK_EXECUTION), key=lambda e: e.id):
    inputs, outputs = {}, {}
    for event in store.get_events_by_execution_ids([execution.id]):
      keys = [step.key for step in event.path.steps if step.HasField('key')]
      (inputs if event.type == pb.Event.INPUT else outputs).update(
        {key: event.artifact_id for key in keys}
      )
    push = store.get_artifacts_by_id([outputs['pushed_model']]) if 'pushed_model' in outputs else []
    found.append(
      {
        'execution_id': execution.id,
        'when': datetime.datetime.fromtimestamp(execution.create_time_since_epoch / 1000).isoformat(
          sep=' ', timespec='seconds'
        ),
        'from_version': property_value(execution, 'from_version'),
        'version': property_value(execution, 'version'),
        'path': property_value(push[0], 'pushed_destination') if push else None,
        'reason': property_value(execution, 'reason') or '',
        'model_id': inputs.get('model'),
        'copy_id': outputs.get('model'),
      }
    )
  return found
