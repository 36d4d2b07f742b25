"""TFX's Tuner executor whose tuner_fn gets the project's input behind fn_args.data_accessor
(data_accessor.for_run_fn: custom_config's `input_accessor`), as the Trainer's run_fn does."""

from tfx.components.trainer import fn_args_utils
from tfx.components.tuner import executor as tuner_executor
from tfx.components.util import udf_utils
from tfx.types import standard_component_specs

from components.recording_trainer import data_accessor


class Executor(tuner_executor.Executor):
  """tuner_executor.search's steps (one search here, no TuneArgs), the accessor swapped."""

  def Do(self, input_dict, output_dict, exec_properties):
    if tuner_executor.get_tune_args(exec_properties):
      raise ValueError("TuneArgs is not supported by this Tuner's Executor.")
    tuner_fn = udf_utils.get_fn(exec_properties, 'tuner_fn')
    fn_args = fn_args_utils.get_common_fn_args(input_dict, exec_properties, self._get_tmp_dir())
    examples = input_dict[standard_component_specs.EXAMPLES_KEY]
    result = tuner_fn(data_accessor.for_run_fn(fn_args, examples))
    result.tuner.search_space_summary()
    result.tuner.search(**result.fit_kwargs)
    result.tuner.results_summary()
    tuner_executor.write_best_hyperparameters(result.tuner, output_dict)
