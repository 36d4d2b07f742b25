"""Compiles the pipeline for Kubeflow Pipelines v2 / Vertex AI with TFX's KubeflowV2DagRunner.

Offline: user code is referenced by module path and baked into the image, so compiling writes
nothing to the pipeline root and needs no credentials. JSON is a whole Vertex AI PipelineJob
(spec, runtime config, labels, service account); YAML is the bare pipeline spec that
`kfp.Client` and `kfp.components.load_component_from_file` read.
"""

import json
import re
from typing import Dict, Iterable, Optional

import yaml

from utils import atomic

# Vertex AI / GCP label rules: lowercase letters, digits, '_' and '-'; keys start with a letter.
_LABEL_KEY = re.compile(r'^[a-z][a-z0-9_-]{0,62}$')
_LABEL_VALUE = re.compile(r'^[a-z0-9_-]{0,63}$')


def parse_labels(pairs: Iterable[str]) -> Dict[str, str]:
  """['team=vision', ...] → {'team': 'vision'}; ValueError names the first bad pair."""
  labels = {}
  for pair in pairs:
    key, sep, value = pair.partition('=')
    if not sep or not _LABEL_KEY.match(key) or not _LABEL_VALUE.match(value):
      raise ValueError(
        f'--label {pair!r}: want KEY=VALUE in lowercase letters, digits, _ or -, '
        'the key starting with a letter, each at most 63 characters'
      )
    labels[key] = value
  return labels


def compile_job(
  tfx_pipeline,
  image: str,
  labels: Optional[Dict[str, str]] = None,
  service_account: str = '',
  parameter_values: Optional[Dict[str, object]] = None,
  step_env: Optional[Dict[str, Dict[str, str]]] = None,
) -> dict:
  """The PipelineJob dict for `tfx_pipeline`, every step in `image`; parameter_values: the
  defaults of its pipeline parameters (RuntimeParameters), written to the job's runtime config
  and to the spec's parameter declarations (kubeflow/parameters.py); step_env: {step id:
  {name: value}}, environment variables of those steps' containers."""
  from tfx import v1 as tfx

  runner = tfx.orchestration.experimental.KubeflowV2DagRunner(
    # Pipeline spec 2.1: typed parameters (`parameterType`), as KFP SDK 2 and the KFP 2 backend
    # read them; 2.0's `type` declarations do not load in the KFP SDK.
    config=tfx.orchestration.experimental.KubeflowV2DagRunnerConfig(
      default_image=image, use_pipeline_spec_2_1=True
    )
  )
  job = runner.run(tfx_pipeline, parameter_values=parameter_values, write_out=False)
  declared = job['pipelineSpec']['root'].get('inputDefinitions', {}).get('parameters', {})
  for name, value in (parameter_values or {}).items():
    declared[name]['defaultValue'] = value  # a google.protobuf.Value: plain JSON
  executors = job['pipelineSpec']['deploymentSpec']['executors']
  for step, env in (step_env or {}).items():
    container = executors[f'{step}_executor']['container']
    container['env'] = [{'name': name, 'value': value} for name, value in sorted(env.items())]
  job['labels'] = {**job.get('labels', {}), **(labels or {})}
  if service_account:
    job['serviceAccount'] = service_account
  return job


YAML_HEADER = (
  '# Kubeflow Pipelines v2 pipeline spec compiled from create_pipeline(...) by '
  'pipeline.py compile\n'
)


def write(job: dict, output: str, fmt: str) -> str:
  """Writes the job as `fmt` ('json' or 'yaml') to `output`, atomically; returns the path."""
  if fmt == 'json':
    text = json.dumps(job, indent=2, sort_keys=True) + '\n'
  else:
    text = YAML_HEADER + yaml.safe_dump(job['pipelineSpec'], sort_keys=True)
  return atomic.write(output, text)


def is_compiled(path: str) -> bool:
  """Whether `path` is a file `write` wrote: a PipelineJob's JSON or the YAML with its header."""
  try:
    with open(path, encoding='utf-8') as f:
      text = f.read()
  except (OSError, UnicodeDecodeError):
    return False
  if text.startswith(YAML_HEADER):
    return True
  try:
    return 'pipelineSpec' in json.loads(text)
  except (ValueError, TypeError):
    return False
