"""metadata/runs.py: the exit code a run gave, the model versions joined with the runs and
rollbacks that pushed them, the kept report's name (the gathering itself: tests/e2e/test_runs.py)."""

import types

from metadata import runs
from tests.support import run_history


def _built(blessed=None, serves=None):
  return types.SimpleNamespace(
    blessed=blessed, serving_check={'serves': serves} if serves is not None else None
  )


def test_the_exit_code_is_derived_as_run_gives_it():
  assert runs.exit_code({'Trainer': 'COMPLETE'}, _built(True, True)) == 0
  assert runs.exit_code({'Trainer': 'COMPLETE'}, _built(False)) == 3
  assert runs.exit_code({'Trainer': 'COMPLETE'}, _built(True, False)) == 4
  assert runs.exit_code({'Trainer': 'FAILED'}, _built()) == 1
  assert runs.exit_code({'Trainer': 'CANCELED', 'Evaluator': 'FAILED'}, _built()) == 130


def test_versions_name_the_run_or_rollback_that_pushed_them_and_the_serving_one():
  first, refused, third = (
    run_history.run(1),
    run_history.run(2, **run_history.REFUSED),
    run_history.run(3),
  )
  rollback = {
    'when': '2026-12-07 18:04:00',
    'from_version': '1001',
    'version': '1004',
    'path': '/out/serving/1004',
    'reason': 'bad',
    'model_id': 10,
    'copy_id': 99,
  }
  versions = runs.model_versions([first, refused, third], [rollback], ['1001', '1003', '1004'])
  assert [v['version'] for v in versions] == ['1001', '1003', '1004']
  assert [v['serving'] for v in versions] == [False, False, True]
  assert versions[0]['run_id'] == first['run_id'] and versions[1]['run_id'] == third['run_id']
  assert versions[2]['rollback'] == rollback and versions[2]['model_id'] == first['model_id']
  assert versions[2]['accuracy'] == first['accuracy'] and versions[2]['run_id'] is None


def test_a_version_folder_no_run_pushed_is_listed_as_unknown_and_a_removed_one_as_gone():
  versions = runs.model_versions([run_history.run(1)], [], ['7'])
  assert [(v['version'], v['present'], v['serving']) for v in versions] == [
    ('7', True, True),
    ('1001', False, False),
  ]
  unknown = next(v for v in versions if v['version'] == '7')
  assert unknown['run_id'] is None and unknown.get('model_id') is None


def test_serving_versions_are_the_numbered_folders_in_number_order(tmp_path):
  for name in ('9', '10', 'notes', '.partial-x'):
    (tmp_path / name).mkdir()
  assert runs.serving_versions(str(tmp_path)) == ['9', '10']
  assert runs.serving_versions(str(tmp_path / 'none')) == []


def test_a_kept_report_is_named_by_its_run_id_without_colons():
  assert runs.report_file('2026-12-07T18:18:28.831968') == (
    'reports/2026-12-07T18-18-28.831968.html'
  )
