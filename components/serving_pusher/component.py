"""ServingPusher: TFX's Pusher, except that a model already serving is not pushed again.

An unchanged re-run after a push blesses the same (cached) model once more; TFX's Pusher would
then write a second serving version of it. This one compares the model with the newest version
under the push destination (components/serving_pusher/versions.py) and, when they hold the same
files, marks the PushedModel not pushed with `already_serving` naming that version.
"""

from tfx.dsl.components.base import base_component, executor_spec
from tfx.proto import pusher_pb2
from tfx.types import channel, component_spec, standard_artifacts, standard_component_specs
from tfx.utils import json_utils

from components import specs
from components.serving_pusher import executor


class ServingPusherSpec(component_spec.ComponentSpec):
  PARAMETERS = specs.parameters(standard_component_specs.PusherSpec)
  INPUTS = standard_component_specs.PusherSpec.INPUTS
  OUTPUTS = standard_component_specs.PusherSpec.OUTPUTS


class ServingPusher(base_component.BaseComponent):
  """Pusher (filesystem destination) that skips a model the newest serving version already is."""

  SPEC_CLASS = ServingPusherSpec
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

  def __init__(
    self,
    model,
    model_blessing,
    infra_blessing,
    push_destination: pusher_pb2.PushDestination,
    code_fingerprint: str = '',
  ):
    super().__init__(
      spec=ServingPusherSpec(
        model=model,
        model_blessing=model_blessing,
        infra_blessing=infra_blessing,
        push_destination=push_destination,
        custom_config=json_utils.dumps(None),
        code_fingerprint=code_fingerprint,
        pushed_model=channel.Channel(type=standard_artifacts.PushedModel),
      )
    )
