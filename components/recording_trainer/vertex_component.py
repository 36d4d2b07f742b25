"""VertexTrainer: RecordingTrainer training as a Vertex AI custom job (TFX's executor, after the
parameters' fold). Imported only by a pipeline that trains on Vertex AI (vertex_executor.py).
"""

from tfx.dsl.components.base import executor_spec

from components.recording_trainer import vertex_executor
from components.recording_trainer.component import RecordingTrainer


class VertexTrainer(RecordingTrainer):
  """The same component training as a Vertex AI custom job."""

  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(vertex_executor.Executor)
