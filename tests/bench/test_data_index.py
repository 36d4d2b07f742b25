"""`bench.data_index --quick`: the figures are complete and the edit is seen (no speed test)."""

from bench import data_index
from tests.support import bench_runs


def test_each_folder_has_its_seconds_and_sees_the_edit(tmp_path):
  figures = bench_runs.figures(data_index.main, tmp_path, '--quick')
  assert figures['digits']['files'] == 1797
  assert figures['small_files']['files'] == data_index.QUICK_FILES
  for name in ('digits', 'small_files'):
    found = figures[name]
    assert found['edit_seen'] is True
    assert found['added'] == round(found['warm'] - found['stat_only'], 4)
    assert min(found['stat_only'], found['cold'], found['warm']) > 0
