"""BulkInferrer: TFX's, with live progress and damaged shards judged and read around
(executor.py); the same inputs, outputs and parameters plus the code fingerprint for the cache
key and max_damaged_percent."""

from tfx.components.bulk_inferrer.component import BulkInferrer as StockBulkInferrer
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.proto import bulk_inferrer_pb2
from tfx.types import channel, component_spec, standard_artifacts, standard_component_specs

from components import specs
from components.bulk_inferrer import executor


class BulkInferrerSpec(component_spec.ComponentSpec):
  PARAMETERS = specs.parameters(
    standard_component_specs.BulkInferrerSpec,
    max_damaged_percent=component_spec.ExecutionParameter(type=float, optional=True),
  )
  INPUTS = standard_component_specs.BulkInferrerSpec.INPUTS
  OUTPUTS = standard_component_specs.BulkInferrerSpec.OUTPUTS


class BulkInferrer(StockBulkInferrer):
  SPEC_CLASS = BulkInferrerSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

  def __init__(
    self,
    examples,
    model,
    model_blessing,
    data_spec: bulk_inferrer_pb2.DataSpec,
    model_spec: bulk_inferrer_pb2.ModelSpec,
    code_fingerprint: str = '',
    max_damaged_percent: float = 1.0,
  ):
    """As TFX's BulkInferrer writing an InferenceResult (no output examples); more than
    max_damaged_percent of the records damaged or missing stops it (executor.py)."""
    spec = BulkInferrerSpec(
      examples=examples,
      model=model,
      model_blessing=model_blessing,
      data_spec=data_spec,
      model_spec=model_spec,
      code_fingerprint=code_fingerprint,
      max_damaged_percent=max_damaged_percent,
      inference_result=channel.Channel(type=standard_artifacts.InferenceResult),
    )
    base_beam_component.BaseBeamComponent.__init__(self, spec=spec)
