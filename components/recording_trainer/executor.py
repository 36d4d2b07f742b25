"""The stock Trainer executor, plus what the input pipeline lost, recorded on the Model artifact.

run_fn writes <model_run>/input_damage.json (trainer/task.py); this copies its totals to custom
properties of the Model (`input_corrupt_records`, `input_lost_bytes`, `input_truncated_bytes`,
`input_damaged_shards`, `input_lost_fraction`), so ML Metadata says which models were trained on
salvaged data.
"""

import json
import os

from tfx.components.trainer import executor as trainer_executor
from tfx.dsl.io import fileio
from tfx.types import artifact_utils, standard_component_specs

from contracts import artifacts

INT_PROPERTIES = {
  'corrupt': 'input_corrupt_records',
  'lost_bytes': 'input_lost_bytes',
  'truncated_bytes': 'input_truncated_bytes',
  'damaged_shards': 'input_damaged_shards',
}


class Executor(trainer_executor.GenericExecutor):
  """GenericExecutor (run_fn) + input damage custom properties on the Model."""

  def Do(self, input_dict, output_dict, exec_properties):
    super().Do(input_dict, output_dict, exec_properties)
    model = artifact_utils.get_single_instance(output_dict[standard_component_specs.MODEL_KEY])
    model_run = artifact_utils.get_single_instance(
      output_dict[standard_component_specs.MODEL_RUN_KEY]
    )
    path = os.path.join(model_run.uri, artifacts.DAMAGE_FILE)
    if not fileio.exists(path):
      return
    with fileio.open(path, 'r') as f:
      damage = json.load(f)
    for key, name in INT_PROPERTIES.items():
      model.set_int_custom_property(name, int(damage[key]))
    model.set_float_custom_property('input_lost_fraction', float(damage['lost_fraction']))
