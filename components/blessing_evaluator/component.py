"""BlessingEvaluator: TFX's Evaluator whose blessing threshold is a parameter of its own.

`min_accuracy` can then be a pipeline parameter of a compiled spec (TFX takes RuntimeParameters
only for whole parameters, not inside `eval_config`); the executor writes it into the accuracy
threshold of `eval_config` before TFX's Evaluator runs.
"""

from typing import Union

import tensorflow_model_analysis as tfma
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.orchestration import data_types
from tfx.types import channel, component_spec, standard_artifacts, standard_component_specs
from tfx.utils import json_utils, proto_utils

from components.blessing_evaluator import executor
from contracts import trainer_options


class BlessingEvaluatorSpec(component_spec.ComponentSpec):
  PARAMETERS = dict(
    standard_component_specs.EvaluatorSpec.PARAMETERS,
    min_accuracy=component_spec.ExecutionParameter(type=float),
    allow_missed_classes=component_spec.ExecutionParameter(type=int),
    min_eval_examples=component_spec.ExecutionParameter(type=int, optional=True),
    min_eval_class_examples=component_spec.ExecutionParameter(type=int, optional=True),
    code_fingerprint=component_spec.ExecutionParameter(type=str),
    max_damaged_percent=component_spec.ExecutionParameter(type=float, optional=True),
    task=component_spec.ExecutionParameter(type=str, optional=True),
    label=component_spec.ExecutionParameter(type=str, optional=True),
    regression_eval_config=component_spec.ExecutionParameter(type=str, optional=True),
  )
  INPUTS = dict(
    standard_component_specs.EvaluatorSpec.INPUTS,
    **{
      executor.MODEL_RUN_KEY: component_spec.ChannelParameter(
        type=standard_artifacts.ModelRun, optional=True
      )
    },
  )
  OUTPUTS = standard_component_specs.EvaluatorSpec.OUTPUTS


class BlessingEvaluator(base_beam_component.BaseBeamComponent):
  """Evaluator; blesses a classifier when eval accuracy ≥ min_accuracy (eval_config's other
  thresholds too) and it predicts every class of the eval split at least once; a regression
  model on eval_config's thresholds (eval_config.build_regression)."""

  SPEC_CLASS = BlessingEvaluatorSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

  def __init__(
    self,
    examples,
    model,
    baseline_model,
    eval_config: tfma.EvalConfig,
    min_accuracy: Union[float, data_types.RuntimeParameter],
    code_fingerprint: str = '',
    allow_missed_classes: bool = False,
    min_eval_examples: int = 0,
    min_eval_class_examples: int = 0,
    max_damaged_percent: float = 1.0,
    task: str = trainer_options.CLASSIFICATION,
    model_run=None,
    label: str = '',
    regression_eval_config=None,
  ):
    """baseline_model: the model to compare with (a Resolver's output; empty: none yet).
    eval_config's accuracy threshold says the default; min_accuracy (a value or a
    RuntimeParameter) is what the run uses. allow_missed_classes: bless a model that never
    predicts some class of the eval split (by default it is not blessed). min_eval_examples,
    min_eval_class_examples: no model is blessed on fewer eval examples, nor a classifier on
    fewer of one of its classes (0: not checked; the run's: config.py). max_damaged_percent:
    more of the eval records damaged or missing stops it (components/read_examples.py).
    task: trainer_options.REGRESSION judges a regression model (eval_config.build_regression's
    config, the mean predictor's figures from model_run, the Trainer's training.json); any other
    value, a classifier. label, regression_eval_config: a module file's model (user_model.py)
    is scored against label's transformed output, by regression_eval_config (a tfma.EvalConfig)
    when it predicts a number."""
    super().__init__(
      spec=BlessingEvaluatorSpec(
        examples=examples,
        model=model,
        baseline_model=baseline_model,
        eval_config=eval_config,
        example_splits=json_utils.dumps(None),
        fairness_indicator_thresholds=json_utils.dumps(None),
        min_accuracy=min_accuracy,
        allow_missed_classes=int(allow_missed_classes),
        min_eval_examples=min_eval_examples,
        min_eval_class_examples=min_eval_class_examples,
        code_fingerprint=code_fingerprint,
        max_damaged_percent=max_damaged_percent,
        task=task,
        model_run=model_run,
        label=label,
        regression_eval_config=(
          proto_utils.proto_to_json(regression_eval_config) if regression_eval_config else ''
        ),
        evaluation=channel.Channel(type=standard_artifacts.ModelEvaluation),
        blessing=channel.Channel(type=standard_artifacts.ModelBlessing),
      )
    )
