"""last_run.json read back into a RunResult and written again is the same JSON: keys absent stay
absent, the facts that are null when reached stay null."""

import pytest

from metadata.run_result import Evaluation, Push, RunResult

_BUILT = {
  'wall_seconds': 12.3,
  'components': {'Trainer': 'COMPLETE'},
  'executed': ['Trainer'],
  'cached': [],
}


@pytest.mark.parametrize(
  'found',
  [
    _BUILT,
    dict(_BUILT, error='interrupted', interrupted=True, not_started=True, log='/o/run.log'),
    dict(
      _BUILT,
      eval_accuracy=None,
      serving_accuracy=None,
      class_recall={'0': 0.5, '1': None},
      blessed=False,
      blessing='',
      pushed_to=None,
      report=None,
      why_executed={},
      anomalies=[],
      excluded_files=0,
      turned_upright=0,
      unusable_data=False,
      anomalies_stop=True,
      error='failed',
    ),
    dict(_BUILT, pushed_to=None, already_serving='/o/serving/17', report='/o/report.html'),
    dict(  # a regression model's figures, the serving model's beside them
      _BUILT,
      eval_accuracy=None,
      serving_accuracy=None,
      class_recall={},
      regression={'mean_absolute_error': 1.5, 'r_squared': 0.8},
      serving_regression={'mean_absolute_error': 1.7},
    ),
  ],
)
def test_the_json_goes_round_unchanged(found):
  assert RunResult.from_json(found).to_json() == found


def test_facts_null_when_reached_are_kept_apart_from_facts_not_reached():
  reached = RunResult.from_json(dict(_BUILT, eval_accuracy=None, class_recall={}, pushed_to=None))
  assert reached.evaluation == Evaluation() and reached.push == Push()
  assert reached.eval_accuracy is None and reached.pushed_to is None
  not_reached = RunResult.from_json(_BUILT)
  assert not_reached.evaluation is None and not_reached.push is None and not_reached.report is None
