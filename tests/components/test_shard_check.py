"""The ShardCheck executor: an artifact's shards scanned in processes, training stopped above
the damage threshold."""

import os

import pytest

from components.shard_check import executor
from records import damage as damage_module
from records import scan
from tests.support.shards import (
  DAMAGED_INDEX,
  RECORDS,
  damage,
  digit_records,
  record_offset,
  write_shard,
)


@pytest.fixture(scope='module')
def records():
  return digit_records()


def test_check_all_in_processes_keeps_relative_paths(tmp_path, records):
  for split in ('train', 'eval'):
    os.makedirs(tmp_path / 'ex' / f'Split-{split}')
    write_shard(str(tmp_path / 'ex' / f'Split-{split}' / 'data-00000-of-00001'), records[:50])
  paths = executor.shard_paths(str(tmp_path / 'ex'))
  reports = scan.check_all(
    paths, salvage_dir=str(tmp_path / 'out'), salvage_clean=True, workers=2, processes=True
  )
  assert [r.good for r in reports] == [50, 50]
  assert sorted(os.path.relpath(r.salvaged_to, tmp_path / 'out') for r in reports) == [
    'Split-eval/data-00000-of-00001',
    'Split-train/data-00000-of-00001',
  ]


def test_threshold_stops_training_only_above_the_limit(tmp_path, records):
  split = tmp_path / 'ex' / 'Split-train'
  os.makedirs(split)
  path = write_shard(str(split / 'data-00000-of-00001'), records)
  damage(path, record_offset(open(path, 'rb').read(), DAMAGED_INDEX) + 20)
  totals = executor.check(str(tmp_path / 'ex'), max_damaged_percent=1.0)  # 1/500 = 0.2 %
  assert (totals['good'], totals['corrupt'], totals['damaged_shards']) == (RECORDS - 1, 1, 1)
  with pytest.raises(
    damage_module.DamagedShards,
    match=r'0\.20% of the records .* more than '
    r'--max-damaged-percent 0\.1',
  ):
    executor.check(str(tmp_path / 'ex'), max_damaged_percent=0.1)


def test_a_truncated_shard_is_judged_by_the_records_recorded(tmp_path, records):
  """Cut after 100 of 500 records: by its own count one record is lost (0.99 %, under 1 %);
  against the 500 the ExampleGen recorded, 400 are missing."""
  split = tmp_path / 'ex' / 'Split-train'
  os.makedirs(split)
  path = write_shard(str(split / 'data-00000-of-00001'), records)
  with open(path, 'rb') as f:
    data = f.read()
  with open(path, 'wb') as f:
    f.write(data[: record_offset(data, 100) + 7])
  assert executor.check(str(tmp_path / 'ex'), max_damaged_percent=1.0)['good'] == 100
  with pytest.raises(
    damage_module.DamagedShards,
    match=r'^80\.00% of the records .* damaged or missing \(400 of 500 recorded records missing, '
    r'0 corrupt, 7 truncated bytes in 1 of 1 shards\)',
  ):
    executor.check(str(tmp_path / 'ex'), 1.0, recorded={'train': RECORDS, 'eval': 100})
