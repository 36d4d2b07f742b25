"""contracts/task_defaults.py: the options a run's task decides, and telling them from a user's."""

from contracts import task_defaults


def test_a_regression_keeps_conflicts_unless_the_user_chose_another_rule():
  assert task_defaults.duplicates('regression', 'group') == 'keep-conflicts'
  assert task_defaults.duplicates('regression', 'off') == 'off'
  assert task_defaults.duplicates('classification', 'group') == 'group'


def test_a_difference_is_the_tasks_only_where_each_value_is_its_tasks_default():
  chosen = task_defaults.chosen_by_task
  assert chosen('duplicates', 'group', 'keep-conflicts', 'classification', 'regression')
  assert chosen('duplicates', 'keep-conflicts', 'group', 'regression', 'classification')
  assert not chosen('duplicates', 'group', 'keep-conflicts', 'classification', 'classification')
  assert not chosen('duplicates', 'off', 'keep-conflicts', 'classification', 'regression')
  assert not chosen('train_steps', 1, 2, 'classification', 'regression')
