"""records/damage.py: records lost counted against the counts the ExampleGen recorded."""

from records import damage, scan


def _report(path: str, good: int, truncated: int = 0) -> scan.ShardReport:
  return scan.ShardReport(path, good=good, truncated_bytes=truncated)


def test_missing_records_are_the_recorded_ones_not_read_per_split():
  reports = [
    _report('/ex/Split-train/data-00000-of-00002', 100),
    _report('/ex/Split-train/data-00001-of-00002', 51, truncated=34),
    _report('/ex/Split-eval/data-00000-of-00001', 60),
  ]
  own = damage.totals(reports)  # no recorded counts: the scan's own estimate
  assert own['missing'] == 0 and own['lost_fraction'] == 1 / 212
  found = damage.totals(reports, {'train': 341, 'eval': 60, 'infer': 9})  # infer: not read here
  assert found['read'] == {'train': 151, 'eval': 60}
  assert found['recorded'] == {'train': 341, 'eval': 60}
  assert found['missing'] == 190 and found['lost_fraction'] == 190 / 401
  assert damage.said(found) == (
    '190 of 401 recorded records missing, 0 corrupt, 34 truncated bytes in 1 of 3 shards'
  )


def test_more_records_than_recorded_lose_nothing():
  found = damage.totals([_report('/ex/Split-train/a', 12)], {'train': 10})
  assert found['missing'] == 0 and found['lost_fraction'] == 0
  assert damage.split_of('/ex/Split-train/a') == 'train' and damage.split_of('/data/a') == ''
