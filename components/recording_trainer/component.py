"""RecordingTrainer: TFX's Trainer whose Model artifact also says what the input pipeline lost.

Same spec, parameters and run_fn as `tfx.components.Trainer`; only the executor differs (see
executor.py). The Vertex AI Training variant keeps TFX's own executor.
"""

from tfx import v1 as tfx
from tfx.dsl.components.base import executor_spec

from components.recording_trainer import executor


class RecordingTrainer(tfx.components.Trainer):
  """Trainer + input damage (corrupt records, lost bytes) as custom properties of the Model."""

  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)
