"""Beam's Python SDK on a real Spark standalone cluster (`python -m engines.spark up`'s, started
here): a small Beam pipeline against the DirectRunner's result, with no jar copied to the
executors beyond the runner's own; the pipeline's CSV run on Spark against the same run on the
DirectRunner (records, statistics, every Beam job a FINISHED application in the Master's JSON);
and `down` leaves no process behind."""

import glob
import os
import time

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
import pytest

from engines import spark, spark_args
from tests.engines.conftest import ROWS, computed_by, records, run_csv, statistics
from tests.support import engine_faults

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('engines')]


@pytest.fixture(scope='module')
def cluster():
  """The local cluster; stopped at the end when this module started it."""
  running = spark.status() is not None
  spark.up(log=lambda line: None)
  yield spark.status()
  if not running:
    left = spark.down(log=lambda line: None)
    assert left == [] and spark.processes() == []


def _apps() -> dict:
  return {app['id']: app for app in spark.master_json()['completedapps']}


def _new_finished_app(before: dict) -> dict:
  """The application a Beam job just ran as (the Master lists it once its driver stopped)."""
  deadline = time.monotonic() + 30
  while True:
    new = [app for app_id, app in _apps().items() if app_id not in before]
    if new or time.monotonic() > deadline:
      break
    time.sleep(0.5)
  assert len(new) == 1, new
  return new[0]


def _sums(args, output: str) -> list:
  with beam.Pipeline(options=PipelineOptions(args)) as p:
    _ = (
      p
      | beam.Create(range(10000))
      | beam.Map(lambda x: (x % 13, x * x))
      | beam.CombinePerKey(sum)
      | beam.MapTuple(lambda key, total: f'{key}\t{total}')
      | beam.io.WriteToText(output)
    )
  lines = []
  for path in glob.glob(output + '*'):
    with open(path) as f:
      lines += f.read().splitlines()
  return sorted(lines)


def test_pipeline_runs_on_spark_as_on_the_direct_runner(cluster, tmp_path):
  before = _apps()
  on_spark = _sums(spark_args.spark_args(cluster['master']), str(tmp_path / 'spark' / 'sums'))
  direct = _sums(['--runner=DirectRunner'], str(tmp_path / 'direct' / 'sums'))
  assert len(direct) == 13
  assert on_spark == direct
  app = _new_finished_app(before)
  assert app['name'].startswith('BeamApp') and app['state'] == 'FINISHED'
  # The executors load Beam's jars from the job server's folder: each executor's work folder
  # holds the runner's jar alone, not the driver's whole classpath (413 MB).
  staged = glob.glob(os.path.join(spark.home(), 'work', app['id'], '*', '*.jar'))
  assert staged and {os.path.basename(path) for path in staged} == {spark_args.RUNNER_JAR}


@pytest.fixture(scope='module')
def spark_run(cluster, rows_csv, tmp_path_factory):
  """(the CSV's run on Spark that loses an executor (SIGKILL) in its first job, the exit codes of
  that run and of the same command again when it failed, the applications, the killed pid)."""
  before = _apps()
  output = str(tmp_path_factory.mktemp('spark_run') / 'spark')
  flags = ['--beam-runner', 'SparkRunner', '--spark-master', spark.MASTER_URL]
  with engine_faults.SparkExecutorKiller() as killer:
    codes = [run_csv(rows_csv, output, *flags)]
  if codes[0] not in (0, 3):  # the lost executor failed the run: once more, from the cache
    codes.append(run_csv(rows_csv, output, *flags))
  return output, codes, [app for app_id, app in _apps().items() if app_id not in before], killer


def test_a_lost_executor_is_recovered_by_spark(spark_run):
  """Spark runs the lost executor's tasks again on the other Worker's executor (and its Worker
  starts a new one): the run that lost it ends 0 (or 3: trained, not blessed)."""
  _, codes, _, killer = spark_run
  assert killer.killed, 'no executor was seen running: the fault was not injected'
  assert codes[0] in (0, 3), f'recovered only by running again: {codes}'


def test_pipeline_run_on_spark_equals_the_direct_runner(spark_run, direct_run):
  output, codes, apps, _ = spark_run
  assert codes[-1] in (0, 3)
  assert records(output) == records(direct_run)
  assert sum(sum(c.values()) for c in records(output).values()) == ROWS
  assert statistics(output) == statistics(direct_run) and len(statistics(output)) == 8
  assert computed_by(output) == {'SparkRunner'}
  # CsvExampleGen, StatisticsGen and the Evaluator: one application each, all FINISHED.
  assert len(apps) >= 3 and {app['state'] for app in apps} == {'FINISHED'}


def test_cluster_listens_on_loopback_only(cluster):
  """Every listening socket of every process the cluster started (Master, Workers, job server
  with its artifact and expansion services, worker pool) is on a loopback address."""
  ports = {spark.MASTER_PORT, spark.JOB_PORT, spark.ARTIFACT_PORT, spark.EXPANSION_PORT}
  engine_faults.assert_loopback_only(spark.processes(), ports | {spark.WORKER_POOL_PORT})
