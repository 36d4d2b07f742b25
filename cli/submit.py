"""`pipeline.py submit`: a compiled pipeline to Vertex AI Pipelines or a Kubeflow Pipelines
cluster (kubeflow/submit.py speaks to them)."""

import argparse
import os

import config as cfg

HELP = 'submit a compiled pipeline to Vertex AI or a Kubeflow Pipelines cluster'
DESCRIPTION = (
  'Submit a compiled pipeline (pipeline.py compile) to Vertex AI Pipelines '
  '(google.cloud.aiplatform.PipelineJob) or to a Kubeflow Pipelines cluster '
  '(kfp.Client). Exit codes: 0 submitted (or --dry-run), 2 bad input, missing '
  'credentials, unreachable host or a refused request. With --schedule, a pipeline schedule '
  '(PipelineJob.create_schedule) or a recurring run (kfp.Client.create_recurring_run) instead '
  'of one run.'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument('--target', choices=('vertex', 'kubeflow'), required=True)
  parser.add_argument(
    '--template',
    default=cfg.COMPILED_EXAMPLE,
    help='compiled pipeline, .json or .yaml (default: kubeflow/pipeline.json)',
  )
  parser.add_argument(
    '--pipeline-root', default='', help='override the compiled pipeline root (gs://... on Vertex)'
  )
  parser.add_argument('--display-name', default='', help='run name (default: the pipeline name)')
  parser.add_argument(
    '--job-label',
    action='append',
    default=[],
    metavar='KEY=VALUE',
    help='Vertex: label added to the compiled ones (repeatable)',
  )
  parser.add_argument(
    '--service-account',
    default='',
    help='Vertex: GCP service account; kubeflow: Kubernetes service account',
  )
  parser.add_argument(
    '--param',
    action='append',
    default=[],
    metavar='NAME=VALUE',
    help='a pipeline parameter for this run (repeatable): data, train_steps, learning_rate, '
    'min_accuracy (default: the compiled values; --dry-run lists them)',
  )
  caching = parser.add_mutually_exclusive_group()
  caching.add_argument(
    '--cache',
    dest='enable_caching',
    action='store_const',
    const=True,
    help='turn caching on for every step (default: as compiled)',
  )
  caching.add_argument(
    '--no-cache',
    dest='enable_caching',
    action='store_const',
    const=False,
    help='turn caching off for every step',
  )
  parser.add_argument(
    '--dry-run', action='store_true', help='print what would be sent and exit 0, without network'
  )
  schedule = parser.add_argument_group(
    'retraining on a schedule',
    'Instead of one run, create a Vertex AI pipeline schedule or a Kubeflow Pipelines '
    'recurring run that starts the pipeline at the times of a cron expression (UTC).',
  )
  schedule.add_argument(
    '--schedule',
    default='',
    metavar='CRON',
    help="standard 5-field cron, MINUTE HOUR DAY-OF-MONTH MONTH DAY-OF-WEEK, UTC, e.g. '0 3 * * 1' "
    '(Mondays 03:00); sent to Kubeflow with a leading 0 seconds field',
  )
  schedule.add_argument(
    '--schedule-name',
    default='',
    help='the schedule / recurring run name (default: the display name)',
  )
  schedule.add_argument(
    '--max-concurrent-runs',
    default='',
    metavar='N',
    help='at most N runs of the schedule at the same time (default: 1)',
  )
  vertex = parser.add_argument_group('--target vertex')
  vertex.add_argument('--project', default='')
  vertex.add_argument('--region', default='')
  vertex.add_argument(
    '--access-token',
    default=os.environ.get('GOOGLE_OAUTH_ACCESS_TOKEN', ''),
    help='OAuth token (e.g. `gcloud auth print-access-token`; env '
    'GOOGLE_OAUTH_ACCESS_TOKEN); default: Application Default Credentials',
  )
  vertex.add_argument(
    '--api-endpoint',
    default='',
    help='Vertex AI endpoint (default: REGION-aiplatform.googleapis.com); an '
    'http:// URL is spoken to over REST',
  )
  kubeflow = parser.add_argument_group('--target kubeflow')
  kubeflow.add_argument('--host', default='', help='KFP API, e.g. http://localhost:8080')
  kubeflow.add_argument('--experiment', default='Default', help='(default: %(default)s)')
  kubeflow.add_argument('--namespace', default='', help='multi-user clusters: the namespace')
  kubeflow.add_argument('--token', default='', help='bearer token for the KFP API')


def main(args: argparse.Namespace) -> int:
  from kubeflow import submit

  return submit.main(args)
