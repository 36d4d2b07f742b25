"""bench.containers' ratios follow from its rounds (the runs themselves need Docker and minutes:
the container tests in tests/kubeflow run the same launcher and image)."""

import pytest

from bench import containers


def test_ratios_are_medians_with_their_round_by_round_spread():
  rounds = [
    {
      'containers': 30.0, 'subprocesses': 20.0, 'local_run': 10.0, 'warm_build_s': 3.0,
      'container_python_s': 0.6, 'host_python_s': 0.03,
      'container_tfx_import_s': 6.0, 'host_tfx_import_s': 5.0,
    },
    {
      'containers': 36.0, 'subprocesses': 24.0, 'local_run': 12.0, 'warm_build_s': 5.0,
      'container_python_s': 0.8, 'host_python_s': 0.05,
      'container_tfx_import_s': 7.0, 'host_tfx_import_s': 5.0,
    },
  ]  # fmt: skip
  found = containers.summary({'rounds': rounds})
  assert found['medians_s']['containers'] == 33.0 and found['medians_s']['warm_build_s'] == 4.0
  over = found['containers_over_subprocesses']
  assert over['median'] == pytest.approx(33.0 / 22.0) and over['rounds'] == [1.5, 1.5]
  start = found['container_start_over_host']
  assert start['median'] == pytest.approx(0.7 / 0.04)
  assert start['rounds'] == pytest.approx([16.0, 20.0])
  assert found['container_tfx_import_over_host']['rounds'] == pytest.approx([1.2, 1.4])
