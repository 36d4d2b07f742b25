"""The splits and record counts an Examples artifact has in ML Metadata, for `pipeline.py verify`:
its recorded splits, and the counts recorded with it or counted by StatisticsGen from it."""

import dataclasses
import json
import os
from typing import Dict, List, Optional

from contracts import artifacts
from metadata import connection


@dataclasses.dataclass
class Recorded:
  """What an Examples artifact records about itself, and where that was read."""

  splits: List[str]
  counts: Dict[str, int]
  source: str  # of the splits
  counts_source: str = ''  # 'recorded in image_meta.json', 'counted by StatisticsGen', …


class Reader:
  """Examples artifacts as ML Metadata (a `metadata_file` in a folder above) records them."""

  def __init__(self, metadata_file: str):
    self._metadata_file = metadata_file
    self._stores = {}

  def _store(self, folder: str):
    """(store, the folder the metadata file is in), from the nearest folder up that has one."""
    here = folder
    while True:
      path = os.path.join(here, self._metadata_file)
      if os.path.isfile(path):
        break
      if os.path.dirname(here) == here:
        return None, ''
      here = os.path.dirname(here)
    if path not in self._stores:
      try:
        self._stores[path] = connection.open_read_only(path)
      except Exception:  # damaged or not ML Metadata: the artifact's own files say what they can
        self._stores[path] = None
    return self._stores[path], here

  def recorded(self, folder: str) -> Optional[Recorded]:
    store, root = self._store(folder)
    if store is None:
      return None
    try:
      return self._recorded(store, root, folder)
    except Exception:  # an unreadable store is no record; the files present are still checked
      return None

  def _recorded(self, store, root: str, folder: str) -> Optional[Recorded]:
    # The URI recorded, or (an output folder moved or copied) one ending the same way.
    tail = os.sep + os.path.relpath(folder, root)
    found = store.get_artifacts_by_uri(folder) or [
      a for a in store.get_artifacts_by_type('Examples') if a.uri.endswith(tail)
    ]
    examples_type = store.get_artifact_type('Examples')
    found = [a for a in found if a.type_id == examples_type.id]
    if not found:
      return None
    artifact = max(found, key=lambda a: a.id)
    if 'split_names' not in artifact.properties:
      return None
    splits = [str(s) for s in json.loads(artifact.properties['split_names'].string_value)]
    recorded = Recorded(splits, {}, 'ML Metadata')
    if 'split_counts' in artifact.custom_properties:
      counts = json.loads(artifact.custom_properties['split_counts'].string_value)
      recorded.counts = {str(s): int(n) for s, n in counts.items()}
      recorded.counts_source = 'recorded in ML Metadata'
    else:
      moved_from = artifact.uri[: len(artifact.uri) - len(tail)] if artifact.uri != folder else ''
      recorded.counts = _statistics_counts(store, artifact, splits, moved_from, root)
      recorded.counts_source = 'counted by StatisticsGen' if recorded.counts else ''
    return recorded


def _statistics_counts(store, examples, splits: List[str], moved_from: str, root: str):
  """num_examples per split of the newest ExampleStatistics computed from `examples` (TFX's
  ExampleGens record no counts of their own); {} if there is none to read."""
  from ml_metadata.proto import metadata_store_pb2
  from tensorflow_metadata.proto.v0 import statistics_pb2

  event = metadata_store_pb2.Event
  executions = [
    e.execution_id for e in store.get_events_by_artifact_ids([examples.id]) if e.type == event.INPUT
  ]
  if not executions:
    return {}
  outputs = [
    e.artifact_id for e in store.get_events_by_execution_ids(executions) if e.type == event.OUTPUT
  ]
  statistics_type = store.get_artifact_type('ExampleStatistics')
  found = [a for a in store.get_artifacts_by_id(outputs) if a.type_id == statistics_type.id]
  if not found:
    return {}
  uri = max(found, key=lambda a: a.id).uri
  if moved_from and uri.startswith(moved_from):
    uri = root + uri[len(moved_from) :]
  counts = {}
  for split in splits:
    path = artifacts.statistics_path(uri, split)
    try:
      with open(path, 'rb') as f:
        statistics = statistics_pb2.DatasetFeatureStatisticsList.FromString(f.read())
    except Exception:  # missing, or protobuf's DecodeError: no count to compare
      return {}
    counts[split] = sum(d.num_examples for d in statistics.datasets)
  return counts
