"""TFX's Vertex AI Training executor, started with the `train_steps` and `learning_rate`
parameters folded in (executor.with_parameters). A module of its own: TFX's Vertex AI extension
imports the Vertex AI client (~1.5 s), which only a pipeline that trains on Vertex AI needs.
"""

from tfx.extensions.google_cloud_ai_platform.trainer import executor as vertex_executor

from components.recording_trainer.executor import with_parameters


class Executor(vertex_executor.GenericExecutor):
  """TFX's Vertex AI Training executor, started with the parameters folded in."""

  def Do(self, input_dict, output_dict, exec_properties):
    super().Do(input_dict, output_dict, with_parameters(exec_properties, input_dict))
