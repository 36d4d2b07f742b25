"""`bench.transform_cache`: the edit it makes applies to the wheel's taxi module file and adds one
feature there; its report prints both contenders and the ratio (no speed test, nothing run)."""

from bench import transform_cache
from tests.support.tfx_data import TAXI_MODULE


def test_each_edit_adds_one_feature_to_the_wheels_taxi_module():
  with open(TAXI_MODULE) as f:
    text = f.read()
  for before, after in transform_cache.EDITS.values():
    assert text.count(before) == 1 and after != before
  assert transform_cache.EDITED.endswith("'trip_seconds', 'trip_start_timestamp']")
  compile(text.replace(*transform_cache.EDITS['no_analyzer']), 'edited', 'exec')


def test_the_report_names_both_contenders_and_the_ratio(capsys):
  run = {'seconds': 10.0, 'from_cache': 9, 'computed': 1}
  transform_cache.report(
    {
      'rows': 15002,
      'edits': {
        'analyzer': {
          'runs': {'with': [run], 'without': [dict(run, seconds=20.0, from_cache=0, computed=10)]},
          'ratio': 0.5,
          'ratio_spread': [0.5, 0.5],
        }
      },
    }
  )
  printed = capsys.readouterr().out
  assert 'edit: analyzer' in printed
  assert 'without  cache: 20.0 s; analyzers from the cache 0, computed 10' in printed
  assert 'with     cache: 10.0 s; analyzers from the cache 9, computed 1' in printed
  assert 'with / without: 0.50' in printed
