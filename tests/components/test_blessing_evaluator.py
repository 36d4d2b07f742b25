"""BlessingEvaluator: min_accuracy is a parameter of its own, written into eval_config's
accuracy threshold by the executor."""

import json

import tensorflow_model_analysis as tfma
from tfx import v1 as tfx
from tfx.utils import proto_utils

from components.blessing_evaluator import executor
from components.blessing_evaluator.component import BlessingEvaluator
from contracts import evaluation


def _eval_config(lower_bound: float) -> tfma.EvalConfig:
  return tfma.EvalConfig(
    metrics_specs=[
      tfma.MetricsSpec(
        metrics=[
          tfma.MetricConfig(class_name='ExampleCount'),
          tfma.MetricConfig(
            class_name=evaluation.ACCURACY_METRIC,
            threshold=tfma.MetricThreshold(
              value_threshold=tfma.GenericValueThreshold(lower_bound={'value': lower_bound})
            ),
          ),
        ]
      )
    ]
  )


def test_min_accuracy_replaces_the_accuracy_lower_bound_only():
  folded = proto_utils.json_to_proto(
    executor.with_min_accuracy(proto_utils.proto_to_json(_eval_config(0.9)), 0.25),
    tfma.EvalConfig(),
  )
  count, accuracy = folded.metrics_specs[0].metrics
  assert accuracy.threshold.value_threshold.lower_bound.value == 0.25
  assert not count.HasField('threshold')


def test_min_accuracy_is_a_whole_parameter_a_compiled_spec_can_expose():
  examples = tfx.dsl.Channel(type=tfx.types.standard_artifacts.Examples)
  model = tfx.dsl.Channel(type=tfx.types.standard_artifacts.Model)
  parameter = tfx.dsl.experimental.RuntimeParameter(name='min_accuracy', ptype=float, default=0.9)
  evaluator = BlessingEvaluator(examples, model, None, _eval_config(0.9), parameter, 'fp')
  assert evaluator.exec_properties['min_accuracy'] is parameter
  assert json.loads(evaluator.exec_properties['eval_config'])['metrics_specs']
  assert set(evaluator.outputs) == {'evaluation', 'blessing'}
