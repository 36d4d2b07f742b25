"""`bench.example_gen` on 100 images: the figures are complete and consistent (no
speed test)."""

import pytest

from bench import example_gen
from tests.support import bench_runs

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)


IMAGES = 100  # and a quarter of them: the runs are named <workers>w_<images>


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  folder = tmp_path_factory.mktemp('bench')
  return bench_runs.figures(example_gen.main, folder, '--images', str(IMAGES), '--repeats', '1')


def test_every_run_has_a_rate_and_a_peak_memory(figures):
  for name in (
    'seed',
    'own_steps',
    'workers1',
    'workers2',
    'workers1_marginal',
    'workers2_marginal',
  ):
    assert figures['images_per_s'][name] > 0, name
  assert set(figures['peak_mb']) == {
    f'{workers}w_{images}' for workers in (1, 2) for images in (IMAGES // 4, IMAGES)
  }
  assert all(mb > 100 for mb in figures['peak_mb'].values())  # TensorFlow alone is more


def test_ratios_follow_from_the_rates_and_targets_from_the_ratios(figures):
  rates, ratios = figures['images_per_s'], figures['ratios']
  for name, ratio in ratios.items():  # one round: its ratios are the medians' too
    assert figures['ratios_rounds'][name] == pytest.approx([ratio, ratio]), name
  assert ratios['workers2_over_workers1'] == pytest.approx(
    rates['workers2_marginal'] / rates['workers1_marginal']
  )
  assert ratios['per_core_over_seed'] == pytest.approx(
    rates['workers2_marginal'] / 2 / rates['seed']
  )
  assert ratios['memory_4n_over_n'] == pytest.approx(
    figures['peak_mb'][f'2w_{IMAGES}'] / figures['peak_mb'][f'2w_{IMAGES // 4}']
  )
  assert figures['targets']['memory_4n_over_n']['met'] == (ratios['memory_4n_over_n'] <= 1.2)
  assert ratios['marginal_over_own_steps'] == pytest.approx(
    rates['workers1_marginal'] / rates['own_steps']
  )
  assert figures['beam_us_per_image'] == pytest.approx(
    1e6 / rates['workers1_marginal'] - 1e6 / rates['own_steps']
  )
  met = ratios['marginal_over_own_steps'] >= 0.6
  assert figures['targets']['marginal_over_own_steps']['met'] == met
  seconds = figures['grouping_seconds']
  assert ratios['duplicates_over_off'] == pytest.approx(seconds['group'][0] / seconds['off'][0])
  assert figures['duplicates_us_per_image'] == pytest.approx(
    1e6 * (seconds['group'][0] - seconds['off'][0]) / IMAGES
  )
  met = ratios['duplicates_over_off'] <= 1.1
  assert figures['targets']['duplicates_over_off']['met'] == met
