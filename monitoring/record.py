"""A monitoring run in ML Metadata: an execution of type metadata.lineage.MONITOR_EXECUTION that
used the serving model (input event 'model') and produced the serving data's statistics and
anomalies (output events 'statistics', 'anomalies'), so that `pipeline.py lineage` lists it under
the model and the next run finds its window to measure drift against."""

import json
import time
from typing import List

from metadata import connection
from metadata.lineage import MONITOR_EXECUTION

STATISTICS_TYPE, ANOMALIES_TYPE = 'ExampleStatistics', 'ExampleAnomalies'


def _type_id(put, proto_type, name: str, properties=()) -> int:
  """The type's id; TFX's own type where it exists (any fields it has kept)."""
  from ml_metadata.proto import metadata_store_pb2

  kind = proto_type(name=name)
  for key in properties:
    kind.properties[key] = metadata_store_pb2.STRING
  return put(kind, can_add_fields=True, can_omit_fields=True)


def record(
  metadata_path: str,
  model_id: int,
  serving_data: str,
  statistics_uri: str,
  anomalies_uri: str,
  summary_path: str,
  flagged: List[str],
) -> int:
  """Records one monitoring run; returns its execution id."""
  from ml_metadata.proto import metadata_store_pb2 as pb

  store = connection.open_read_write(metadata_path)
  execution_type = _type_id(
    store.put_execution_type,
    pb.ExecutionType,
    MONITOR_EXECUTION,
    ('serving_data', 'flagged', 'summary'),
  )
  statistics_type = _type_id(store.put_artifact_type, pb.ArtifactType, STATISTICS_TYPE)
  anomalies_type = _type_id(store.put_artifact_type, pb.ArtifactType, ANOMALIES_TYPE)
  execution = pb.Execution(type_id=execution_type, last_known_state=pb.Execution.COMPLETE)
  execution.name = f'monitor-{time.time_ns()}'
  execution.properties['serving_data'].string_value = serving_data
  execution.properties['flagged'].string_value = json.dumps(flagged)
  execution.properties['summary'].string_value = summary_path
  [model] = store.get_artifacts_by_id([model_id])

  def event(kind, key):
    e = pb.Event(type=kind)
    e.path.steps.add().key = key
    e.path.steps.add().index = 0
    return e

  produced = []
  for type_id, uri, key in (
    (statistics_type, statistics_uri, 'statistics'),
    (anomalies_type, anomalies_uri, 'anomalies'),
  ):
    artifact = pb.Artifact(type_id=type_id, uri=uri, state=pb.Artifact.LIVE)
    if key == 'statistics':  # a TFX ExampleStatistics: its split, as TFDV's tools read it
      artifact.custom_properties['split_names'].string_value = '["serving"]'
    produced.append((artifact, event(pb.Event.OUTPUT, key)))
  execution_id, _, _ = store.put_execution(
    execution, [(model, event(pb.Event.INPUT, 'model'))] + produced, []
  )
  return execution_id
