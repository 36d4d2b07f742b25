"""`pipeline.py submit` through the real aiplatform and kfp clients, to fakes on loopback."""

import json
import os

import pytest

from cli import main as cli_main
from tests.kubeflow import fake_endpoints

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATE = os.path.join(ROOT, 'kubeflow', 'pipeline.json')
TOKEN = 'test-access-token'


def _committed_job() -> dict:
  with open(TEMPLATE) as f:
    return json.load(f)


def _sent_parameters(runtime_config: dict) -> dict:
  """{name: value} from a request's runtime config (kfp Values, or plain ones)."""
  sent = runtime_config.get('parameterValues') or runtime_config.get('parameters', {})
  return {
    name: next(iter(value.values())) if isinstance(value, dict) else value
    for name, value in sent.items()
  }


def _one_line_error(capsys, code: int, message: str) -> None:
  err = capsys.readouterr().err
  assert code == 2 and err.startswith('error: ') and err.count('\n') == 1, err
  assert message in err, err


@pytest.fixture
def vertex(monkeypatch):
  """A fake Vertex AI (project 'proj') and Cloud Storage (bucket 'bucket') on one port."""
  with fake_endpoints.FakeEndpoint(fake_endpoints.vertex_and_storage('proj', 'bucket')) as fake:
    monkeypatch.setenv('STORAGE_EMULATOR_HOST', fake.url)
    yield fake


def _vertex_args(endpoint, *extra, project='proj', region='us-central1'):
  """`submit --target vertex` with a token, to `endpoint` (None: Google's own)."""
  return [
    'submit',
    '--target',
    'vertex',
    '--project',
    project,
    '--region',
    region,
    '--access-token',
    TOKEN,
    *(['--api-endpoint', endpoint] if endpoint else []),
    *extra,
  ]


def test_vertex_receives_the_compiled_job_with_overrides(vertex, capsys):
  code = cli_main.main(
    _vertex_args(
      vertex.url,
      '--pipeline-root',
      'gs://bucket/root',
      '--display-name',
      'digits-nightly',
      '--job-label',
      'run=nightly',
      '--no-cache',
      '--param',
      'train_steps=800',
      '--param',
      'data=gs://bucket/digits-v2',
    )
  )
  out = capsys.readouterr().out
  assert code == 0
  assert 'submitted Vertex AI pipeline job projects/proj/locations/us-central1/' in out
  (create,) = vertex.find('POST', '/pipelineJobs')
  assert create.path == '/v1/projects/proj/locations/us-central1/pipelineJobs'
  assert create.headers['authorization'] == f'Bearer {TOKEN}'
  body = create.json
  committed = _committed_job()
  assert body['displayName'] == 'digits-nightly'
  assert body['runtimeConfig']['gcsOutputDirectory'] == 'gs://bucket/root'
  parameters = _sent_parameters(body['runtimeConfig'])
  assert int(parameters['train_steps']) == 800 and parameters['data'] == 'gs://bucket/digits-v2'
  assert float(parameters['min_accuracy']) == 0.9  # compiled default, sent as is
  assert body['labels'] == {**committed['labels'], 'run': 'nightly'}
  sent_tasks = body['pipelineSpec']['root']['dag']['tasks']
  assert set(sent_tasks) == set(committed['pipelineSpec']['root']['dag']['tasks'])
  assert not any(t['cachingOptions'].get('enableCache') for t in sent_tasks.values())
  assert body['pipelineSpec']['deploymentSpec'] == committed['pipelineSpec']['deploymentSpec']
  assert vertex.find('GET', '/storage/v1/b/bucket')  # aiplatform checks the root's bucket first


def test_vertex_service_account_from_the_template(vertex, tmp_path):
  job = _committed_job()
  job['serviceAccount'] = 'runner@proj.iam.gserviceaccount.com'
  template = tmp_path / 'job.json'
  template.write_text(json.dumps(job))
  assert (
    cli_main.main(
      _vertex_args(vertex.url, '--template', str(template), '--pipeline-root', 'gs://bucket/r')
    )
    == 0
  )
  (create,) = vertex.find('POST', '/pipelineJobs')
  assert create.json['serviceAccount'] == 'runner@proj.iam.gserviceaccount.com'
  assert 'enableCache' in json.dumps(create.json)  # caching left as compiled


def test_vertex_refusal_is_one_line(vertex, capsys):
  code = cli_main.main(
    _vertex_args(vertex.url, '--pipeline-root', 'gs://bucket/r', project='no-such-project')
  )
  _one_line_error(
    capsys,
    code,
    'Vertex AI refused the pipeline job: 403 Permission denied on project no-such-project',
  )


def test_vertex_unreachable_is_one_line(vertex, capsys):
  code = cli_main.main(_vertex_args('http://127.0.0.1:9', '--pipeline-root', 'gs://bucket/r'))
  _one_line_error(capsys, code, 'cannot reach Vertex AI at http://127.0.0.1:9: Connection refused')


def test_vertex_unknown_region_is_one_line(capsys):
  code = cli_main.main(_vertex_args(None, region='mars-north1'))
  _one_line_error(capsys, code, 'mars-north1: Unsupported region for Vertex AI')


def test_vertex_missing_credentials_is_one_line(monkeypatch, tmp_path, capsys):
  monkeypatch.delenv('GOOGLE_OAUTH_ACCESS_TOKEN', raising=False)
  monkeypatch.setenv('GOOGLE_APPLICATION_CREDENTIALS', str(tmp_path / 'missing.json'))
  code = cli_main.main(['submit', '--target', 'vertex', '--project', 'proj', '--region', 'r'])
  _one_line_error(capsys, code, 'no Google Cloud credentials')


def _submit_to_kubeflow(url: str, *more: str) -> int:
  """`submit --target kubeflow` to `url` with the experiment and run names of these tests."""
  return cli_main.main(
    ['submit', '--target', 'kubeflow', '--host', url, '--pipeline-root', 'minio://mlpipeline/root']
    + ['--experiment', 'digits', '--display-name', 'digits-run', *more]
  )


@pytest.fixture
def kubeflow():
  with fake_endpoints.FakeEndpoint(fake_endpoints.kubeflow_pipelines()) as fake:
    yield fake


def test_kubeflow_receives_the_pipeline_spec(kubeflow, capsys):
  code = _submit_to_kubeflow(
    kubeflow.url,
    '--service-account',
    'pipeline-runner',
    '--no-cache',
    '--param',
    'learning_rate=0.01',
  )
  assert code == 0 and 'submitted Kubeflow Pipelines run run-1' in capsys.readouterr().out
  (experiment,) = kubeflow.find('POST', '/apis/v2beta1/experiments')
  assert experiment.json['display_name'] == 'digits'
  (run,) = kubeflow.find('POST', '/apis/v2beta1/runs')
  body = run.json
  assert body['display_name'] == 'digits-run' and body['experiment_id'] == 'exp-1'
  assert body['runtime_config']['pipeline_root'] == 'minio://mlpipeline/root'
  assert body['service_account'] == 'pipeline-runner'
  parameters = _sent_parameters(body['runtime_config'])
  assert parameters['learning_rate'] == 0.01 and int(parameters['train_steps']) == 600
  committed = _committed_job()['pipelineSpec']
  sent_tasks = body['pipeline_spec']['root']['dag']['tasks']
  assert set(sent_tasks) == set(committed['root']['dag']['tasks'])
  assert body['pipeline_spec']['deploymentSpec'] == committed['deploymentSpec']
  assert not any(t.get('cachingOptions', {}).get('enableCache') for t in sent_tasks.values())


def test_kubeflow_unreachable_is_one_line(capsys):
  code = cli_main.main(['submit', '--target', 'kubeflow', '--host', 'http://127.0.0.1:9'])
  _one_line_error(
    capsys, code, 'cannot reach Kubeflow Pipelines at http://127.0.0.1:9: Connection refused'
  )


def _dry_run(target: str, host: str, *extra) -> int:
  """`submit --dry-run` to either target, with what both need (project, region, host)."""
  return cli_main.main(
    [
      'submit',
      '--target',
      target,
      '--dry-run',
      '--project',
      'proj',
      '--region',
      'us-central1',
      '--host',
      host,
      *extra,
    ]
  )


@pytest.mark.parametrize('target', ['vertex', 'kubeflow'])
def test_dry_run_prints_the_plan_and_sends_nothing(kubeflow, capsys, target):
  code = _dry_run(
    target,
    kubeflow.url,
    '--api-endpoint',
    kubeflow.url,
    '--job-label',
    'run=dry',
    '--param',
    'min_accuracy=0.95',
  )
  out = capsys.readouterr().out
  assert code == 0 and out.startswith('dry run: would submit')
  assert 'min_accuracy=0.95 (--param), train_steps=600' in out
  assert 'gs://YOUR_BUCKET/tfrecord-pipeline/root' in out and 'tasks:           12' in out
  assert ('run=dry' in out) == (target == 'vertex')
  assert kubeflow.requests == []


@pytest.mark.parametrize(
  'args,message',
  [
    (['--target', 'vertex', '--region', 'r'], 'needs --project and --region'),
    (['--target', 'kubeflow'], 'needs --host'),
    (
      ['--target', 'vertex', '--project', 'p', '--region', 'r', '--template', 'missing.json'],
      'no such file',
    ),
    (
      ['--target', 'vertex', '--project', 'p', '--region', 'r', '--pipeline-root', '/tmp/x'],
      'needs a gs:// pipeline root',
    ),
    (
      ['--target', 'vertex', '--project', 'p', '--region', 'r', '--job-label', 'A=b'],
      "--label 'A=b'",
    ),
    (
      ['--target', 'kubeflow', '--host', 'http://h', '--template', 'README.md'],
      'not a compiled pipeline',
    ),
    (['--target', 'kubeflow', '--host', 'http://h', '--param', 'epochs=3'], 'no such parameter'),
    (
      ['--target', 'kubeflow', '--host', 'http://h', '--param', 'train_steps=many'],
      'train_steps is an int',
    ),
    (['--target', 'kubeflow', '--host', 'http://h', '--param', 'train_steps'], 'want NAME=VALUE'),
    # the ranges `run` checks its flags with
    (
      ['--target', 'kubeflow', '--host', 'http://h', '--param', 'train_steps=-5'],
      '--param train_steps=-5: must be positive',
    ),
    (
      ['--target', 'kubeflow', '--host', 'http://h', '--param', 'min_accuracy=2'],
      '--param min_accuracy=2: must be between 0 and 1',
    ),
  ],
)
def test_bad_input_is_one_line(capsys, args, message):
  code = cli_main.main(['submit', '--dry-run', *args])
  _one_line_error(capsys, code, message)


def test_vertex_schedule_reaches_the_fake_with_the_cron(vertex, capsys):
  code = cli_main.main(
    _vertex_args(
      vertex.url,
      '--pipeline-root',
      'gs://bucket/root',
      '--schedule',
      '0  3 * * MON',
      '--schedule-name',
      'digits-weekly',
      '--max-concurrent-runs',
      '2',
      '--service-account',
      'runner@proj.iam.gserviceaccount.com',
      '--param',
      'train_steps=800',
    )
  )
  out = capsys.readouterr().out
  assert code == 0, out
  assert (
    'created Vertex AI pipeline schedule projects/proj/locations/us-central1/schedules/schedule-1'
    in out
  )
  assert vertex.find('POST', '/pipelineJobs') == []  # a schedule, not a run now
  (create,) = vertex.find('POST', '/schedules')
  assert create.path == '/v1/projects/proj/locations/us-central1/schedules'
  assert create.headers['authorization'] == f'Bearer {TOKEN}'
  body = create.json
  assert body['cron'] == '0 3 * * MON'  # 5 fields, as Vertex takes them
  assert body['displayName'] == 'digits-weekly'
  assert int(body['maxConcurrentRunCount']) == 2
  job = body['createPipelineJobRequest']['pipelineJob']
  assert job['serviceAccount'] == 'runner@proj.iam.gserviceaccount.com'
  assert job['runtimeConfig']['gcsOutputDirectory'] == 'gs://bucket/root'
  assert int(_sent_parameters(job['runtimeConfig'])['train_steps']) == 800
  committed = _committed_job()
  assert set(job['pipelineSpec']['root']['dag']['tasks']) == set(
    committed['pipelineSpec']['root']['dag']['tasks']
  )
  assert job['pipelineSpec']['deploymentSpec'] == committed['pipelineSpec']['deploymentSpec']


def test_vertex_schedule_refusal_is_one_line(vertex, capsys):
  code = cli_main.main(
    _vertex_args(
      vertex.url, '--pipeline-root', 'gs://bucket/r', '--schedule', '0 3 * * *', project='other'
    )
  )
  _one_line_error(
    capsys, code, 'Vertex AI refused the schedule: 403 Permission denied on project other'
  )


def test_kubeflow_recurring_run_reaches_the_fake_with_the_cron(kubeflow, capsys):
  code = _submit_to_kubeflow(
    kubeflow.url, '--schedule', '30 2 * * *', '--param', 'learning_rate=0.01'
  )
  out = capsys.readouterr().out
  assert code == 0 and 'created Kubeflow Pipelines recurring run recurring-1' in out, out
  assert kubeflow.find('POST', '/apis/v2beta1/runs') == []
  (experiment,) = kubeflow.find('POST', '/apis/v2beta1/experiments')
  assert experiment.json['display_name'] == 'digits'
  (recurring,) = kubeflow.find('POST', '/apis/v2beta1/recurringruns')
  body = recurring.json
  assert body['trigger']['cron_schedule']['cron'] == '0 30 2 * * *'  # seconds first for KFP
  assert body['display_name'] == 'digits-run'  # the schedule name defaults to the display name
  assert body['experiment_id'] == 'exp-1' and body['mode'] == 'ENABLE'
  assert int(body['max_concurrency']) == 1 and body['no_catchup'] is True
  assert body['runtime_config']['pipeline_root'] == 'minio://mlpipeline/root'
  assert _sent_parameters(body['runtime_config'])['learning_rate'] == 0.01
  committed = _committed_job()['pipelineSpec']
  assert set(body['pipeline_spec']['root']['dag']['tasks']) == set(
    committed['root']['dag']['tasks']
  )
  assert body['pipeline_spec']['deploymentSpec'] == committed['deploymentSpec']


@pytest.mark.parametrize(
  'target,sent', [('vertex', "cron '0 3 * * 1'"), ('kubeflow', "cron '0 0 3 * * 1'")]
)
def test_dry_run_prints_the_schedule(kubeflow, capsys, target, sent):
  code = _dry_run(target, kubeflow.url, '--schedule', '0 3 * * 1', '--schedule-name', 'weekly')
  out = capsys.readouterr().out
  assert code == 0 and 'would create a' in out and "'weekly', " + sent in out, out
  assert 'concurrent runs: at most 1' in out
  assert kubeflow.requests == []


@pytest.mark.parametrize(
  'extra,message',
  [
    (['--schedule', '0 3 * *'], "--schedule '0 3 * *': want 5 fields"),
    (['--schedule', '0 0 3 * * *'], 'want 5 fields'),  # KFP's own 6-field form
    (['--schedule', '@daily'], 'want 5 fields'),
    (['--schedule', '60 3 * * *'], 'minute 60 is out of 0-59'),
    (['--schedule', '0 3 0 * *'], 'day of month 0 is out of 1-31'),
    (['--schedule', '0 3 * * 7'], 'day of week 7 is out of 0-6'),
    (['--schedule', '0 3 * FOO *'], "month 'FOO' is not a number"),
    (['--schedule', '0 5-3 * * *'], "hour range '5-3' runs backwards"),
    (['--schedule', '*/0 * * * *'], "minute step '*/0' is 0"),
    (['--schedule', '0 3 ? * *'], "day of month '?' is not N, N-M"),
    (['--schedule', '0 3 * * *', '--max-concurrent-runs', '0'], 'must be a positive'),
    (['--max-concurrent-runs', '2'], '--max-concurrent-runs needs --schedule CRON'),
    (['--schedule-name', 'weekly'], '--schedule-name needs --schedule CRON'),
  ],
)
def test_bad_schedule_is_one_line(capsys, extra, message):
  code = cli_main.main(
    ['submit', '--dry-run', '--target', 'kubeflow', '--host', 'http://h', *extra]
  )
  _one_line_error(capsys, code, message)


def test_cron_accepts_lists_ranges_steps_and_names():
  from kubeflow import submit

  assert submit.check_cron('*/15 8-18/2 1,15 jan-Jun MON-FRI') == '*/15 8-18/2 1,15 jan-Jun MON-FRI'
