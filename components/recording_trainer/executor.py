"""The stock Trainer executor, plus what the input pipeline lost, recorded on the Model artifact.

run_fn writes <model_run>/input_damage.json (trainer/task.py); this copies its totals to custom
properties of the Model (`input_corrupt_records`, `input_lost_bytes`, `input_truncated_bytes`,
`input_damaged_shards`, `input_missing_records`: recorded by the ExampleGen and not read,
`input_lost_fraction`), so ML Metadata says which models were trained on
salvaged data. Both executors first fold the `train_steps` and `learning_rate` parameters into
`train_args` and `custom_config`, with the Examples' recorded split counts (with_parameters).
A run_fn's `fn_args.data_accessor` is the project's input pipeline unless custom_config's
`input_accessor` says 'tfx' (data_accessor.py; trainer.task.run_fn does not use it).
"""

import json
import os
from typing import Optional

from tfx.components.trainer import executor as trainer_executor
from tfx.dsl.io import fileio
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import io_utils, json_utils

from components.recording_trainer import data_accessor
from contracts import artifacts, splits, trainer_options

RAW_EXAMPLES_KEY = 'raw_examples'  # a module file's Trainer after Transform: the raw examples

INT_PROPERTIES = {
  'corrupt': 'input_corrupt_records',
  'lost_bytes': 'input_lost_bytes',
  'truncated_bytes': 'input_truncated_bytes',
  'damaged_shards': 'input_damaged_shards',
  'missing': 'input_missing_records',
}


def with_parameters(exec_properties: dict, input_dict: Optional[dict] = None) -> dict:
  """exec_properties whose train_args.num_steps and custom_config.learning_rate are the
    `train_steps` and `learning_rate` parameters (what a pipeline run may have set), and whose
    custom_config.recorded_counts are the input Examples' split_counts (what run_fn counts missing
    records against: trainer/task.py), and custom_config's RAW_SPLITS_KEY the raw examples'
  file patterns (a module file's Trainer after Transform)."""
  folded = dict(exec_properties)
  key = standard_component_specs.CUSTOM_CONFIG_KEY
  raw = (input_dict or {}).get(RAW_EXAMPLES_KEY)
  if raw:
    custom_config = json_utils.loads(folded.get(key) or '{}')
    custom_config[trainer_options.RAW_SPLITS_KEY] = {
      split: [io_utils.all_files_pattern(uri) for uri in artifact_utils.get_split_uris(raw, split)]
      for split in splits.SPLITS
    }
    folded[key] = json_utils.dumps(custom_config)
  examples = (input_dict or {}).get(standard_component_specs.EXAMPLES_KEY)
  counts = examples[0].get_string_custom_property('split_counts') if examples else ''
  if counts:
    custom_config = json_utils.loads(folded.get(key) or '{}')
    custom_config['recorded_counts'] = json.loads(counts)
    folded[key] = json_utils.dumps(custom_config)
  steps = exec_properties.get('train_steps')
  if steps is not None:
    train_args = json.loads(exec_properties.get(standard_component_specs.TRAIN_ARGS_KEY) or '{}')
    train_args['num_steps'] = int(steps)
    folded[standard_component_specs.TRAIN_ARGS_KEY] = json.dumps(train_args)
  rate = exec_properties.get('learning_rate')
  if rate is not None:
    custom_config = json_utils.loads(folded.get(key) or '{}')
    custom_config['learning_rate'] = float(rate)
    folded[key] = json_utils.dumps(custom_config)
  return folded


class Executor(trainer_executor.GenericExecutor):
  """GenericExecutor (run_fn) + input damage custom properties on the Model, and the project's
  input behind fn_args.data_accessor."""

  def _GetFnArgs(self, input_dict, output_dict, exec_properties):
    """TFX's FnArgs (GenericExecutor builds them here), the data accessor swapped."""
    fn_args = super()._GetFnArgs(input_dict, output_dict, exec_properties)
    return data_accessor.for_run_fn(fn_args, input_dict[standard_component_specs.EXAMPLES_KEY])

  def Do(self, input_dict, output_dict, exec_properties):
    super().Do(input_dict, output_dict, with_parameters(exec_properties, input_dict))
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
