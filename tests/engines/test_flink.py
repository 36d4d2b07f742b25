"""The pipeline's Beam work on a real Flink cluster (`make flink-up`'s, started here): one CSV run
on Flink, with one TaskManager killed in the middle of ExampleGen's job, against the same run on
the DirectRunner: the same records per split, the same statistics (sketches aside), the
Evaluator's accuracy equal to the pushed model's own on the eval split, every job FINISHED in
the cluster's REST API; and `down` leaves no process behind."""

import collections
import glob
import os
import threading
import time

import numpy as np
import pytest
import tensorflow as tf

from engines import common, flink

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('flink')]
MASTER = f'localhost:{flink.REST_PORT}'


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


@pytest.fixture(scope='module')
def rows_csv(tmp_path_factory) -> str:
  """3,000 rows: two numbers, a category and a label learnable from the numbers."""
  rng = np.random.default_rng(7)
  path = tmp_path_factory.mktemp('flink_csv') / 'rows.csv'
  with open(path, 'w') as f:
    f.write('f0,f1,color,label\n')
    for i in range(3000):
      a, b = rng.normal(size=2).round(4)
      f.write(f'{a},{b},{("red", "blue", "green")[i % 3]},{int(a + b > 0)}\n')
  return str(path)


def _finished_jobs() -> dict:
  return {job['jid']: job for job in flink.rest('/jobs/overview')['jobs']}


def _kill_when_busy(killed: list, stop: threading.Event) -> None:
  """Kills the first TaskManager seen running a task (ExampleGen's job: the run's first)."""
  while not stop.wait(0.5):
    try:
      pid = flink.busy_task_manager_pid()
    except OSError:
      continue
    if pid:
      time.sleep(2.0)  # into the job's work, not its deployment
      os.kill(pid, 9)
      killed.append(pid)
      return


def _run(csv: str, output: str, *flags) -> int:
  from cli import main as cli_main

  common_flags = ['--label', 'label', '--train-steps', '100', '--min-accuracy', '0.3']
  return cli_main.main(['run', '--data', csv, '--output', output, *common_flags, *flags])


@pytest.fixture(scope='module')
def runs(cluster, rows_csv, tmp_path_factory):
  """(Flink output, DirectRunner output, jobs before, killed TaskManager pids, Flink exit codes)."""
  base = tmp_path_factory.mktemp('flink_runs')
  on_flink, direct = str(base / 'flink'), str(base / 'direct')
  before = _finished_jobs()
  killed, stop = [], threading.Event()
  killer = threading.Thread(target=_kill_when_busy, args=(killed, stop), daemon=True)
  killer.start()
  flags = ['--beam-runner', 'FlinkRunner', '--flink-master', MASTER]
  codes = [_run(rows_csv, on_flink, *flags)]
  stop.set()
  if codes[0] not in (0, 3):  # the job failed for the lost TaskManager: once more, from cache
    flink.up(log=lambda line: None)
    codes.append(_run(rows_csv, on_flink, *flags))
  codes_direct = _run(rows_csv, direct, '--beam-mode', 'in_memory')
  assert codes_direct in (0, 3)
  return on_flink, direct, before, killed, codes


def _canonical(record: bytes) -> tuple:
  """A tf.Example as sorted (feature, value) pairs: its map's serialized order varies by process."""
  example = tf.train.Example.FromString(record)
  return tuple(sorted((k, v.SerializeToString()) for k, v in example.features.feature.items()))


def _records(output: str, component: str, canonical: bool = True) -> dict:
  """Records per split of the component's newest Examples (order-free; canonical: as features)."""
  found = {}
  newest = max(
    glob.glob(os.path.join(output, 'pipeline_root', component, 'examples', '*')),
    key=lambda p: int(os.path.basename(p)),
  )
  for split_dir in glob.glob(os.path.join(newest, 'Split-*')):
    files = sorted(glob.glob(os.path.join(split_dir, '*')))
    compression = 'GZIP' if files and files[0].endswith('.gz') else None
    records = tf.data.TFRecordDataset(files, compression_type=compression)
    found[os.path.basename(split_dir)] = collections.Counter(
      _canonical(r.numpy()) if canonical else r.numpy() for r in records
    )
  return found


def test_fault_recovered_or_resumed(runs):
  _, _, _, killed, codes = runs
  assert killed, 'no TaskManager was seen busy: the fault was not injected'
  # Either Flink's restart strategy recovered the job (one run, exit 0/3) or the run stopped
  # and the same command finished from the cache; which one happened is in docs/operations.md.
  assert codes[-1] in (0, 3)
  print('fault outcome:', 'recovered by Flink' if len(codes) == 1 else f'resumed: {codes}')


def test_same_records_as_the_direct_runner(runs):
  on_flink, direct, *_ = runs
  flink_records = _records(on_flink, 'CsvExampleGen')
  assert set(flink_records) == {'Split-train', 'Split-eval'}
  assert flink_records == _records(direct, 'CsvExampleGen')
  assert sum(sum(c.values()) for c in flink_records.values()) == 3000  # none lost, none doubled


def _statistics(output: str) -> dict:
  from tensorflow_metadata.proto.v0 import statistics_pb2

  found = {}
  for path in glob.glob(
    os.path.join(
      output, 'pipeline_root', 'StatisticsGen', 'statistics', '*', 'Split-*', 'FeatureStats.pb'
    )
  ):
    stats = statistics_pb2.DatasetFeatureStatisticsList()
    with open(path, 'rb') as f:
      stats.ParseFromString(f.read())
    for dataset in stats.datasets:
      for feature in dataset.features:
        for kind in ('num_stats', 'string_stats'):
          if feature.HasField(kind):
            stat = getattr(feature, kind)
            common_stats = stat.common_stats
            key = (os.path.basename(os.path.dirname(path)), feature.path.step[0])
            found[key] = (
              dataset.num_examples,
              common_stats.num_non_missing,
              common_stats.num_missing,
              round(stat.mean, 9) if kind == 'num_stats' else stat.unique,
              round(stat.std_dev, 9) if kind == 'num_stats' else stat.avg_length,
              (stat.min, stat.max) if kind == 'num_stats' else len(stat.top_values),
            )
  return found


def test_same_statistics_as_the_direct_runner(runs):
  on_flink, direct, *_ = runs
  flink_stats = _statistics(on_flink)
  assert len(flink_stats) == 8  # 4 features x 2 splits
  assert flink_stats == _statistics(direct)


def test_statistics_computed_by_flink(runs):
  on_flink, direct, *_ = runs
  import ml_metadata as mlmd
  from ml_metadata.proto import metadata_store_pb2

  def computed_by(output):
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = os.path.join(output, 'metadata.sqlite')
    store = mlmd.MetadataStore(config)
    stats = store.get_artifacts_by_type('ExampleStatistics')
    return {a.custom_properties['computed_by'].string_value for a in stats}

  assert computed_by(on_flink) == {'FlinkRunner'}
  assert computed_by(direct) == {'DirectRunner'}  # --beam-mode in_memory: Beam, not in process


def test_evaluator_accuracy_is_the_models_own(runs):
  """TFMA on Flink found the accuracy that the pushed model itself gives on the eval split."""
  import json

  on_flink, *_ = runs
  with open(os.path.join(on_flink, 'last_run.json')) as f:
    accuracy = json.load(f)['eval_accuracy']
  model = tf.saved_model.load(sorted(glob.glob(os.path.join(on_flink, 'serving', '*')))[-1])
  serving = model.signatures['serving_default']
  examples = list(_records(on_flink, 'CsvExampleGen', canonical=False)['Split-eval'].elements())
  labels = [
    tf.train.Example.FromString(r).features.feature['label'].int64_list.value[0] for r in examples
  ]
  from contracts import serving as names

  outputs = serving(**{names.EXAMPLES_INPUT: tf.constant(examples)})
  probabilities = outputs[names.PROBABILITIES].numpy()
  assert accuracy == pytest.approx(float(np.mean(probabilities.argmax(1) == labels)), abs=1e-6)


def test_jobs_finished_on_the_cluster(runs):
  _, _, before, _, codes = runs
  new = {jid: job for jid, job in _finished_jobs().items() if jid not in before}
  names = [job['name'] for job in new.values()]
  finished = [job for job in new.values() if job['state'] == 'FINISHED']
  # CsvExampleGen, StatisticsGen and the Evaluator: three Beam jobs at least (a job the lost
  # TaskManager failed is there as FAILED when the run had to be repeated).
  assert len(finished) >= 3, names
  assert any(name.startswith('tfrp-statisticsgen-') for name in names), names
  assert any(name.startswith('tfrp-evaluator-') for name in names), names
  assert len(codes) > 1 or all(job['state'] == 'FINISHED' for job in new.values())
