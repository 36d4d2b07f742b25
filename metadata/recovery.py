"""Cleans up after a run that was killed (SIGKILL, power loss) before the next one starts.

A killed component leaves its execution RUNNING in ML Metadata and, on disk, half-written output
folders that no LIVE artifact points at (TFX publishes output artifacts only when an executor
returns, so nothing downstream can pick them up). The next run marks such executions CANCELED and
removes their folders: `pipeline_root/<component>/<output>/<execution id>/` and the executor's
scratch space `pipeline_root/<component>/.system/executor_execution/<execution id>/`.
"""

import os
from typing import List

from ml_metadata.proto import metadata_store_pb2
from tfx.dsl.io import fileio

from metadata import connection, run_reader

_RUNNING = metadata_store_pb2.Execution.RUNNING
_CANCELED = metadata_store_pb2.Execution.CANCELED


def cancel_interrupted(metadata_path: str, pipeline_root: str) -> List[str]:
  """Marks RUNNING executions CANCELED and removes their outputs; returns 'Component (id N)'s.

  Called with the output's run lock held (cli/output_lock.py), so every RUNNING execution belongs
  to a run whose process is gone.
  """
  if not os.path.exists(metadata_path):
    return []
  store = connection.open_or_create(metadata_path)
  stale = [e for e in store.get_executions() if e.last_known_state == _RUNNING]
  cancelled = []
  for execution in stale:
    execution.last_known_state = _CANCELED
    for folder in fileio.glob(
      os.path.join(pipeline_root, '*', '*', str(execution.id))
    ) + fileio.glob(
      os.path.join(pipeline_root, '*', '.system', 'executor_execution', str(execution.id))
    ):
      fileio.rmtree(folder)
    cancelled.append(f'{run_reader.node_id(store, execution)} (execution {execution.id})')
  if stale:
    store.put_executions(stale)
  return cancelled
