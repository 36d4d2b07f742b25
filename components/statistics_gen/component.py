"""StatisticsGen: TFX's, with small data's statistics computed in process (executor.py).

The same inputs, outputs and parameters as TFX's StatisticsGen plus `in_process_below_bytes`
(0: always TFX's Beam pipeline) and the code fingerprint for the cache key.
"""

from tfx.components.statistics_gen.component import StatisticsGen as StockStatisticsGen
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts, standard_component_specs

from components import specs
from components.statistics_gen import executor


class StatisticsGenSpec(component_spec.ComponentSpec):
  PARAMETERS = specs.parameters(
    standard_component_specs.StatisticsGenSpec,
    **{executor.IN_PROCESS_BELOW_BYTES: component_spec.ExecutionParameter(type=int)},
  )
  INPUTS = standard_component_specs.StatisticsGenSpec.INPUTS
  OUTPUTS = standard_component_specs.StatisticsGenSpec.OUTPUTS


class StatisticsGen(StockStatisticsGen):
  SPEC_CLASS = StatisticsGenSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

  def __init__(self, examples, in_process_below_bytes: int, code_fingerprint: str = ''):
    """examples: an Examples channel (tf.Example payloads take the in-process path)."""
    spec = StatisticsGenSpec(
      examples=examples,
      in_process_below_bytes=in_process_below_bytes,
      code_fingerprint=code_fingerprint,
      exclude_splits='[]',
      statistics=channel.Channel(type=standard_artifacts.ExampleStatistics),
    )
    base_beam_component.BaseBeamComponent.__init__(self, spec=spec)
