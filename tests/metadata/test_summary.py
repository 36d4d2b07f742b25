"""The summary's blessing reason for the project's own rules (every class predicted, a model
already serving; TFMA's reasons are checked on real runs in tests/e2e/test_blessing.py)."""

from contracts import evaluation
from metadata import summary


def test_a_blessed_model_says_which_missed_classes_were_allowed_or_too_few_to_judge():
  found = {evaluation.CANDIDATE: 0.952}
  assert summary.blessing_reason(None, True, found) == (
    'accuracy 0.952, every class predicted; no serving model to compare with'
  )
  missed = {
    '7': {'examples': 6, 'judged': True},
    '9': {'examples': 1, 'judged': False},
  }
  assert summary.blessing_reason(None, True, found, missed=missed, candidate_is_serving=True) == (
    'accuracy 0.952, class 7 never predicted (6 eval examples), allowed, class 9 never predicted '
    '(1 eval example), too few to judge; it is the serving model (not compared with itself)'
  )


def test_a_blessing_names_the_classes_no_eval_example_held():
  found = {evaluation.CANDIDATE: 0.9}
  said = summary.blessing_reason(None, True, found, unevaluated=['rare'])
  assert said == (
    'accuracy 0.900, every evaluated class predicted; class rare had no eval example; '
    'no serving model to compare with'
  )
  missed = {'7': {'examples': 1, 'judged': False}}
  said = summary.blessing_reason(None, True, found, missed=missed, unevaluated=['2', '3'])
  assert said.endswith(
    'too few to judge; classes 2, 3 had no eval example; no serving model to compare with'
  )


def test_a_serving_model_not_compared_is_named_with_why():
  found = {evaluation.CANDIDATE: 0.9}
  why = 'trained on other columns: it reads y, not in this data'
  assert summary.blessing_reason(None, True, found, not_compared=why) == (
    f'accuracy 0.900, every class predicted; serving model not compared: {why}'
  )


def test_a_serving_model_with_other_classes_is_said_not_compared():
  found = {evaluation.CANDIDATE: 0.9}
  said = summary.blessing_reason(
    None, True, found, ['cat', 'dog'], serving_classes=['bird', 'cat', 'dog']
  )
  assert said == (
    'accuracy 0.900, every class predicted; not compared with the serving model, whose classes '
    'differ (only it has bird): judged on its own thresholds'
  )
  added = summary.classes_differ(['cat', 'dog'], ['cat', 'dog', 'emu'])
  assert '(only this model has emu)' in added
  both = summary.classes_differ(list('abcdefg'), ['b', 'z'])
  assert '(only it has a, c, d, e, f …; only this model has z)' in both
  assert '(the same classes in another order)' in summary.classes_differ(['b', 'a'], ['a', 'b'])


FIGURES = {
  evaluation.MAE_KEY: 1.13,
  evaluation.RMSE_KEY: 2.4,
  evaluation.R2_KEY: 0.88,
  evaluation.BASELINE_MAE_KEY: 7.06,
}


def test_a_blessed_regression_model_is_said_against_the_mean_predictor_and_the_serving_model():
  assert summary.regression_reason(None, True, FIGURES, {}) == (
    "MAE 1.13 (84% lower than the mean predictor's 7.06), RMSE 2.4, R² 0.88; "
    'no serving model to compare with'
  )
  said = summary.regression_reason(None, True, FIGURES, {evaluation.RMSE_KEY: 2.5})
  assert said.endswith('R² 0.88; serving model RMSE 2.5')
  said = summary.regression_reason(None, True, FIGURES, {}, candidate_is_serving=True)
  assert said.endswith('; it is the serving model (not compared with itself)')
  assert summary.regression_reason(None, True, {}, {}) == ''


def test_a_regression_model_not_blessed_names_each_threshold_it_failed(tmp_path):
  from tests.support import evaluations

  worse = dict(FIGURES, **{evaluation.BASELINE_MAE_KEY: 1.0})
  folder = evaluations.write_validation(
    str(tmp_path),
    [
      f'metric_key {{ name: "{evaluation.RMSE_KEY}" is_diff: true }} '
      'metric_threshold { change_threshold { relative { value: 0.1 } } } '
      'metric_value { double_value { value: 0.4 } }',
      f'metric_key {{ name: "{evaluation.MAE_KEY}" }} '
      'metric_threshold { value_threshold { upper_bound { value: 1 } } } '
      'metric_value { double_value { value: 1.13 } }',
      f'metric_key {{ name: "{evaluation.IMPROVEMENT_KEY}" }} '
      'metric_threshold { value_threshold { lower_bound { value: 0.1 } } } '
      'metric_value { double_value { value: -0.13 } }',
    ],
  )
  from ml_metadata.proto import metadata_store_pb2

  said = summary.regression_reason(
    metadata_store_pb2.Artifact(uri=folder), False, worse, {evaluation.RMSE_KEY: 2.0}
  )
  assert said == (
    "MAE 1.13 (13% higher than the mean predictor's 1), RMSE 2.4, R² 0.88; RMSE 2.4, serving "
    'model 2: more than 10% above the serving model; MAE 1.13: above the 1 allowed; MAE 13% '
    "higher than the mean predictor's: 10% lower needed (--min-improvement)"
  )
  said = summary.regression_reason(None, True, FIGURES, {}, not_compared='it is a classifier')
  assert said.endswith('R² 0.88; serving model not compared: it is a classifier')
