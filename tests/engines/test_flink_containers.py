"""The Flink cluster in containers (`make flink-up CONTAINERS=1`): a CSV run whose data and
pipeline root are on the cluster's S3 server, with a TaskManager container `docker kill`ed in the
middle of the Evaluator's job, ends with the DirectRunner's records and statistics and the pushed
model's own accuracy, StatisticsGen and the Evaluator on Flink; no container sees the driver's
files; a local path is refused in one line; `down` leaves no container, network or volume."""

import json
import os
import subprocess

import pytest

from engines import flink, flink_containers, flink_rest
from tests.conftest import SMALL_EVAL
from tests.engines.conftest import computed_by, pushed_models_accuracy, records, statistics
from tests.support import engine_faults, s3_server
from tests.support.containers import project_image  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('engines')]
MASTER = f'localhost:{flink.REST_PORT}'
EVALUATOR = 'tfrp-evaluator-'


@pytest.fixture(scope='module')
def cluster(project_image):  # noqa: F811
  """The containerised cluster, started and, at the end, stopped with nothing left behind."""
  state = flink_containers.up(log=lambda line: None)
  yield state
  assert flink_containers.down(log=lambda line: None) == []
  leftovers = subprocess.run(
    ['docker', 'ps', '-aq', '--filter', f'label={flink_containers.LABEL}'],
    capture_output=True,
    text=True,
  ).stdout.split()
  assert leftovers == []


def _pipeline(state: dict, *args: str) -> subprocess.CompletedProcess:
  return s3_server.pipeline(dict(os.environ, **flink_containers.s3_env(state)), *args, timeout=1500)


def _download(state: dict, prefix: str, folder: str) -> str:
  """s3://runs/<prefix>/pipeline_root copied to <folder>/pipeline_root (for the readers)."""
  import boto3

  client = boto3.client('s3', **_client_args(state))
  pages = client.get_paginator('list_objects_v2').paginate(Bucket='runs', Prefix=prefix + '/')
  for key in [o['Key'] for page in pages for o in page.get('Contents', [])]:
    local = os.path.join(folder, os.path.relpath(key, prefix))
    os.makedirs(os.path.dirname(local), exist_ok=True)
    client.download_file('runs', key, local)
  return folder


def _client_args(state: dict) -> dict:
  env = flink_containers.s3_env(state)
  return dict(
    endpoint_url=env['AWS_ENDPOINT_URL'],
    aws_access_key_id=env['AWS_ACCESS_KEY_ID'],
    aws_secret_access_key=env['AWS_SECRET_ACCESS_KEY'],
    region_name=env['AWS_REGION'],
  )


@pytest.fixture(scope='module')
def csv_run(cluster, rows_csv, tmp_path_factory):
  """The engine CSV uploaded and run on the cluster, a busy TaskManager's container killed in the
  middle of the Evaluator's job: (finished process, local state folder, the output downloaded,
  the killed containers)."""
  data = flink_containers.put(rows_csv, log=lambda line: None)
  local = tmp_path_factory.mktemp('containers') / 'state'
  kill = engine_faults.kill_task_manager_container
  with engine_faults.TaskManagerKiller((EVALUATOR,), into_job_seconds=3.0, kill=kill) as killer:
    done = _pipeline(
      cluster,
      'run', '--data', data, '--output', 's3://runs/csv', '--local-dir', str(local),
      '--label', 'label', '--train-steps', '100', '--min-accuracy', '0.3', *SMALL_EVAL,
      '--beam-runner', 'FlinkRunner', '--flink-master', MASTER,
    )  # fmt: skip
  downloaded = _download(cluster, 'csv', str(tmp_path_factory.mktemp('containers_root')))
  return done, str(local), downloaded, killer.killed


def test_csv_run_ends_with_the_direct_runners_records_and_statistics(csv_run, direct_run):
  done, local, downloaded, _ = csv_run
  assert done.returncode in (0, 3), done.stdout[-3000:] + done.stderr[-3000:]
  assert records(downloaded) == records(direct_run)
  assert statistics(downloaded) == statistics(direct_run)
  assert computed_by(local) == {'FlinkRunner'}
  with open(os.path.join(local, 'last_run.json')) as f:
    assert json.load(f)['pushed_to'].startswith('s3://runs/csv/serving/')


def test_a_task_manager_killed_in_the_evaluators_job_is_recovered(csv_run):
  """Flink restarted the Evaluator's job after `docker kill` of its TaskManager; `up` started the
  container again; the Evaluator's accuracy is what the pushed model itself gives."""
  done, local, downloaded, killed = csv_run
  assert list(killed) == [EVALUATOR], "no TaskManager was killed in the Evaluator's job"
  assert killed[EVALUATOR] in flink_containers.task_managers()
  assert flink_containers.running(killed[EVALUATOR])
  assert done.returncode in (0, 3), done.stderr[-3000:]
  with open(os.path.join(local, 'last_run.json')) as f:
    accuracy = json.load(f)['eval_accuracy']
  assert accuracy == pytest.approx(pushed_models_accuracy(downloaded), abs=1e-6)


def test_statistics_gen_and_the_evaluator_ran_on_the_cluster(csv_run):
  finished = [
    job['name'] for job in flink_rest.rest('/jobs/overview')['jobs'] if job['state'] == 'FINISHED'
  ]
  assert any(name.startswith('tfrp-statisticsgen') for name in finished), finished
  assert any(name.startswith('tfrp-evaluator') for name in finished), finished


def test_no_container_sees_the_drivers_files(cluster, csv_run, rows_csv):
  for name in (
    flink_containers.pods() + flink_containers.task_managers() + flink_containers.worker_pools()
  ):
    seen = subprocess.run(['docker', 'exec', name, 'test', '-e', rows_csv], capture_output=True)
    assert seen.returncode == 1, name
  for name in [flink_containers.JOB_MANAGER, flink_containers.JOB_SERVER]:
    mounts = json.loads(
      subprocess.run(
        ['docker', 'inspect', '-f', '{{json .Mounts}}', name], capture_output=True, text=True
      ).stdout
    )
    assert all(m['Type'] == 'volume' for m in mounts), (name, mounts)
    assert {m['Name'] for m in mounts} <= {flink_containers.STAGING_VOLUME}


def test_published_ports_are_on_loopback_only(cluster):
  for name in [flink_containers.JOB_MANAGER, flink_containers.JOB_SERVER]:
    ports = json.loads(
      subprocess.run(
        ['docker', 'inspect', '-f', '{{json .NetworkSettings.Ports}}', name],
        capture_output=True,
        text=True,
      ).stdout
    )
    bindings = [b for published in ports.values() if published for b in published]
    assert bindings and {b['HostIp'] for b in bindings} == {'127.0.0.1'}, (name, ports)


def test_a_local_path_is_refused_in_one_line(cluster, rows_csv, tmp_path):
  done = _pipeline(
    cluster,
    'run', '--data', rows_csv, '--output', str(tmp_path / 'out'), '--label', 'label',
    '--beam-runner', 'FlinkRunner', '--flink-master', MASTER,
  )  # fmt: skip
  assert done.returncode == 2
  lines = done.stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith(f'error: --data {rows_csv}:'), done.stderr
  assert 's3://' in lines[0] and 'engines.flink_containers put' in lines[0]
  assert not os.path.exists(tmp_path / 'out')
