"""ServingCheck: proves that a blessed model serves before the Pusher may push it.

Between the Evaluator and the Pusher: loads the candidate in a fresh process, sends every
signature real eval examples (raw-input forms included), checks the answers and times requests
(probe.py). Its InfraBlessing goes to the stock Pusher as `infra_blessing`, so a model that does
not serve is never pushed; the run's summary says why.
"""

from tfx import v1 as tfx
from tfx.components.util import model_utils
from tfx.utils import path_utils

from components.serving_check import executor


@tfx.dsl.components.component
def ServingCheck(
  model: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Model],
  examples: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Examples],
  model_blessing: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.ModelBlessing],
  infra_blessing: tfx.dsl.components.OutputArtifact[tfx.types.standard_artifacts.InfraBlessing],
  code_fingerprint: tfx.dsl.components.Parameter[str] = '',
) -> None:
  """Blesses (`blessed` = 1) a blessed model that serves (code_fingerprint: the cache key's)."""
  report = executor.check(
    path_utils.serving_model_path(model.uri),
    examples.uri,
    model_utils.is_model_blessed(model_blessing),
    infra_blessing.uri,
  )
  infra_blessing.set_int_custom_property('blessed', int(report['serves']))
