"""A stock TFX spec's parameters with the code fingerprint and a component's own."""

from tfx.types import component_spec, standard_component_specs

from components import specs


def test_stock_parameters_the_fingerprint_and_the_own():
  own = component_spec.ExecutionParameter(type=float, optional=True)
  found = specs.parameters(standard_component_specs.PusherSpec, max_damaged_percent=own)
  stock = standard_component_specs.PusherSpec.PARAMETERS
  assert set(found) == set(stock) | {'code_fingerprint', 'max_damaged_percent'}
  assert found['code_fingerprint'].type is str and found['max_damaged_percent'] is own
  assert 'code_fingerprint' not in stock  # the stock spec is left as it was
