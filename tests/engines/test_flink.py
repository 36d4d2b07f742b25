"""The pipeline's Beam work on a real Flink cluster (`make flink-up`'s, started here): one CSV run
on Flink, with one TaskManager killed in the middle of ExampleGen's job, against the same run on
the DirectRunner: the same records per split, the same statistics (sketches aside), the
Evaluator's accuracy equal to the pushed model's own on the eval split, every job FINISHED in
the cluster's REST API; and `down` leaves no process behind."""

import glob
import os
import threading
import time

import pytest

from engines import common, flink, flink_rest
from tests.conftest import SMALL_EVAL
from tests.engines.conftest import (
  ROWS,
  computed_by,
  pushed_models_accuracy,
  records,
  run_csv,
  statistics,
)
from tests.support import engine_faults

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('engines')]
MASTER = engine_faults.MASTER


@pytest.fixture(scope='module')
def cluster():
  """The local cluster; stopped at the end when this module started it (`make flink-up`'s, left
  running by a user or a benchmark, is left as it was)."""
  running = flink.status() is not None
  flink.up(log=lambda line: None)
  yield flink.status()
  if not running:
    left = flink.down(log=lambda line: None)
    assert left == [] and common.processes_of(flink.NAME) == []


def _finished_jobs() -> dict:
  return {job['jid']: job for job in flink_rest.rest('/jobs/overview')['jobs']}


# The CSV run's three kinds of Beam job; the image run's fourth (BulkInferrer) below.
CSV_JOBS = ('tfrp-csvexamplegen-', 'tfrp-statisticsgen-', 'tfrp-evaluator-')


@pytest.fixture(scope='module')
def runs(cluster, rows_csv, direct_run, tmp_path_factory):
  """(Flink output, DirectRunner output, jobs before, killed TaskManager pids, Flink exit code):
  one CSV run on Flink that loses a TaskManager (SIGKILL) in the middle of each of its jobs."""
  on_flink = str(tmp_path_factory.mktemp('flink_runs') / 'flink')
  before = _finished_jobs()
  started_ms = time.time() * 1000
  flags = ['--beam-runner', 'FlinkRunner', '--flink-master', MASTER]
  with engine_faults.TaskManagerKiller(CSV_JOBS) as killer:
    code = run_csv(rows_csv, on_flink, *flags)
  window = (started_ms, time.time() * 1000)
  return on_flink, direct_run, (before, window), killer.killed, code


def test_task_manager_lost_in_every_job_recovered(runs):
  """Flink's restart strategy outlasts the lost TaskManager's detection: each job recovered
  inside the same run (exit 0, or 3: trained, not blessed)."""
  on_flink, *_, killed, code = runs
  assert set(killed) == set(CSV_JOBS), f'the fault was injected in {sorted(killed)} only'
  assert code in (0, 3)
  # The lost attempts' Beam sink folders went once each component succeeded.
  left = glob.glob(
    os.path.join(on_flink, 'pipeline_root', '*', '[!.]*', '**', 'beam-temp-*'), recursive=True
  )
  assert left == [], left


def test_same_records_as_the_direct_runner(runs):
  on_flink, direct, *_ = runs
  flink_records = records(on_flink, 'CsvExampleGen')
  assert set(flink_records) == {'Split-train', 'Split-eval'}
  assert flink_records == records(direct, 'CsvExampleGen')
  assert sum(sum(c.values()) for c in flink_records.values()) == ROWS  # none lost, none doubled


def test_same_statistics_as_the_direct_runner(runs):
  on_flink, direct, *_ = runs
  flink_stats = statistics(on_flink)
  assert len(flink_stats) == 8  # 4 features x 2 splits
  assert flink_stats == statistics(direct)


def test_statistics_computed_by_flink(runs):
  on_flink, direct, *_ = runs
  assert computed_by(on_flink) == {'FlinkRunner'}
  assert computed_by(direct) == {'DirectRunner'}  # --beam-mode in_memory: Beam, not in process


def test_evaluator_accuracy_is_the_models_own(runs):
  """TFMA on Flink found the accuracy that the pushed model itself gives on the eval split."""
  import json

  on_flink, *_ = runs
  with open(os.path.join(on_flink, 'last_run.json')) as f:
    accuracy = json.load(f)['eval_accuracy']
  assert accuracy == pytest.approx(pushed_models_accuracy(on_flink), abs=1e-6)


def test_jobs_finished_on_the_cluster(runs):
  _, _, (before, (start, end)), _, _ = runs
  new = [
    job
    for jid, job in _finished_jobs().items()
    if jid not in before and start <= job['start-time'] and 0 < job['end-time'] <= end
  ]
  names = [job['name'] for job in new]
  # CsvExampleGen, StatisticsGen and the Evaluator: each FINISHED although it lost a TaskManager.
  for prefix in CSV_JOBS:
    assert any(name.startswith(prefix) for name in names), names
  assert all(job['state'] == 'FINISHED' for job in new), new


@pytest.fixture(scope='module')
def image_run(cluster, digits_subset, tmp_path_factory):
  """The digits subset on Flink with unlabeled images to score (ImageExampleGen, StatisticsGen,
  the Evaluator and the BulkInferrer as Flink jobs; the BulkInferrer's loses a TaskManager), then
  `predict` with the pushed model on Flink and on the DirectRunner: (output, run exit code,
  predict outputs, predict exit codes, the killed TaskManagers)."""
  import shutil

  base = tmp_path_factory.mktemp('flink_images')
  unlabeled = base / 'unlabeled'
  unlabeled.mkdir()
  for digit in ('3', '8'):
    for name in sorted(os.listdir(os.path.join(digits_subset, digit)))[:4]:
      shutil.copy(os.path.join(digits_subset, digit, name), unlabeled / f'{digit}-{name}')
  output = str(base / 'out')
  from cli import main as cli_main

  engine = ['--beam-runner', 'FlinkRunner', '--flink-master', MASTER]
  run = [
    'run',
    '--data',
    digits_subset,
    '--infer-data',
    str(unlabeled),
    '--output',
    output,
    '--train-steps',
    '100',
    '--min-accuracy',
    '0.3',
    *SMALL_EVAL,
    *engine,
  ]
  with engine_faults.TaskManagerKiller(('tfrp-bulkinferrer-',)) as killer:
    code = cli_main.main(run)
  predicted, codes = {}, []
  for name, flags in (('flink', engine), ('direct', [])):
    out = str(base / f'{name}.csv')
    predict = ['predict', '--data', str(unlabeled), '--output', output, '--out', out, *flags]
    codes.append(cli_main.main(predict))
    predicted[name] = out
  return output, code, predicted, codes, killer.killed


def test_images_and_bulk_inference_on_flink(image_run):
  output, code, _, _, killed = image_run
  import json

  assert list(killed) == ['tfrp-bulkinferrer-'], 'the BulkInferrer lost no TaskManager'
  assert code in (0, 3)
  with open(os.path.join(output, 'last_run.json')) as f:
    facts = json.load(f)
  assert sum(facts['examples_per_split'].values()) == 400
  assert computed_by(output) == {'FlinkRunner'}
  (csv,) = glob.glob(
    os.path.join(output, 'pipeline_root', 'PredictionCsv', 'predictions', '*', '*.csv')
  )
  with open(csv) as f:
    assert len(f.read().splitlines()) == 1 + 8  # a header and every unlabeled image


def test_bulk_inference_after_a_lost_task_manager_equals_the_direct_runner(image_run):
  """The BulkInferrer's job lost a TaskManager and still gave each image the class that
  `predict` on the DirectRunner gives it."""
  import csv

  output, _, predicted, _, _ = image_run
  (path,) = glob.glob(
    os.path.join(output, 'pipeline_root', 'PredictionCsv', 'predictions', '*', '*.csv')
  )
  classes = {}
  for name, csv_path in (('bulk', path), ('direct', predicted['direct'])):
    with open(csv_path, newline='') as f:
      classes[name] = sorted((os.path.basename(r['id']), r['class']) for r in csv.DictReader(f))
  assert len(classes['bulk']) == 8
  assert classes['bulk'] == classes['direct']


def test_predict_on_flink_equals_the_direct_runner(image_run):
  """The same class for every image and the same probability but for float rounding (the two
  runners batch the images differently)."""
  import csv

  _, _, predicted, codes, _ = image_run
  assert codes == [0, 0]
  rows = {}
  for name, path in predicted.items():
    with open(path, newline='') as f:
      rows[name] = sorted(csv.DictReader(f), key=lambda row: row['id'])
  assert len(rows['flink']) == 8
  assert [(r['id'], r['class']) for r in rows['flink']] == [
    (r['id'], r['class']) for r in rows['direct']
  ]
  assert [float(r['probability']) for r in rows['flink']] == pytest.approx(
    [float(r['probability']) for r in rows['direct']], abs=1e-4
  )


def test_cluster_listens_on_loopback_only(cluster):
  """Every listening socket of every process the cluster started (JobManager, TaskManagers, job
  server with its artifact and expansion services, worker pool, and the Fn API servers the
  TaskManagers opened for the jobs before it) is on a loopback address."""
  ports = {flink.REST_PORT, flink.JOB_PORT, flink.ARTIFACT_PORT, flink.EXPANSION_PORT}
  ports.add(flink.WORKER_POOL_PORT)
  engine_faults.assert_loopback_only(common.processes_of(flink.NAME), ports)


def test_listening_sockets_are_read_from_proc():
  import socket

  with socket.socket() as loopback, socket.socket(socket.AF_INET6) as wildcard:
    loopback.bind(('127.0.0.1', 0))
    wildcard.bind(('::', 0))
    loopback.listen()
    wildcard.listen()
    found = engine_faults.listening_sockets([os.getpid()])
    assert (os.getpid(), '127.0.0.1', loopback.getsockname()[1]) in found
    assert (os.getpid(), '0:0:0:0:0:0:0:0', wildcard.getsockname()[1]) in found


def _guarded_job(name: str, fault, wait_seconds: float = 60.0):
  """A slow Beam job on the cluster under engines.job_guard; `fault()` once its tasks run:
  (the EngineError the guard raised, seconds from the fault to it, the job's state after)."""
  import apache_beam as beam
  from apache_beam.options.pipeline_options import PipelineOptions

  from engines import flink_args, job_guard

  job_name = f'tfrp-test-{name}-{int(time.time())}'
  args = [*flink_args.flink_args(MASTER), f'--job_name={job_name}']
  faulted = []

  def inject():
    while not faulted:
      jobs = [job for job in flink_rest.rest('/jobs/overview')['jobs'] if job['name'] == job_name]
      if jobs and jobs[0]['tasks'].get('running'):
        time.sleep(2.0)
        fault()
        faulted.append(time.monotonic())
      time.sleep(0.5)

  threading.Thread(target=inject, daemon=True).start()
  with pytest.raises(common.EngineError) as raised:
    with job_guard.JobGuard(MASTER, job_name, wait_seconds=wait_seconds):
      with beam.Pipeline(options=PipelineOptions(args)) as p:
        _ = p | beam.Create(range(400)) | beam.Map(lambda x: time.sleep(0.5) or x)
  seconds = time.monotonic() - faulted[0]
  try:
    states = [
      j['state'] for j in flink_rest.rest('/jobs/overview')['jobs'] if j['name'] == job_name
    ]
  except OSError:
    states = ['unreachable']
  return raised.value, seconds, states


def test_a_stopped_worker_pool_ends_the_job_with_one_line(cluster):
  """No SDK worker can start once the pool is gone: the job ends within the guard's bound with a
  line naming the pool and its log, and is cancelled on the cluster; `up` then restarts the
  half-dead cluster clean."""
  state = flink.status()
  error, seconds, states = _guarded_job(
    'pool', lambda: common.stop_process(state['worker_pool_pid'], grace=1.0)
  )
  message = str(error)
  assert 'SDK worker pool' in message and 'worker-pool.log' in message and '\n' not in message
  assert seconds < 60.0
  assert states and set(states) <= {'CANCELLING', 'CANCELED'}, states
  flink.up(log=lambda line: None)
  assert all(flink.status()['processes'].values())


def test_a_dead_job_manager_is_named_within_15_s(cluster):
  """SIGKILL to the JobManager in the middle of a job: one line naming it and its log within
  15 s; `up` then starts the cluster clean: one JobManager, every process alive."""
  (job_manager,) = flink.job_manager_pids()
  error, seconds, _ = _guarded_job('jobmanager', lambda: os.kill(job_manager, 9))
  assert 'JobManager' in str(error) and 'standalonesession' in str(error)
  assert seconds < 15.0
  assert flink.status()['processes']['jobmanager'] == []
  flink.up(log=lambda line: None)
  alive = flink.status()['processes']
  assert all(alive.values()) and len(alive['jobmanager']) == 1, alive
  entrypoints = [
    pid
    for pid in common.processes_of(flink.NAME)
    if b'StandaloneSessionClusterEntrypoint' in open(f'/proc/{pid}/cmdline', 'rb').read()
  ]
  assert entrypoints == alive['jobmanager']
