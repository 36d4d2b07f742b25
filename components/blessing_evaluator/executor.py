"""TFX's Evaluator executor, with the run's values written into eval_config first: the
`min_accuracy` parameter and the candidate model's class ids (eval_config.with_parameters)."""

import os

from tensorflow.core.protobuf import saved_model_pb2
from tfx.components.evaluator import executor as evaluator_executor
from tfx.dsl.io import fileio
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import path_utils

from components.blessing_evaluator import eval_config
from contracts import serving


def num_classes(saved_model_dir: str) -> int:
  """The width of serving_default's probabilities, read from saved_model.pb (no model load)."""
  saved = saved_model_pb2.SavedModel()
  with fileio.open(os.path.join(saved_model_dir, 'saved_model.pb'), 'rb') as f:
    saved.ParseFromString(f.read())
  signature = saved.meta_graphs[0].signature_def[serving.SERVING_DEFAULT]
  return signature.outputs[serving.PROBABILITIES].tensor_shape.dim[-1].size


class Executor(evaluator_executor.Executor):
  def Do(self, input_dict, output_dict, exec_properties):
    key = standard_component_specs.EVAL_CONFIG_KEY
    model = artifact_utils.get_single_instance(input_dict[standard_component_specs.MODEL_KEY])
    classes = num_classes(path_utils.serving_model_path(model.uri))
    min_accuracy = exec_properties.get('min_accuracy')
    exec_properties = dict(
      exec_properties,
      **{
        key: eval_config.with_parameters(
          exec_properties[key],
          float(min_accuracy) if min_accuracy is not None else None,
          classes,
        )
      },
    )
    super().Do(input_dict, output_dict, exec_properties)
