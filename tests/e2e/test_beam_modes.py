"""Beam's DirectRunner modes give the same data: in_memory vs multi_processing (2 worker
processes) on the same images, through ImageExampleGen and StatisticsGen (`pipeline.py schema`)."""

import dataclasses
import glob
import os

import pytest
import tensorflow as tf
import tensorflow_data_validation as tfdv

from cli import main as cli_main
import config as cfg
from tests.support import runs

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)


def _run_schema(data, output, mode):
  code = cli_main.main(
    [
      'schema',
      '--data',
      data,
      '--output',
      output,
      '--out',
      os.path.join(output, 'schema.pbtxt'),
      '--beam-mode',
      mode,
      '--beam-workers',
      '2',
    ]
  )
  assert code == 0
  nodes = runs.latest_run(output, cfg.PIPELINE_NAME + '-schema')
  return nodes['ImageExampleGen'].outputs['examples'].uri, nodes['StatisticsGen'].outputs[
    'statistics'
  ].uri


def _records(examples_uri, split):
  """Each record as its sorted (feature, value) pairs: protobuf map fields have no fixed byte
  order, so the same record may serialize differently in another process."""
  files = glob.glob(os.path.join(examples_uri, f'Split-{split}', '*'))
  return sorted(
    tuple(
      sorted(
        (key, value.SerializeToString())
        for key, value in tf.train.Example.FromString(r.numpy()).features.feature.items()
      )
    )
    for r in tf.data.TFRecordDataset(files)
  )


def _feature_facts(statistics_uri, split):
  """Exact per-feature figures (the quantile sketches are approximate by design)."""
  stats = tfdv.load_stats_binary(
    os.path.join(statistics_uri, f'Split-{split}', 'FeatureStats.pb')
  ).datasets[0]
  facts = {'num_examples': stats.num_examples}
  for feature in stats.features:
    name = '.'.join(feature.path.step)
    if feature.HasField('num_stats'):
      s = feature.num_stats
      facts[name] = (
        s.common_stats.num_non_missing,
        s.min,
        s.max,
        s.num_zeros,
        round(s.mean, 6),
        round(s.std_dev, 6),
      )
    else:
      s = feature.string_stats
      facts[name] = (
        s.common_stats.num_non_missing,
        s.unique,
        sorted((v.value, v.frequency) for v in s.top_values),
      )
  return facts


@pytest.fixture(scope='module')
def both_modes(digits_subset, tmp_path_factory):
  return {
    mode: _run_schema(digits_subset, str(tmp_path_factory.mktemp(mode)), mode)
    for mode in ('in_memory', 'multi_processing')
  }


def test_both_modes_write_the_same_multiset_of_records(both_modes):
  (memory, _), (processes, _) = both_modes['in_memory'], both_modes['multi_processing']
  for split in ('train', 'eval'):
    records = _records(memory, split)
    assert records and records == _records(processes, split)


def test_both_modes_compute_the_same_statistics(both_modes):
  (_, memory), (_, processes) = both_modes['in_memory'], both_modes['multi_processing']
  for split in ('train', 'eval'):
    facts = _feature_facts(memory, split)
    assert facts['num_examples'] > 0 and facts == _feature_facts(processes, split)


def test_other_runners_get_their_flags_and_nothing_of_the_direct_runner():
  flink = cfg.PipelineConfig(
    data='',
    data_kind='',
    output='',
    beam_runner=cfg.FLINK_RUNNER,
    beam_extra_args=['--flink_master=localhost:8081'],
  )
  assert flink.beam_pipeline_args == ['--runner=FlinkRunner', '--flink_master=localhost:8081']
  local = cfg.PipelineConfig(data='', data_kind='', output='')
  assert '--direct_running_mode=multi_processing' in local.beam_pipeline_args
  assert '--direct_num_workers=0' in local.beam_pipeline_args  # Beam: one per core
  small = cfg.PipelineConfig(data='', data_kind='', output='', beam_direct_running_mode='in_memory')
  assert '--direct_num_workers=1' in small.beam_pipeline_args  # in this process: one worker
  asked = dataclasses.replace(small, beam_direct_num_workers=3)
  assert '--direct_num_workers=3' in asked.beam_pipeline_args  # a count asked for is kept


@pytest.mark.parametrize(
  'runner,needs',
  [
    ('DataflowRunner', '--beam-arg=--project=… --beam-arg=--region=… --beam-arg=--temp_location=…'),
    (
      'SparkRunner',
      '--spark-master (the local cluster of `make spark-up`: spark://localhost:7077)',
    ),
    ('FlinkRunner', '--flink-master (the local cluster of `make flink-up`: localhost:8081)'),
  ],
)
def test_a_runner_without_its_flags_is_a_one_line_error(tmp_path, capsys, runner, needs):
  assert cli_main.main(['run', '--output', str(tmp_path / 'out'), '--beam-runner', runner]) == 2
  assert capsys.readouterr().err == f'error: --beam-runner {runner} needs {needs}\n'
  assert not (tmp_path / 'out').exists()
