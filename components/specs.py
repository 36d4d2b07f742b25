"""What the project's component specs share: a TFX spec's parameters with the code fingerprint
(utils/fingerprint.py), which puts the component's own code in TFX's cache key."""

from typing import Dict, Type

from tfx.types import component_spec


def parameters(
  stock: Type[component_spec.ComponentSpec], **own: component_spec.ExecutionParameter
) -> Dict[str, component_spec.ExecutionParameter]:
  """`stock`'s PARAMETERS, `code_fingerprint` and the component's `own`."""
  return dict(stock.PARAMETERS, code_fingerprint=component_spec.ExecutionParameter(type=str), **own)
