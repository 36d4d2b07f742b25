"""The blessing reason the summary and the report show, for the project's own rules (every class
predicted, a model already serving; TFMA's reasons are checked on real runs in
tests/e2e/test_blessing.py)."""

from contracts import evaluation
from metadata import blessing_reasons


def test_a_blessed_model_says_which_missed_classes_were_allowed_or_too_few_to_judge():
  found = {evaluation.CANDIDATE: 0.952}
  assert blessing_reasons.blessing_reason(None, True, found) == (
    'accuracy 0.952, every class predicted; no serving model to compare with'
  )
  missed = {
    '7': {'examples': 6, 'judged': True},
    '9': {'examples': 1, 'judged': False},
  }
  assert blessing_reasons.blessing_reason(
    None, True, found, missed=missed, candidate_is_serving=True
  ) == (
    'accuracy 0.952, class 7 never predicted (6 eval examples), allowed, class 9 never predicted '
    '(1 eval example), too few to judge; it is the serving model (not compared with itself)'
  )


def test_a_blessing_names_the_classes_no_eval_example_held():
  found = {evaluation.CANDIDATE: 0.9}
  said = blessing_reasons.blessing_reason(None, True, found, unevaluated=['rare'])
  assert said == (
    'accuracy 0.900, every evaluated class predicted; class rare had no eval example; '
    'no serving model to compare with'
  )
  missed = {'7': {'examples': 1, 'judged': False}}
  said = blessing_reasons.blessing_reason(None, True, found, missed=missed, unevaluated=['2', '3'])
  assert said.endswith(
    'too few to judge; classes 2, 3 had no eval example; no serving model to compare with'
  )


def test_a_serving_model_not_compared_is_named_with_why():
  found = {evaluation.CANDIDATE: 0.9}
  why = 'trained on other columns: it reads y, not in this data'
  assert blessing_reasons.blessing_reason(None, True, found, not_compared=why) == (
    f'accuracy 0.900, every class predicted; serving model not compared: {why}'
  )


def test_a_serving_model_with_other_classes_is_said_not_compared():
  found = {evaluation.CANDIDATE: 0.9}
  said = blessing_reasons.blessing_reason(
    None, True, found, ['cat', 'dog'], serving_classes=['bird', 'cat', 'dog']
  )
  assert said == (
    'accuracy 0.900, every class predicted; not compared with the serving model, whose classes '
    'differ (only it has bird): judged on its own thresholds'
  )
  added = blessing_reasons.classes_differ(['cat', 'dog'], ['cat', 'dog', 'emu'])
  assert '(only this model has emu)' in added
  both = blessing_reasons.classes_differ(list('abcdefg'), ['b', 'z'])
  assert '(only it has a, c, d, e, f …; only this model has z)' in both
  assert '(the same classes in another order)' in blessing_reasons.classes_differ(
    ['b', 'a'], ['a', 'b']
  )


def test_a_blessed_regression_model_says_its_errors_against_the_median_and_the_serving_model():
  figures = {
    evaluation.MAE_KEY: 1.234,
    evaluation.RMSE_KEY: 2.1,
    evaluation.BASELINE_MAE_KEY: 7.06,
    evaluation.IMPROVEMENT_KEY: 1 - 1.234 / 7.06,
  }
  said = blessing_reasons.regression_reason(None, True, figures, {evaluation.RMSE_KEY: 2.05})
  assert said == "MAE 1.234, 83% below the median predictor's 7.06; RMSE 2.1, serving model 2.05"
  assert blessing_reasons.regression_reason(None, True, figures, {}).endswith(
    '; RMSE 2.1; no serving model to compare with'
  )
  other_task = blessing_reasons.task_differs('classification')
  assert blessing_reasons.regression_reason(
    None, True, figures, {}, not_compared=other_task
  ).endswith(
    '; RMSE 2.1; serving model not compared: it predicts classes, this model a number '
    '(judged on its own thresholds)'
  )
  assert blessing_reasons.regression_reason(
    None, True, figures, {}, candidate_is_serving=True
  ).endswith('it is the serving model (not compared with itself)')


def test_a_model_not_blessed_on_too_few_eval_examples_says_the_figure_and_the_flag():
  small = blessing_reasons.eval_size_text({'examples': 5, 'min_examples': 30})
  assert small == (
    'only 5 eval examples, at least 30 needed to judge a model (--min-eval-examples); a larger '
    '--eval-percent gives more'
  )
  found = {evaluation.CANDIDATE: 1.0}
  assert (
    blessing_reasons.blessing_reason(None, False, found, too_small=small)
    == f'accuracy 1.000, {small}'
  )
  classes = {
    'examples': 46,
    'min_examples': 30,
    'classes': [{'class_id': 1, 'examples': 4}, {'class_id': 2, 'examples': 0}],
    'min_class_examples': 5,
  }
  assert blessing_reasons.eval_size_text(classes, ['cat', 'dog', 'emu']) == (
    'classes dog, emu have 4, 0 eval examples, at least 5 of each needed '
    '(--min-eval-class-examples); a larger --eval-percent gives more'
  )
  one = dict(classes, classes=[{'class_id': 1, 'examples': 1}])
  assert blessing_reasons.eval_size_text(one).startswith(
    'class 1 has 1 eval example, at least 5 of each'
  )
  both = blessing_reasons.eval_size_text(dict(one, examples=12))
  assert both.startswith('only 12 eval examples, ') and '; class 1 has 1 eval example, ' in both
  figures = {evaluation.MAE_KEY: 0.5, evaluation.RMSE_KEY: 0.7}
  assert blessing_reasons.regression_reason(None, False, figures, {}, too_small=small) == (
    f'MAE 0.5, RMSE 0.7: {small}'
  )
