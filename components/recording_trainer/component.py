"""RecordingTrainer: TFX's Trainer whose Model artifact also says what the input pipeline lost,
and whose step count and learning rate are parameters of their own.

TFX's Trainer spec plus two parameters, `train_steps` and `learning_rate`: a compiled pipeline
can make them pipeline parameters (RuntimeParameter), which TFX allows only for whole parameters,
not for fields inside `train_args` or `custom_config`. The executor folds them back into those two
(executor.with_parameters), so `run_fn` sees them as usual. `vertex_component.VertexTrainer` is
the same component on TFX's Vertex AI Training executor. `TunedInputTuner`: TFX's Tuner whose
tuner_fn gets the same data accessor as run_fn (tuner_executor.py).
"""

from typing import Optional, Union

from tfx.components.tuner import component as tuner_component
from tfx.dsl.components.base import base_component, executor_spec
from tfx.orchestration import data_types
from tfx.proto import trainer_pb2
from tfx.types import channel, component_spec, standard_artifacts, standard_component_specs
from tfx.utils import json_utils

from components.recording_trainer import executor, tuner_executor

Number = Union[int, float, data_types.RuntimeParameter]


class RecordingTrainerSpec(component_spec.ComponentSpec):
  PARAMETERS = dict(
    standard_component_specs.TrainerSpec.PARAMETERS,
    train_steps=component_spec.ExecutionParameter(type=int),
    learning_rate=component_spec.ExecutionParameter(type=float),
  )
  INPUTS = dict(
    standard_component_specs.TrainerSpec.INPUTS,
    **{
      executor.RAW_EXAMPLES_KEY: component_spec.ChannelParameter(
        type=standard_artifacts.Examples, optional=True
      )
    },
  )
  OUTPUTS = standard_component_specs.TrainerSpec.OUTPUTS


class RecordingTrainer(base_component.BaseComponent):
  """Trainer (run_fn) + input damage (corrupt records, lost bytes) as Model custom properties."""

  SPEC_CLASS = RecordingTrainerSpec
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

  def __init__(
    self,
    run_fn: str,
    examples,
    schema,
    train_steps: Number,
    learning_rate: Number,
    eval_steps: Optional[int],
    custom_config: dict,
    hyperparameters=None,
    transform_graph=None,
    raw_examples=None,
  ):
    """train_steps and learning_rate: values, or RuntimeParameters whose defaults are the values;
    `train_args` and `custom_config` record the defaults. hyperparameters: the Tuner's
    best_hyperparameters, when tuning (run_fn's fn_args.hyperparameters). transform_graph:
    Transform's, for a module file's run_fn (fn_args.transform_graph_path). raw_examples: the
    examples before Transform, whose columns the leakage rules judge (custom_config's
    RAW_SPLITS_KEY)."""
    default = lambda value: getattr(value, 'default', value)  # noqa: E731
    super().__init__(
      spec=RecordingTrainerSpec(
        examples=examples,
        schema=schema,
        hyperparameters=hyperparameters,
        transform_graph=transform_graph,
        raw_examples=raw_examples,
        run_fn=run_fn,
        train_args=trainer_pb2.TrainArgs(num_steps=default(train_steps)),
        eval_args=trainer_pb2.EvalArgs(num_steps=eval_steps),
        custom_config=json_utils.dumps(dict(custom_config, learning_rate=default(learning_rate))),
        train_steps=train_steps,
        learning_rate=learning_rate,
        model=channel.Channel(type=standard_artifacts.Model),
        model_run=channel.Channel(type=standard_artifacts.ModelRun),
      )
    )


class TunedInputTuner(tuner_component.Tuner):
  """TFX's Tuner (local search) whose tuner_fn's fn_args.data_accessor is the project's input,
  unless custom_config's `input_accessor` is 'tfx' (tuner_executor.py)."""

  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(tuner_executor.Executor)
