"""TFX's Pusher executor that does not push a model again when it is the one serving."""

from tfx.components.pusher import executor as pusher_executor
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components.serving_pusher import versions
from contracts import evaluation


class Executor(pusher_executor.Executor):
  def Do(self, input_dict, output_dict, exec_properties):
    destination = pusher_pb2.PushDestination()
    proto_utils.json_to_proto(
      exec_properties[standard_component_specs.PUSH_DESTINATION_KEY], destination
    )
    if destination.HasField('filesystem') and self.CheckBlessing(input_dict):
      serving = versions.serving_copy(
        self.GetModelPath(input_dict), destination.filesystem.base_directory
      )
      if serving:
        pushed = artifact_utils.get_single_instance(
          output_dict[standard_component_specs.PUSHED_MODEL_KEY]
        )
        self._MarkNotPushed(pushed)
        pushed.set_string_custom_property(evaluation.ALREADY_SERVING, serving)
        return
    super().Do(input_dict, output_dict, exec_properties)
