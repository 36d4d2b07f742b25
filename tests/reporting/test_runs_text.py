"""reporting/runs_text.py: `runs` and `models` lines from hand-made facts."""

from reporting import runs_text
from tests.support import run_history


def _three():
  return (
    run_history.run(1),
    run_history.run(2, **run_history.REFUSED),
    run_history.run(3, task='regression', model='mlp', accuracy=None, mae=1.25),
  )


def test_runs_are_two_lines_each_newest_first_with_figure_outcome_and_exit_code():
  lines = runs_text.render_runs(run_history.history(*_three()))
  assert lines[0] == '3 run(s) in /out, newest first:'
  third, refused, first = lines[1], lines[3], lines[5]
  assert third.startswith('2026-12-07T18:03:00.000000  23 s  /data/digits (300 rows)')
  assert 'regression mlp  MAE 1.25  pushed 1003 (serving)  exit 0' in third
  assert 'accuracy 0.9200  refused: accuracy 0.5 below 0.9  exit 3' in refused
  assert 'pushed 1001  exit 0' in first and '(serving)' not in first
  assert lines[2] == '    executed 1 of 2: Trainer (options changed (train_steps 1 → 2))'


def test_a_rollback_is_listed_where_it_happened():
  first, second = run_history.run(1), run_history.run(3)
  rollback = {
    'when': '2026-12-07 18:02:00',
    'from_version': '1001',
    'version': '1002',
    'path': '/out/serving/1002',
    'reason': 'bad answers',
    'model_id': 10,
    'copy_id': 99,
  }
  lines = runs_text.render_runs(run_history.history(first, second, rollbacks=[rollback]))
  assert lines[3] == (
    '2026-12-07 18:02:00  rollback: version 1001 serving again as 1002 (model #10); '
    'reason: bad answers'
  )
  assert lines[4].startswith(first['run_id'])


def test_models_say_who_pushed_each_version_and_which_serves():
  lines = runs_text.render_models(run_history.history(*_three()))
  assert len(lines) == 2
  assert lines[0].startswith('1001           pushed 2026-12-07 18:01:00 by run 2026-12-07T18:01')
  assert lines[1].startswith('1003  SERVING')
  assert 'model #30 (regression mlp) trained on /data/digits (300 rows); MAE 1.25' in lines[1]


def test_an_output_without_runs_or_versions_says_so():
  empty = run_history.history()
  assert runs_text.render_runs(empty) == ['no pipeline run in this output folder']
  assert runs_text.render_models(empty) == ['no model version under serving/ (no run pushed one)']
