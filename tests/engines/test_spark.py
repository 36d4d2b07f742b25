"""Beam's Python SDK on a real Spark standalone cluster (`python -m engines.spark up`'s, started
here): a small Beam pipeline and TFDV's statistics through engines.spark.spark_args, each against
the DirectRunner's result, every Beam job a FINISHED application in the Master's JSON, no jar
copied to the executors beyond the runner's own; a master that does not answer is an EngineError
within seconds; and `down` leaves no process behind."""

import glob
import os
import socket
import time

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
import pytest

from engines import common, spark

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('spark')]


@pytest.fixture(scope='module')
def cluster():
  spark.up(log=lambda line: None)
  yield spark.status()
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
  on_spark = _sums(spark.spark_args(cluster['master']), str(tmp_path / 'spark' / 'sums'))
  direct = _sums(['--runner=DirectRunner'], str(tmp_path / 'direct' / 'sums'))
  assert len(direct) == 13
  assert on_spark == direct
  app = _new_finished_app(before)
  assert app['name'].startswith('BeamApp') and app['state'] == 'FINISHED'
  # The executors load Beam's jars from the job server's folder: the application's work folder
  # holds the runner's jar alone, not the driver's whole classpath (413 MB).
  staged = glob.glob(os.path.join(spark.home(), 'work', app['id'], '*', '*.jar'))
  assert [os.path.basename(path) for path in staged] == [spark.RUNNER_JAR]


def _examples(count: int = 300) -> list:
  import tensorflow as tf

  examples = []
  for i in range(count):
    example = tf.train.Example()
    example.features.feature['x'].float_list.value.append(i * 0.5)
    example.features.feature['n'].int64_list.value.append(i % 11)
    example.features.feature['color'].bytes_list.value.append(
      ('red', 'blue', 'green')[i % 3].encode()
    )
    examples.append(example.SerializeToString())
  return examples


def _statistics(args, output: str) -> dict:
  import tensorflow_data_validation as tfdv
  from tfx_bsl.public import tfxio

  source = tfxio.TFExampleBeamRecord(physical_format='inmem', telemetry_descriptors=['test'])
  with beam.Pipeline(options=PipelineOptions(args)) as p:
    _ = (
      p
      | beam.Create(_examples())
      | source.BeamSource()
      | tfdv.GenerateStatistics(tfdv.StatsOptions())
      | tfdv.WriteStatisticsToBinaryFile(output)
    )
  dataset = tfdv.load_stats_binary(output).datasets[0]
  found = {'examples': dataset.num_examples}
  for feature in dataset.features:
    if feature.HasField('num_stats'):
      stats = feature.num_stats
      found[feature.path.step[0]] = (
        stats.common_stats.num_non_missing,
        round(stats.mean, 9),
        round(stats.std_dev, 9),
        stats.min,
        stats.max,
      )
    else:
      stats = feature.string_stats
      found[feature.path.step[0]] = (
        stats.common_stats.num_non_missing,
        stats.unique,
        sorted((v.value, v.frequency) for v in stats.top_values),
      )
  return found


def test_tfdv_statistics_on_spark_as_on_the_direct_runner(cluster, tmp_path):
  before = _apps()
  on_spark = _statistics(spark.spark_args(cluster['master']), str(tmp_path / 'spark.pb'))
  direct = _statistics(['--runner=DirectRunner'], str(tmp_path / 'direct.pb'))
  assert on_spark['examples'] == 300 and len(on_spark) == 4
  assert on_spark == direct
  assert _new_finished_app(before)['state'] == 'FINISHED'


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


def test_a_master_nobody_answers_at_is_an_error_within_seconds():
  master = f'spark://localhost:{_free_port()}'
  start = time.monotonic()
  with pytest.raises(common.EngineError, match='no Spark master answers at'):
    spark.spark_args(master)
  assert time.monotonic() - start < 10


def test_not_a_spark_master_url():
  with pytest.raises(common.EngineError, match='not a Spark standalone master'):
    spark.spark_args('http://localhost:8080')
