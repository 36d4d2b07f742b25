"""`bench.sequence_parsing`: every pipeline reads every record; the figures agree (no speed test)."""

import pytest

from bench import sequence_parsing
from tests.support import bench_runs


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  folder = tmp_path_factory.mktemp('bench')
  return bench_runs.figures(sequence_parsing.main, folder, '--records', '3000', '--repeats', '1')


def test_every_pipeline_reads_every_record_once(figures):
  assert set(figures['pipelines']) == set(sequence_parsing.PIPELINES)
  for name, pipeline in figures['pipelines'].items():
    assert pipeline['examples'] == 3000, name
    assert pipeline['examples_per_s'] > 0


def test_buckets_pad_less_than_padding_to_the_longest(figures):
  pipelines = figures['pipelines']
  for bucketed in ('project', 'per_record'):  # the same length buckets
    assert pipelines[bucketed]['padding_share'] < pipelines['per_record_padded']['padding_share']
  assert pipelines['per_record_padded']['padding_share'] <= pipelines['pad_max']['padding_share']


def test_ratios_agree_with_the_rates(figures):
  pipelines = figures['pipelines']
  for name, ratio in figures['ratios'].items():
    baseline = name[len('project_over_') :]
    assert ratio == pytest.approx(
      pipelines['project']['examples_per_s'] / pipelines[baseline]['examples_per_s']
    )
    assert figures['ratio_rounds'][name] == pytest.approx([ratio, ratio])  # one round
  assert figures['target']['met'] == (figures['ratios']['project_over_per_record'] >= 3.0)
