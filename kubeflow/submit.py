"""`pipeline.py submit`: a compiled pipeline to Vertex AI Pipelines or a Kubeflow Pipelines cluster.

Vertex AI goes through `google.cloud.aiplatform.PipelineJob(...).submit()`, a cluster through
`kfp.Client(...).create_run_from_pipeline_package(...)`. Whatever stops a submission before the
service has the run (bad template, no credentials, unreachable host, a refused request) is one
line and exit code 2 (cli.inputs.UserError).
"""

import argparse
import dataclasses
import json
import os
import re
import socket
import tempfile
from typing import Dict, List, Optional
import urllib.parse

import yaml

from contracts.errors import UserError
from kubeflow import compiler, parameters

VERTEX, KUBEFLOW = 'vertex', 'kubeflow'


@dataclasses.dataclass
class Submission:
  """What is sent, whichever the target: read from the template, overridden by flags."""

  template: str
  job: dict  # the PipelineJob: {'pipelineSpec': ..., 'runtimeConfig': ...}
  display_name: str
  pipeline_root: str
  labels: Dict[str, str]
  service_account: str
  enable_caching: Optional[bool]  # None: as compiled
  parameters: Dict[str, object]  # every pipeline parameter: compiled value or --param

  @property
  def tasks(self) -> List[str]:
    return sorted(self.job['pipelineSpec']['root']['dag']['tasks'])


def load_job(template: str) -> dict:
  """A compiled template as a PipelineJob dict (a bare .yaml spec gets an empty job around it)."""
  if not os.path.isfile(template):
    raise UserError(f'--template {template}: no such file (run pipeline.py compile first)')
  try:
    with open(template) as f:
      doc = json.load(f) if template.endswith('.json') else yaml.safe_load(f)
  except (ValueError, yaml.YAMLError) as e:
    raise UserError(
      f'--template {template}: not a compiled pipeline ({str(e).splitlines()[0]})'
    ) from None
  if not isinstance(doc, dict) or 'root' not in doc.get('pipelineSpec', doc):
    raise UserError(f'--template {template}: not a compiled pipeline (no pipeline spec)')
  return doc if 'pipelineSpec' in doc else {'pipelineSpec': doc, 'runtimeConfig': {}}


def plan(args: argparse.Namespace) -> Submission:
  """Checks the flags for the target and merges them with the template."""
  job = load_job(args.template)
  if args.target == VERTEX and not (args.project and args.region):
    raise UserError('--target vertex needs --project and --region')
  if args.target == KUBEFLOW and not urllib.parse.urlparse(args.host).hostname:
    raise UserError('--target kubeflow needs --host http(s)://HOST[:PORT]')
  try:
    labels = {**job.get('labels', {}), **compiler.parse_labels(args.job_label)}
  except ValueError as e:
    raise UserError(str(e)) from None
  root = args.pipeline_root or job.get('runtimeConfig', {}).get('gcsOutputDirectory', '')
  if not root:
    raise UserError(f'--template {args.template} names no pipeline root: pass --pipeline-root')
  if args.target == VERTEX and not root.startswith('gs://'):
    raise UserError(f'pipeline root {root}: Vertex AI needs a gs:// pipeline root')
  return Submission(
    template=args.template,
    job=job,
    display_name=args.display_name
    or job.get('displayName')
    or job['pipelineSpec']['pipelineInfo']['name'],
    pipeline_root=root,
    labels=labels,
    service_account=args.service_account or job.get('serviceAccount', ''),
    enable_caching=args.enable_caching,
    parameters=parameters.values(job, args.param),
  )


def describe(args: argparse.Namespace, sub: Submission) -> List[str]:
  """The --dry-run report."""
  where = (
    f'Vertex AI Pipelines, projects/{args.project}/locations/{args.region}'
    + (f' via {args.api_endpoint}' if args.api_endpoint else '')
    if args.target == VERTEX
    else f'Kubeflow Pipelines at {args.host}, experiment {args.experiment!r}'
    + (f', namespace {args.namespace}' if args.namespace else '')
  )
  caching = {None: 'as compiled', True: 'on', False: 'off'}[sub.enable_caching]
  lines = [
    f'dry run: would submit {sub.template} to {where}',
    f'  display name:    {sub.display_name}',
    f'  pipeline root:   {sub.pipeline_root}',
    f'  tasks:           {len(sub.tasks)} ({", ".join(sub.tasks)})',
    f'  caching:         {caching}',
    f'  service account: {sub.service_account or "(the default)"}',
    f'  parameters:      {_listing(sub.parameters, args.param)}',
  ]
  if args.target == VERTEX:
    labels = ', '.join(f'{k}={v}' for k, v in sorted(sub.labels.items()))
    lines.append(f'  labels:          {labels}')
  return lines


def _listing(values: Dict[str, object], pairs: List[str]) -> str:
  """'data=gs://b/d, train_steps=800 (--param)', set ones marked; '(none)' when none."""
  given = {pair.partition('=')[0] for pair in pairs}
  return (
    ', '.join(
      f'{name}={value}' + (' (--param)' if name in given else '')
      for name, value in sorted(values.items())
    )
    or '(none)'
  )


def to_vertex(args: argparse.Namespace, sub: Submission) -> str:
  """Creates the PipelineJob on Vertex AI; returns its resource name."""
  from google.api_core import exceptions
  import google.auth
  from google.auth import exceptions as auth_exceptions
  from google.cloud import aiplatform
  from google.oauth2 import credentials as oauth2

  try:
    if args.access_token:
      credentials = oauth2.Credentials(args.access_token)
    else:
      credentials, _ = google.auth.default(
        scopes=['https://www.googleapis.com/auth/cloud-platform']
      )
  except auth_exceptions.DefaultCredentialsError as e:
    raise UserError(
      'no Google Cloud credentials: run `gcloud auth application-default login`, '
      'set GOOGLE_APPLICATION_CREDENTIALS or pass --access-token '
      f'({str(e).splitlines()[0]})'
    ) from None
  endpoint = args.api_endpoint or None
  try:
    aiplatform.init(
      project=args.project,
      location=args.region,
      credentials=credentials,
      api_endpoint=endpoint,
      api_transport='rest' if endpoint and endpoint.startswith('http') else None,
    )
  except ValueError as e:  # an unknown region, a malformed project
    raise UserError(
      f'--project {args.project} --region {args.region}: {str(e).split(", select from")[0]}'
    ) from None
  with tempfile.TemporaryDirectory() as folder:
    # The template as sent: the merged labels and service account of `sub`, caching as asked.
    template = os.path.join(folder, 'pipeline.json')
    with open(template, 'w') as f:
      json.dump(sub.job, f)
    job = aiplatform.PipelineJob(
      display_name=sub.display_name,
      template_path=template,
      pipeline_root=sub.pipeline_root,
      enable_caching=sub.enable_caching,
      labels=sub.labels,
      parameter_values=sub.parameters,
      project=args.project,
      location=args.region,
      credentials=credentials,
    )
    try:
      job.submit(service_account=sub.service_account or None)
    except exceptions.GoogleAPICallError as e:
      reason = e.message.split(': ', 1)[-1] if e.message.startswith('POST ') else e.message
      raise UserError(f'Vertex AI refused the pipeline job: {e.code} {reason}') from None
    except (exceptions.RetryError, auth_exceptions.TransportError, OSError) as e:
      raise UserError(
        f'cannot reach Vertex AI at {endpoint or args.region}: {_network_reason(e)}'
      ) from None
  return job.resource_name


def _network_reason(error: Exception) -> str:
  """'Connection refused' out of urllib3's nested retry message; else its first line."""
  found = re.search(r'\[Errno -?\d+\] ([^\'")]+)', str(error))
  return found.group(1) if found else str(error).splitlines()[0]


def _check_reachable(url: str) -> None:
  """One TCP connect, so an unreachable host fails at once (kfp.Client retries for 25 s)."""
  parsed = urllib.parse.urlparse(url)
  port = parsed.port or (443 if parsed.scheme == 'https' else 80)
  try:
    socket.create_connection((parsed.hostname, port), timeout=10).close()
  except OSError as e:
    raise UserError(f'cannot reach Kubeflow Pipelines at {url}: {e.strerror or e}') from None


def to_kubeflow(args: argparse.Namespace, sub: Submission) -> str:
  """Creates a run on a Kubeflow Pipelines cluster; returns its run id."""
  _check_reachable(args.host)
  import kfp
  import kfp_server_api
  import urllib3

  with tempfile.TemporaryDirectory() as folder:
    package = os.path.join(folder, 'pipeline.yaml')  # kfp.Client reads the bare spec as YAML
    with open(package, 'w') as f:
      yaml.safe_dump(sub.job['pipelineSpec'], f)
    try:
      client = kfp.Client(
        host=args.host, namespace=args.namespace or 'kubeflow', existing_token=args.token or None
      )
      result = client.create_run_from_pipeline_package(
        package,
        run_name=sub.display_name,
        experiment_name=args.experiment,
        namespace=args.namespace or None,
        pipeline_root=sub.pipeline_root,
        enable_caching=sub.enable_caching,
        service_account=sub.service_account or None,
        arguments=sub.parameters,
      )
    except kfp_server_api.ApiException as e:
      raise UserError(f'Kubeflow Pipelines refused the run: {e.status} {e.reason}') from None
    except (urllib3.exceptions.HTTPError, OSError) as e:
      raise UserError(
        f'cannot reach Kubeflow Pipelines at {args.host}: {_network_reason(e)}'
      ) from None
  return result.run_id


def main(args: argparse.Namespace) -> int:
  sub = plan(args)
  if args.dry_run:
    print('\n'.join(describe(args, sub)))
    return 0
  if args.target == VERTEX:
    print(f'submitted Vertex AI pipeline job {to_vertex(args, sub)}')
  else:
    print(
      f'submitted Kubeflow Pipelines run {to_kubeflow(args, sub)} (experiment {args.experiment!r})'
    )
  return 0
