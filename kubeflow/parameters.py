"""Pipeline parameters of a compiled spec: their names and types, the compiled defaults, and
`--param NAME=VALUE` overrides (`pipeline.py submit`, `python -m kubeflow.local_launcher`).

KFP pipeline spec 2.0 (what KubeflowV2DagRunner writes) declares each parameter's type under
`root.inputDefinitions.parameters` and TFX puts the defaults in the PipelineJob's
`runtimeConfig.parameters`; `compiler.compile_job` also writes them as each declaration's
`defaultValue` (a plain JSON value), so a bare YAML spec carries them too.
"""

from typing import Dict, Iterable

from contracts import limits
from contracts.errors import UserError

# Spec 2.0 type names (and their spec 2.1 equivalents) → the Python type of a value.
_TYPES = {
  'INT': int,
  'NUMBER_INTEGER': int,
  'DOUBLE': float,
  'NUMBER_DOUBLE': float,
  'STRING': str,
}
# A value of each Python type in a spec 2.0 kfp Value.
_VALUE_KEYS = {int: 'intValue', float: 'doubleValue', str: 'stringValue'}


def declared(job: dict) -> Dict[str, type]:
  """{name: int | float | str} of the spec's pipeline parameters."""
  definitions = job['pipelineSpec']['root'].get('inputDefinitions', {}).get('parameters', {})
  return {
    name: _TYPES[spec.get('type') or spec.get('parameterType')]
    for name, spec in definitions.items()
  }


def kfp_value(value) -> dict:
  """A Python value as a spec 2.0 kfp Value ({'intValue': ...}, ...)."""
  return {_VALUE_KEYS[type(value)]: value}


def _python(value, kind: type):
  """A kfp Value dict (spec 2.0 runtime config) or a plain JSON value as `kind`."""
  if isinstance(value, dict):
    (value,) = value.values()
  return kind(value)


def defaults(job: dict) -> Dict[str, object]:
  """The compiled value of each parameter that has one."""
  kinds = declared(job)
  root = job['pipelineSpec']['root'].get('inputDefinitions', {}).get('parameters', {})
  runtime = job.get('runtimeConfig', {})
  found = {name: spec['defaultValue'] for name, spec in root.items() if 'defaultValue' in spec}
  found.update(runtime.get('parameters', {}))
  found.update(runtime.get('parameterValues', {}))
  return {name: _python(value, kinds[name]) for name, value in found.items() if name in kinds}


def overrides(pairs: Iterable[str], job: dict) -> Dict[str, object]:
  """['train_steps=800', ...] → {'train_steps': 800}; UserError names the first bad pair (a
  malformed pair, an unknown name, a value of the wrong type or out of range)."""
  kinds = declared(job)
  found = {}
  for pair in pairs:
    name, sep, text = pair.partition('=')
    if not sep:
      raise UserError(f'--param {pair!r}: want NAME=VALUE')
    if name not in kinds:
      known = ', '.join(sorted(kinds)) or 'none'
      raise UserError(f'--param {name}: the pipeline has no such parameter (it has: {known})')
    try:
      found[name] = kinds[name](text)
    except ValueError:
      raise UserError(
        f'--param {pair}: {name} is a{"n" if kinds[name] is int else ""} {kinds[name].__name__}'
      ) from None
    wrong = limits.problem(name, found[name])  # the ranges `run` checks its flags with
    if wrong:
      raise UserError(f'--param {pair}: {wrong}')
  return found


def values(job: dict, pairs: Iterable[str] = ()) -> Dict[str, object]:
  """Every parameter's value for a run: the compiled defaults with `pairs` applied."""
  merged = {**defaults(job), **overrides(pairs, job)}
  missing = sorted(set(declared(job)) - set(merged))
  if missing:
    raise UserError(f'no value for pipeline parameter {missing[0]}: pass --param {missing[0]}=...')
  return merged
