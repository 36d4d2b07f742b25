"""StatisticsGen: small data's statistics computed in process equal TFX's Beam pipeline's, on
TFX's own test Examples (the taxi data: ints, floats, strings, missing values, GZIP shards)."""

import os
from unittest import mock

import pytest
from tensorflow_metadata.proto.v0 import statistics_pb2
from tfx.components.statistics_gen import executor as stock_executor
from tfx.dsl.components.base.base_beam_executor import BaseBeamExecutor
from tfx.types import standard_artifacts

from components.statistics_gen import executor
import config as cfg
from tests.support import tfx_data

TAXI_EXAMPLES = os.path.join(tfx_data.TFX_DIR, 'components', 'testdata', 'csv_example_gen')
SPLITS = ('train', 'eval')


def _taxi() -> standard_artifacts.Examples:
  examples = standard_artifacts.Examples()
  examples.uri, examples.split_names = TAXI_EXAMPLES, '["train", "eval"]'
  return examples


def _run(executor_class, output: str, **properties) -> standard_artifacts.ExampleStatistics:
  examples = _taxi()
  statistics = standard_artifacts.ExampleStatistics()
  statistics.uri = output
  context = BaseBeamExecutor.Context(
    beam_pipeline_args=['--direct_running_mode=in_memory', cfg.LOCAL_ENVIRONMENT],
    tmp_dir=output + '.tmp',
    unique_id='1',
  )
  executor_class(context).Do(
    {'examples': [examples]},
    {'statistics': [statistics]},
    {'exclude_splits': '[]', **properties},
  )
  return statistics


def _statistics(artifact, split: str) -> statistics_pb2.DatasetFeatureStatistics:
  found = statistics_pb2.DatasetFeatureStatisticsList()
  with open(os.path.join(artifact.uri, f'Split-{split}', 'FeatureStats.pb'), 'rb') as f:
    found.ParseFromString(f.read())
  (dataset,) = found.datasets
  return dataset


@pytest.fixture(scope='module')
def both(tmp_path_factory):
  folder = tmp_path_factory.mktemp('statistics')
  stock = _run(stock_executor.Executor, str(folder / 'stock'))
  beam = AssertionError("TFX's Beam pipeline ran, not the in-process path")
  with mock.patch.object(stock_executor.Executor, 'Do', side_effect=beam):
    ours = _run(executor.Executor, str(folder / 'ours'), in_process_below_bytes=1 << 30)
  return stock, ours


def _without_sketches(feature: statistics_pb2.FeatureNameStatistics):
  """The feature's statistics less what both compute as quantile sketches (histograms and the
  median): those agree to a bucket's rounding only."""
  exact = statistics_pb2.FeatureNameStatistics()
  exact.CopyFrom(feature)
  for stats in (exact.num_stats, exact.string_stats):
    stats.common_stats.ClearField('num_values_histogram')
    stats.common_stats.ClearField('feature_list_length_histogram')
  exact.num_stats.ClearField('histograms')
  exact.num_stats.ClearField('median')
  exact.string_stats.ClearField('rank_histogram')
  return exact


def test_in_process_statistics_equal_the_beam_pipelines(both):
  stock, ours = both
  assert ours.split_names == stock.split_names
  assert ours.span == stock.span
  for split in SPLITS:
    expected, found = _statistics(stock, split), _statistics(ours, split)
    assert found.num_examples == expected.num_examples > 1000
    names = [f.path.step[0] for f in found.features]
    assert names == [f.path.step[0] for f in expected.features] and len(names) > 10
    kinds = {f.type for f in found.features}
    assert {
      statistics_pb2.FeatureNameStatistics.INT,
      statistics_pb2.FeatureNameStatistics.FLOAT,
      statistics_pb2.FeatureNameStatistics.STRING,
    } <= kinds
    for mine, theirs in zip(found.features, expected.features):
      assert _without_sketches(mine) == _without_sketches(theirs), mine.path.step[0]
      if mine.HasField('num_stats'):
        assert mine.num_stats.median == pytest.approx(
          theirs.num_stats.median, abs=0.05 * (theirs.num_stats.max - theirs.num_stats.min)
        )


def test_missing_values_and_top_values_are_there(both):
  _, ours = both
  features = {f.path.step[0]: f for f in _statistics(ours, 'train').features}
  assert any(f.num_stats.common_stats.num_missing for f in features.values())
  payment = features['payment_type'].string_stats
  assert payment.top_values and payment.unique >= 2


def test_beam_path_shows_examples_read_of_the_total_and_keeps_tfx_s_statistics(
  both, tmp_path, caplog
):
  import logging

  from contracts import artifacts
  from utils import progress

  caplog.set_level(logging.INFO, logger=progress.LOGGER)
  counted = _run(executor.Executor, str(tmp_path / 'counted'), in_process_below_bytes=0)
  shards = [p for s in SPLITS for p in executor.split_files(_taxi(), [s])[s]]
  total = artifacts.record_count(shards)
  lines = [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]
  assert lines[-1].startswith(f'StatisticsGen: {total:,} of {total:,} examples read for statistics')
  stock, _ = both
  for split in SPLITS:  # the counting step passed every record on to TFX's pipeline
    assert _statistics(counted, split).num_examples == _statistics(stock, split).num_examples


def test_no_limit_or_a_schema_input_leaves_it_to_beam(tmp_path):
  examples = _taxi()
  assert executor.in_process_splits(examples, {'in_process_below_bytes': 1 << 30}, False)
  assert not executor.in_process_splits(examples, {'in_process_below_bytes': 0}, False)
  assert not executor.in_process_splits(examples, {'in_process_below_bytes': 1 << 30}, True)
  assert not executor.in_process_splits(examples, {'in_process_below_bytes': 1000}, False)
