"""`bench.input_pipeline --quick`: the JSON is complete and sane (not a speed test)."""

import json

import PIL.Image
import pytest

from bench import input_pipeline

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)

PIPELINES = ('ceiling', 'seed_000', 'seed_004', 'tfx_stock', 'project')


@pytest.fixture(scope='module')
def report(tmp_path_factory):
  folder = tmp_path_factory.mktemp('bench')
  input_pipeline.main(
    ['--quick', '--json', str(folder / 'figures.json'), '--plot', str(folder / 'chart.png')]
  )
  with open(folder / 'figures.json') as f:
    return json.load(f), folder


def test_every_data_set_has_every_pipeline_with_positive_rates(report):
  figures, _ = report
  assert set(figures['datasets']) == {'jpeg', 'raw', 'tabular'}
  for name, data in figures['datasets'].items():
    expected = [p for p in PIPELINES if not (p == 'seed_004' and name == 'tabular')]
    for pipeline in expected:
      assert data[pipeline] > 0, (name, pipeline)
    assert data['ceiling'] == max(data['ceiling_variants'].values())
    for demand in (50, 80, 100):
      assert 0 <= data[f'stall_{demand}'] <= 1


def test_ratios_and_throughputs_agree_with_the_rates(report):
  figures, _ = report
  for data in figures['datasets'].values():
    for baseline, ratio in data['project_over'].items():
      assert ratio == pytest.approx(data['project'] / data[baseline])
    for pipeline, megabytes in data['mb_per_s'].items():
      assert megabytes == pytest.approx(data[pipeline] * data['bytes_per_record'] / 1e6, rel=1e-3)
    assert data['records'] > 0 and data['bytes_per_record'] > 0


def test_chart_is_a_png(report):
  _, folder = report
  with PIL.Image.open(folder / 'chart.png') as image:
    assert image.format == 'PNG' and image.size[0] >= 640
