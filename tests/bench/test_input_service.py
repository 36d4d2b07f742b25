"""`bench.input_service --quick`: the JSON is complete and consistent (not a speed test)."""

import pytest

from bench import input_service
from tests.support import bench_runs

RATIOS = {
  'service_over_in_process': ('service_2w', 'in_process_2core'),
  'workers2_over_workers1': ('service_2w', 'service_1w'),
  'service_1w_over_in_process_1core': ('service_1w', 'in_process_1core'),
  'parallel_over_distributed': ('service_2w_parallel', 'service_2w'),
  'snappy_over_uncompressed': ('service_2w_snappy', 'service_2w'),
}


pytestmark = pytest.mark.slow  # six pipelines in processes of their own (~45 s)


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  return bench_runs.figures(input_service.main, tmp_path_factory.mktemp('bench'), '--quick')['jpeg']


def test_every_pipeline_has_a_rate_and_a_cpu_cost(figures):
  for name in input_service.PIPELINES:
    assert figures['examples_per_s'][name] > 0, name
    assert figures['cpu_us_per_example'][name] >= figures['trainer_cpu_us_per_example'][name] > 0
  for name in ('in_process_2core', 'in_process_1core'):  # nothing runs outside the consumer
    assert figures['cpu_us_per_example'][name] == figures['trainer_cpu_us_per_example'][name]


def test_ratios_follow_from_the_rates_and_targets_from_the_ratios(figures):
  rates = figures['examples_per_s']
  assert set(figures['ratios']) == set(RATIOS)
  for name, (numerator, denominator) in RATIOS.items():
    assert figures['ratios'][name] == pytest.approx(rates[numerator] / rates[denominator])
    ratio = figures['ratios'][name]  # --quick: one round, so its spread is that ratio
    assert figures['ratio_rounds'][name] == pytest.approx([ratio, ratio])
  for name, target in figures['targets'].items():
    assert target['met'] == (figures['ratios'][name] >= target['target'])
    assert target['above_ceiling'] == (target['target'] > figures['ceilings'][name])


def test_ceilings_follow_from_the_cpu_per_example(figures):
  cpu, trainer = figures['cpu_us_per_example'], figures['trainer_cpu_us_per_example']
  assert figures['ceilings'] == pytest.approx(
    {
      'service_over_in_process': cpu['in_process_2core'] / cpu['service_2w'],
      'workers2_over_workers1': 2 * (cpu['service_1w'] - trainer['service_1w']) / cpu['service_2w'],
    }
  )
