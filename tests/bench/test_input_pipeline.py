"""`bench.input_pipeline --quick`: the JSON is complete and sane (not a speed test)."""

import PIL.Image
import pytest

from bench import input_pipeline
from tests.support import bench_runs

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)

PIPELINES = ('ceiling', 'seed_000', 'seed_004', 'tfx_stock', 'tfx_stock_per_record', 'project')
IMAGE_ONLY = ('seed_004', 'tfx_stock_per_record')
CACHED = ('project_cached', 'memory', 'memory_in_order')


@pytest.fixture(scope='module')
def report(tmp_path_factory):
  folder = tmp_path_factory.mktemp('bench')
  plot = ('--plot', str(folder / 'chart.png'))
  return bench_runs.figures(input_pipeline.main, folder, '--quick', *plot), folder


def _expected(name):
  expected = [p for p in PIPELINES if not (p in IMAGE_ONLY and name == 'tabular')]
  expected += ['bare_read'] if name == 'raw' else []
  return expected + (list(CACHED) if name in ('jpeg', 'tabular') else [])


def test_every_data_set_has_every_pipeline_with_positive_rates_and_cpu(report):
  figures, _ = report
  assert set(figures['datasets']) == {'jpeg', 'raw', 'tabular'}
  for name, data in figures['datasets'].items():
    for pipeline in _expected(name):
      assert data[pipeline] > 0, (name, pipeline)
      assert data['cpu_ms_per_1k'][pipeline] > 0, (name, pipeline)
    assert 'seed_004' not in data['cpu_ms_per_1k'] or name != 'tabular'
    assert data['ceiling'] == max(data['ceiling_variants'].values())
    assert data['ceiling_kind'].startswith('ceiling_parse' if name == 'raw' else 'ceiling_')
    for demand in (50, 80, 100):
      assert 0 <= data[f'stall_{demand}'] <= 1
    assert 0 <= data['stall_floor_80'] <= 1
  assert figures['datasets']['tabular']['stall_batch'] == 1024
  jpeg = figures['datasets']['jpeg']
  assert set(jpeg['ceiling_variants_cpu_ms_per_1k']) == set(jpeg['ceiling_variants'])
  assert 'ceiling_read_parse_decode' in jpeg['ceiling_variants']  # what reading adds


def test_ratios_and_throughputs_agree_with_the_rates(report):
  figures, _ = report
  for data in figures['datasets'].values():
    for baseline, ratio in data['project_over'].items():
      assert ratio == pytest.approx(data['project'] / data[baseline])
      lowest, highest = data['project_over_rounds'][baseline]
      assert lowest <= highest  # --quick: one round, so both are that round's ratio
      assert lowest == pytest.approx(ratio) and highest == pytest.approx(ratio)
    assert all(len(rates) == 1 for rates in data['rounds'].values())
    assert data['rounds']['project'] == [data['project']]
    memory = data['memory_mb']
    assert (
      0 < memory['peak_rss_mb'] and 0 < memory['available_mb'] <= memory['available_mb_before'] * 2
    )
    for pipeline, megabytes in data['mb_per_s'].items():
      assert megabytes == pytest.approx(data[pipeline] * data['bytes_per_record'] / 1e6, rel=1e-3)
    cpu = data['cpu_ms_per_1k']
    assert data['cpu_over']['seed_000'] == pytest.approx(cpu['project'] / cpu['seed_000'])
    if 'memory' in data:
      assert data['cached_over_memory'] == pytest.approx(data['project_cached'] / data['memory'])
    assert data['records'] > 0 and data['bytes_per_record'] > 0


def test_photos_epochs_and_break_even_follow_from_the_rates(report):
  figures, _ = report
  photos = figures['photos']
  rates, epochs = photos['examples_per_s'], photos['epoch_seconds']
  for name in ('seed_000', 'project_full_size', 'project_prepared'):
    assert epochs[name] == pytest.approx(photos['records'] / rates[name])
  assert photos['epoch_speedup'] == pytest.approx(epochs['seed_000'] / epochs['project_prepared'])
  assert set(photos['prepare_seconds']) == {'worker_processes', 'in_memory'}
  assert min(photos['prepare_seconds'].values()) > 0 and photos['prepared_side'] == 300
  assert photos['megabytes_prepared'] < photos['megabytes_full_size'] / 4  # really downscaled
  if epochs['seed_000'] > epochs['project_prepared']:
    saved = epochs['seed_000'] - epochs['project_prepared']
    for mode, seconds in photos['prepare_seconds'].items():
      assert photos['break_even_epochs'][mode] == pytest.approx(seconds / saved)
  assert photos['decode_scale_over_full']['1'] == 1.0
  assert set(photos['decode_scale_over_full']) == {'1', '2', '4', '8'}


def test_every_target_is_reported_met_or_not(report):
  figures, _ = report
  rows = figures['targets']
  # throughput; CPU ×2, stall and stall beyond its floor per set; cache; photos
  assert len(rows) == 3 + 3 * 4 + 2 + 2
  assert all(isinstance(row['met'], bool) and row['measured'] for row in rows)
  jpeg = next(r for r in rows if r['target'].startswith('jpeg: project'))
  reading = figures['datasets']['jpeg']['ceiling_kind'] != 'ceiling_read_parse_decode'
  assert ('read → parse → decode alone' in jpeg['measured']) == reading
  tabular = figures['datasets']['tabular']
  beyond = next(r for r in rows if r['target'].startswith('tabular: stall beyond'))
  assert beyond['met'] == (tabular['stall_80'] - tabular['stall_floor_80'] < 0.05)
  photos = next(r for r in rows if r['target'].startswith('photos: epoch'))
  assert photos['met'] == (figures['photos']['epoch_speedup'] >= 10)


def test_chart_is_a_png(report):
  _, folder = report
  with PIL.Image.open(folder / 'chart.png') as image:
    assert image.format == 'PNG' and image.size[0] >= 640
