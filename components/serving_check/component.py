"""ServingCheck: proves that a blessed model serves before the Pusher may push it.

Between the Evaluator and the Pusher: loads the candidate in a fresh process, sends every
signature real eval examples (raw-input forms included), checks the answers and times requests
(probe.py). Its InfraBlessing goes to the stock Pusher as `infra_blessing`, so a model that does
not serve is never pushed; the run's summary says why.

TensorFlowServingCheck is TFX's InfraValidator (its spec, driver and executor) for compiled
pipelines on Kubeflow Pipelines: the TensorFlow Serving image as a pod beside the step.
"""

from tfx.components.infra_validator import component as infra_validator
from tfx.components.util import model_utils
from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.dsl.components.base import base_component
from tfx.types import channel, standard_artifacts
from tfx.utils import path_utils

from components.serving_check import executor


@component
def ServingCheck(
  model: InputArtifact[standard_artifacts.Model],
  examples: InputArtifact[standard_artifacts.Examples],
  model_blessing: InputArtifact[standard_artifacts.ModelBlessing],
  infra_blessing: OutputArtifact[standard_artifacts.InfraBlessing],
  code_fingerprint: Parameter[str] = '',
) -> None:
  """Blesses (`blessed` = 1) a blessed model that serves (code_fingerprint: the cache key's)."""
  report = executor.check(
    path_utils.serving_model_path(model.uri),
    examples.uri,
    model_utils.is_model_blessed(model_blessing),
    infra_blessing.uri,
  )
  infra_blessing.set_int_custom_property('blessed', int(report['serves']))


class TensorFlowServingCheck(base_component.BaseComponent):
  """TFX's InfraValidator under a class of its own: KubeflowV2DagRunner's step builder refuses
  the InfraValidator class by name (tfx/orchestration/kubeflow/v2/step_builder.py), not the
  container step it compiles to. Output `blessing` (InfraBlessing), as InfraValidator's."""

  SPEC_CLASS = infra_validator.InfraValidator.SPEC_CLASS
  EXECUTOR_SPEC = infra_validator.InfraValidator.EXECUTOR_SPEC
  DRIVER_CLASS = infra_validator.InfraValidator.DRIVER_CLASS

  def __init__(self, model, examples, serving_spec, request_spec, validation_spec=None):
    super().__init__(
      spec=self.SPEC_CLASS(
        model=model,
        examples=examples,
        blessing=channel.Channel(type=standard_artifacts.InfraBlessing),
        serving_spec=serving_spec,
        request_spec=request_spec,
        validation_spec=validation_spec,
      )
    )
