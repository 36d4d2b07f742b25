"""contracts/evaluation: the regression figures as people read them, and which figure two runs'
slices are compared by."""

from contracts import evaluation as names
from contracts.trainer_options import CLASSIFICATION, REGRESSION


def test_a_figure_has_four_significant_digits_and_is_whole_from_a_thousand():
  assert [names.figure_text(v) for v in (46360.4, 6720.0, 0.97654, 12.345)] == [
    '46,360',
    '6,720',
    '0.9765',
    '12.35',
  ]


def test_the_improvement_is_tfmas_else_from_both_maes_else_none():
  assert names.improvement({names.IMPROVEMENT_KEY: 0.8, names.MAE_KEY: 1.0}) == 0.8
  assert names.improvement({names.MAE_KEY: 1.0, names.BASELINE_MAE_KEY: 4.0}) == 0.75
  assert names.improvement({names.MAE_KEY: 1.0, names.BASELINE_MAE_KEY: 0.0}) is None
  assert names.improvement({}) is None


def test_slices_of_two_regression_runs_are_compared_by_mae_else_by_accuracy():
  assert names.slice_figure({'task': {'a': REGRESSION, 'b': REGRESSION}}) == names.MAE_KEY
  assert names.slice_figure({'task': {'a': REGRESSION, 'b': CLASSIFICATION}}) == 'accuracy'
