"""TFX's Evaluator executor, with the `min_accuracy` parameter written into eval_config first."""

import tensorflow_model_analysis as tfma
from tfx.components.evaluator import executor as evaluator_executor
from tfx.types import standard_component_specs
from tfx.utils import proto_utils

from contracts import evaluation


def with_min_accuracy(eval_config_json: str, min_accuracy: float) -> str:
  """eval_config (as TFX passes it, JSON) with every accuracy metric's lower bound set."""
  eval_config = proto_utils.json_to_proto(eval_config_json, tfma.EvalConfig())
  for metrics_spec in eval_config.metrics_specs:
    for metric in metrics_spec.metrics:
      if metric.class_name == evaluation.ACCURACY_METRIC:
        metric.threshold.value_threshold.lower_bound.value = min_accuracy
  return proto_utils.proto_to_json(eval_config)


class Executor(evaluator_executor.Executor):
  def Do(self, input_dict, output_dict, exec_properties):
    key = standard_component_specs.EVAL_CONFIG_KEY
    if exec_properties.get('min_accuracy') is not None:
      exec_properties = dict(
        exec_properties,
        **{key: with_min_accuracy(exec_properties[key], float(exec_properties['min_accuracy']))},
      )
    super().Do(input_dict, output_dict, exec_properties)
