"""`pipeline.py submit`: a compiled pipeline to Vertex AI Pipelines or a Kubeflow Pipelines cluster.

Vertex AI goes through `google.cloud.aiplatform.PipelineJob(...).submit()`, a cluster through
`kfp.Client(...).create_run_from_pipeline_package(...)`. With `--schedule CRON` the same job
becomes a Vertex AI schedule (`PipelineJob.create_schedule`) or a KFP recurring run
(`kfp.Client.create_recurring_run`). The cron is standard 5-field cron in UTC, which Vertex
takes as is; KFP's scheduler (robfig/cron) wants a seconds field first, so it gets `0 ` in
front. Whatever stops a submission before the service has the run (bad template or cron, no
credentials, unreachable host, a refused request) is one line and exit code 2
(contracts.errors.UserError).
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

CRON_FORM = "MINUTE HOUR DAY-OF-MONTH MONTH DAY-OF-WEEK, e.g. '0 3 * * 1' (Mondays 03:00 UTC)"
# (name, lowest, highest, names for the values from `lowest` on)
CRON_FIELDS = (
  ('minute', 0, 59, ()),
  ('hour', 0, 23, ()),
  ('day of month', 1, 31, ()),
  ('month', 1, 12, ('JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC'.split())),
  ('day of week', 0, 6, ('SUN MON TUE WED THU FRI SAT'.split())),
)
_CRON_ITEM = re.compile(r'^(?:(\*)|([0-9A-Za-z]+)(?:-([0-9A-Za-z]+))?)(?:/([0-9]+))?$')


@dataclasses.dataclass
class Schedule:
  """A recurring submission: `cron` is 5-field standard cron, UTC."""

  cron: str
  name: str
  max_concurrent_runs: int

  @property
  def kubeflow_cron(self) -> str:
    """KFP's 6-field form (robfig/cron: seconds first)."""
    return f'0 {self.cron}'


def check_cron(cron: str) -> str:
  """The cron with single spaces; UserError naming the first bad field."""
  fields = cron.split()
  if len(fields) != len(CRON_FIELDS):
    raise UserError(f'--schedule {cron!r}: want 5 fields, {CRON_FORM}')
  for field, (name, low, high, names) in zip(fields, CRON_FIELDS):
    for item in field.split(','):
      _check_cron_item(cron, item, name, low, high, names)
  return ' '.join(fields)


def _check_cron_item(cron: str, item: str, name: str, low: int, high: int, names) -> None:
  found = _CRON_ITEM.match(item)
  if not found:
    raise UserError(f'--schedule {cron!r}: {name} {item!r} is not N, N-M, * or a /STEP of them')
  _, first, last, step = found.groups()
  values = []
  for value in (first, last):
    if value is None:
      continue
    if value.isdigit():
      number = int(value)
    elif value.upper() in names:
      number = low + names.index(value.upper())
    else:
      raise UserError(f'--schedule {cron!r}: {name} {value!r} is not a number')
    if not low <= number <= high:
      raise UserError(f'--schedule {cron!r}: {name} {value} is out of {low}-{high}')
    values.append(number)
  if len(values) == 2 and values[0] > values[1]:
    raise UserError(f'--schedule {cron!r}: {name} range {item!r} runs backwards')
  if step is not None and int(step) == 0:
    raise UserError(f'--schedule {cron!r}: {name} step {item!r} is 0')


def plan_schedule(args: argparse.Namespace, display_name: str) -> Optional[Schedule]:
  """The --schedule flags checked; None without --schedule."""
  if not args.schedule:
    for flag, value in (
      ('--schedule-name', args.schedule_name),
      ('--max-concurrent-runs', args.max_concurrent_runs),
    ):
      if value:
        raise UserError(f'{flag} needs --schedule CRON')
    return None
  runs = args.max_concurrent_runs or '1'
  if not runs.isdigit() or int(runs) < 1:
    raise UserError(f'--max-concurrent-runs {runs}: must be a positive whole number')
  name = args.schedule_name or display_name
  if len(name) > 128:
    raise UserError(f'--schedule-name: at most 128 characters, not {len(name)}')
  return Schedule(cron=check_cron(args.schedule), name=name, max_concurrent_runs=int(runs))


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
  schedule: Optional[Schedule] = None  # --schedule: recurring instead of one run

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
  display_name = (
    args.display_name or job.get('displayName') or job['pipelineSpec']['pipelineInfo']['name']
  )
  return Submission(
    template=args.template,
    job=job,
    display_name=display_name,
    pipeline_root=root,
    labels=labels,
    service_account=args.service_account or job.get('serviceAccount', ''),
    enable_caching=args.enable_caching,
    parameters=parameters.values(job, args.param),
    schedule=plan_schedule(args, display_name),
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
  if sub.schedule:
    what = 'pipeline schedule' if args.target == VERTEX else 'recurring run'
    lines[0] = lines[0].replace('would submit', f'would create a {what} of', 1)
    cron = sub.schedule.cron if args.target == VERTEX else sub.schedule.kubeflow_cron
    lines += [
      f'  schedule:        {sub.schedule.name!r}, cron {cron!r} (UTC)'
      + ('' if args.target == VERTEX else f', from --schedule {sub.schedule.cron!r}'),
      f'  concurrent runs: at most {sub.schedule.max_concurrent_runs}'
      + ('' if args.target == VERTEX else ', no catch-up of missed starts'),
    ]
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
  """Creates the PipelineJob (or, with a schedule, the Schedule) on Vertex AI; returns its
  resource name."""
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
      if sub.schedule:
        schedule = job.create_schedule(
          cron=sub.schedule.cron,
          display_name=sub.schedule.name,
          max_concurrent_run_count=sub.schedule.max_concurrent_runs,
          service_account=sub.service_account or None,
        )
        return schedule.resource_name
      job.submit(service_account=sub.service_account or None)
    except exceptions.GoogleAPICallError as e:
      reason = e.message.split(': ', 1)[-1] if e.message.startswith('POST ') else e.message
      what = 'schedule' if sub.schedule else 'pipeline job'
      raise UserError(f'Vertex AI refused the {what}: {e.code} {reason}') from None
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
  """Creates a run (or, with a schedule, a recurring run) on a Kubeflow Pipelines cluster;
  returns its id."""
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
      if sub.schedule:
        experiment = client.create_experiment(
          name=args.experiment, namespace=args.namespace or None
        )
        recurring = client.create_recurring_run(
          experiment_id=experiment.experiment_id,
          job_name=sub.schedule.name,
          cron_expression=sub.schedule.kubeflow_cron,
          max_concurrency=sub.schedule.max_concurrent_runs,
          no_catchup=True,  # a paused schedule, resumed, retrains once, not once per missed start
          params=sub.parameters,
          pipeline_package_path=package,
          pipeline_root=sub.pipeline_root,
          enable_caching=sub.enable_caching,
          service_account=sub.service_account or None,
        )
        return recurring.recurring_run_id
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
      what = 'recurring run' if sub.schedule else 'run'
      raise UserError(f'Kubeflow Pipelines refused the {what}: {e.status} {e.reason}') from None
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
  if sub.schedule:
    cron = sub.schedule.cron if args.target == VERTEX else sub.schedule.kubeflow_cron
    if args.target == VERTEX:
      print(f'created Vertex AI pipeline schedule {to_vertex(args, sub)} (cron {cron!r}, UTC)')
    else:
      print(
        f'created Kubeflow Pipelines recurring run {to_kubeflow(args, sub)} '
        f'(cron {cron!r}, UTC; experiment {args.experiment!r})'
      )
  elif args.target == VERTEX:
    print(f'submitted Vertex AI pipeline job {to_vertex(args, sub)}')
  else:
    print(
      f'submitted Kubeflow Pipelines run {to_kubeflow(args, sub)} (experiment {args.experiment!r})'
    )
  return 0
