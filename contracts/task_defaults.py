"""The options a run's task decides when the user leaves them at their default: what `run` and
`compile` set (cli/config_builder.py) and what `compare` tells apart from a user's change."""

from contracts.trainer_options import CLASSIFICATION, REGRESSION

# --duplicates (components/duplicates.py's modes): content filed under two labels is a conflict
# for classes; for numbers, rows of the same features and other values are the label's spread,
# kept together in one split.
GROUP, KEEP_CONFLICTS = 'group', 'keep-conflicts'
# {option, as ML Metadata records it: {task: the value that task gives it by default}}
CHOSEN = {'duplicates': {CLASSIFICATION: GROUP, REGRESSION: KEEP_CONFLICTS}}
WHY = {'duplicates': "the task's default"}  # said beside such a difference


def duplicates(task: str, asked: str) -> str:
  """The duplicates rule a run uses: the default, GROUP, is KEEP_CONFLICTS for a regression."""
  return CHOSEN['duplicates'][REGRESSION] if task == REGRESSION and asked == GROUP else asked


def chosen_by_task(name: str, a, b, task_a, task_b) -> bool:
  """Whether an option that differs between two runs (values a, b) is what each run's task gave
  it: a change nobody set."""
  by_task = CHOSEN.get(name) or {}
  return task_a != task_b and by_task.get(task_a, object()) == a and by_task.get(task_b) == b
