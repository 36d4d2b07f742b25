"""What tests read back from a finished run's ML Metadata."""

import os
from typing import Dict

from metadata import run_reader


def latest_run(output: str, pipeline_name: str) -> Dict[str, run_reader.NodeRun]:
  """The executions of the newest run of `pipeline_name` in `output`'s metadata.sqlite, keyed by
  component id (resolvers left out)."""
  store = run_reader.open_store(os.path.join(output, 'metadata.sqlite'))
  runs = run_reader.pipeline_runs(store, pipeline_name)
  return run_reader.run_nodes(store, runs[-1]) if runs else {}
