"""What the engine tests share: one CSV, its run on the DirectRunner (the reference every engine's
run is compared with), and readers of a run's records and statistics."""

import collections
import glob
import os

import numpy as np
import pytest

from tests.conftest import SMALL_EVAL

ROWS = 3000


@pytest.fixture(scope='session')
def rows_csv(tmp_path_factory) -> str:
  """ROWS rows: two numbers, a category and a label learnable from the numbers."""
  rng = np.random.default_rng(7)
  path = tmp_path_factory.mktemp('engine_csv') / 'rows.csv'
  with open(path, 'w') as f:
    f.write('f0,f1,color,label\n')
    for i in range(ROWS):
      a, b = rng.normal(size=2).round(4)
      f.write(f'{a},{b},{("red", "blue", "green")[i % 3]},{int(a + b > 0)}\n')
  return str(path)


def run_csv(csv: str, output: str, *flags) -> int:
  """`pipeline.py run` on the CSV, in process, with few training steps: its exit code."""
  from cli import main as cli_main

  common_flags = ['--label', 'label', '--train-steps', '100', '--min-accuracy', '0.3', *SMALL_EVAL]
  return cli_main.main(['run', '--data', csv, '--output', output, *common_flags, *flags])


@pytest.fixture(scope='session')
def direct_run(rows_csv, tmp_path_factory) -> str:
  """The CSV's run on the DirectRunner in one process (Beam for every Beam component)."""
  output = str(tmp_path_factory.mktemp('engine_direct') / 'direct')
  assert run_csv(rows_csv, output, '--beam-mode', 'in_memory') in (0, 3)
  return output


def _canonical(record: bytes) -> tuple:
  """A tf.Example as sorted (feature, value) pairs: its map's serialized order varies by process."""
  import tensorflow as tf

  example = tf.train.Example.FromString(record)
  return tuple(sorted((k, v.SerializeToString()) for k, v in example.features.feature.items()))


def records(output: str, component: str = 'CsvExampleGen', canonical: bool = True) -> dict:
  """Records per split of the component's newest Examples (order-free; canonical: as features)."""
  import tensorflow as tf

  found = {}
  newest = max(
    glob.glob(os.path.join(output, 'pipeline_root', component, 'examples', '*')),
    key=lambda p: int(os.path.basename(p)),
  )
  for split_dir in glob.glob(os.path.join(newest, 'Split-*')):
    files = sorted(glob.glob(os.path.join(split_dir, '*')))
    compression = 'GZIP' if files and files[0].endswith('.gz') else None
    dataset = tf.data.TFRecordDataset(files, compression_type=compression)
    found[os.path.basename(split_dir)] = collections.Counter(
      _canonical(r.numpy()) if canonical else r.numpy() for r in dataset
    )
  return found


def statistics(output: str) -> dict:
  """(split, feature) → the statistics that do not depend on sketches."""
  from tensorflow_metadata.proto.v0 import statistics_pb2

  found = {}
  pattern = os.path.join(output, 'pipeline_root', 'StatisticsGen', 'statistics', '*', 'Split-*')
  for path in glob.glob(os.path.join(pattern, 'FeatureStats.pb')):
    stats = statistics_pb2.DatasetFeatureStatisticsList()
    with open(path, 'rb') as f:
      stats.ParseFromString(f.read())
    for dataset in stats.datasets:
      for feature in dataset.features:
        key = (os.path.basename(os.path.dirname(path)), feature.path.step[0])
        if feature.HasField('num_stats'):
          stat = feature.num_stats
          shape = (round(stat.mean, 9), round(stat.std_dev, 9), stat.min, stat.max)
        else:
          stat = feature.string_stats
          shape = (stat.unique, sorted((v.value, v.frequency) for v in stat.top_values))
        common = stat.common_stats
        found[key] = (dataset.num_examples, common.num_non_missing, common.num_missing, shape)
  return found


def computed_by(output: str) -> set:
  """The statistics artifacts' `computed_by` property in the run's ML Metadata."""
  import ml_metadata as mlmd
  from ml_metadata.proto import metadata_store_pb2

  config = metadata_store_pb2.ConnectionConfig()
  config.sqlite.filename_uri = os.path.join(output, 'metadata.sqlite')
  store = mlmd.MetadataStore(config)
  return {
    a.custom_properties['computed_by'].string_value
    for a in store.get_artifacts_by_type('ExampleStatistics')
  }


def pushed_models_accuracy(output: str) -> float:
  """The accuracy that the newest model under output/serving gives on output's eval split."""
  import tensorflow as tf

  from contracts import serving as names

  model = tf.saved_model.load(sorted(glob.glob(os.path.join(output, 'serving', '*')))[-1])
  serving = model.signatures['serving_default']
  examples = list(records(output, 'CsvExampleGen', canonical=False)['Split-eval'].elements())
  labels = [
    tf.train.Example.FromString(r).features.feature['label'].int64_list.value[0] for r in examples
  ]
  outputs = serving(**{names.EXAMPLES_INPUT: tf.constant(examples)})
  return float(np.mean(outputs[names.PROBABILITIES].numpy().argmax(1) == labels))
