"""monitoring/performance.py: the serving model's error on served rows that carry the label,
judged against its eval figures (numbers made here, and tests/support/regression_model's
SavedModel: prediction = 2 * fare + len(payment_type))."""

import numpy as np
import pytest

from contracts import evaluation as names
from monitoring import performance
from tests.support import regression_model

LIMITS = dict(max_accuracy_drop=0.01, max_error_increase=0.1, min_rows=30)


def _regression(predicted, actual, eval_mae, **limits):
  figures = {names.MAE_KEY: eval_mae, names.RMSE_KEY: eval_mae * 1.2}
  return performance.judge(True, np.asarray(predicted), np.asarray(actual), figures, **limits)


def test_a_regression_window_as_good_as_eval_is_not_flagged():
  random = np.random.default_rng(0)
  actual = random.normal(100, 20, 400)
  entry = _regression(actual + random.normal(0, 5, 400), actual, 4.0, **LIMITS)
  assert entry['rows'] == 400 and not entry['flagged']
  assert 3.5 < entry['figures'][names.MAE_KEY] < 4.6
  assert entry['eval_figures'] == {names.MAE_KEY: 4.0, names.RMSE_KEY: 4.8}
  assert entry['why'].startswith('MAE 4.') and 'against 4 on the eval split' in entry['why']


def test_labels_doubled_flag_the_model_and_say_by_how_much():
  random = np.random.default_rng(1)
  actual = random.normal(100, 20, 400)
  predicted = actual + random.normal(0, 5, 400)
  entry = _regression(predicted, 2 * actual, 4.0, **LIMITS)  # the model now off by half
  assert entry['flagged'] and entry['figures'][names.MAE_KEY] > 90
  assert 'flagged above +10%' in entry['why'] and "beyond the window's noise" in entry['why']


def test_a_change_within_the_window_s_noise_or_too_few_rows_is_not_flagged():
  random = np.random.default_rng(2)
  actual = random.normal(100, 20, 12)
  entry = _regression(actual + random.normal(0, 50, 12), actual, 20.0, **LIMITS)
  assert entry['figures'][names.MAE_KEY] > 22 and not entry['flagged']
  assert 'fewer than 30 rows, not judged' in entry['why']
  # 400 rows whose MAE is 12 % above eval, but with errors so spread that it is noise
  errors = np.where(random.random(400) < 0.02, 500.0, 0.0)
  entry = _regression(errors + 1, np.ones(400), 10.0 / 1.12, **LIMITS)
  assert not entry['flagged'] and "beyond the window's noise" not in entry['why']


def test_a_classifier_is_flagged_on_an_accuracy_drop_beyond_the_noise():
  random = np.random.default_rng(3)
  actual = random.integers(0, 3, 500).astype(float)
  good = np.where(random.random(500) < 0.95, actual, (actual + 1) % 3)
  judged = dict(eval_figures={names.ACCURACY_KEY: 0.95}, **LIMITS)
  assert not performance.judge(False, good, actual, **judged)['flagged']
  bad = np.where(random.random(500) < 0.7, actual, (actual + 1) % 3)
  entry = performance.judge(False, bad, actual, **judged)
  assert entry['flagged'] and entry['figures'][names.ACCURACY_KEY] < 0.8
  unseen = actual.copy()
  unseen[:5] = -1  # labelled with a class the train split did not have
  entry = performance.judge(False, actual, unseen, **judged)
  assert '5 labelled with a class the model was not trained on' in entry['why']


def test_without_an_eval_figure_the_window_is_measured_not_judged():
  entry = performance.judge(False, np.zeros(50), np.zeros(50), {}, **LIMITS)
  assert entry['figures'] == {names.ACCURACY_KEY: 1.0} and not entry['flagged']
  assert entry['why'].endswith('no eval figure recorded for the model, not judged')


@pytest.fixture(scope='module')
def model_dir(tmp_path_factory):
  return regression_model.save(str(tmp_path_factory.mktemp('model') / 'serving'))


def test_the_saved_model_scores_only_the_rows_that_carry_the_label(model_dir):
  fares = np.random.default_rng(4).normal(50, 10, 200)
  rows = [regression_model.record(float(f), 'Cash', 2 * float(f) + 4) for f in fares]
  rows += [regression_model.record(10.0, 'Cash')] * 30  # no label: left out
  figures = {names.MAE_KEY: 0.5}
  entry = performance.measure(model_dir, rows, regression_model.LABEL, True, figures, **LIMITS)
  assert entry['rows'] == 200 and entry['figures'][names.MAE_KEY] < 1e-4
  assert not entry['flagged']
  doubled = [regression_model.record(float(f), 'Cash', 2 * (2 * float(f) + 4)) for f in fares]
  entry = performance.measure(model_dir, doubled, regression_model.LABEL, True, figures, **LIMITS)
  assert entry['flagged'] and entry['figures'][names.MAE_KEY] > 50
  unlabelled = rows[-30:]
  assert performance.measure(model_dir, unlabelled, 'tips', True, figures, **LIMITS) is None


def test_a_heavy_tailed_label_is_judged_within_its_fences_as_the_eval_figures_were(model_dir):
  """One served label of 1e6 (beyond the train labels' fences) must neither flag a good model
  nor hide a bad one behind its noise: it is left out and counted, as the Evaluator did."""
  fares = np.random.default_rng(5).normal(50, 10, 300)
  good = [regression_model.record(float(f), 'Cash', 2 * float(f) + 4) for f in fares]
  outlier = [regression_model.record(50.0, 'Cash', 1e6)]
  figures = {names.MAE_KEY: 0.5}
  fences = [-100.0, 400.0]
  measure = lambda rows: performance.measure(  # noqa: E731
    model_dir, rows, regression_model.LABEL, True, figures, **LIMITS, fences=fences
  )
  entry = measure(good + outlier)
  assert entry['rows'] == 300 and entry['beyond_fences'] == 1 and not entry['flagged']
  assert "1 labelled row(s) beyond the heavy tail's fences left out" in entry['why']
  doubled = [regression_model.record(float(f), 'Cash', 2 * (2 * float(f) + 4)) for f in fares]
  assert measure(doubled + outlier)['flagged']
  # without the fences the one outlier's spread hides the doubled labels in the window's noise
  hidden = performance.measure(
    model_dir, doubled + outlier, regression_model.LABEL, True, figures, **LIMITS
  )
  assert not hidden['flagged'] and "within the window's noise" in hidden['why']


def test_a_module_file_s_model_is_measured_as_the_evaluator_read_it(tmp_path):
  """TFX's taxi template: a one-wide sigmoid scored against transform_features' tips_xf (class
  1 above a half), a number against fare_xf; rows without the raw label left out."""
  import tensorflow as tf

  from tests.support import module_model

  xs = np.random.default_rng(6).normal(0, 1, 200)
  classifier = module_model.classifier(str(tmp_path / 'classifier'))
  right = [module_model.record(float(x), tips=float(x > 0) * 3.5) for x in xs]
  rows = right + [module_model.record(1.0)] * 20  # no tips: left out
  accuracy = {names.ACCURACY_KEY: 0.97}
  entry = performance.measure(classifier, rows, 'tips', False, accuracy, **LIMITS)
  assert entry['rows'] == 200 and entry['figures'][names.ACCURACY_KEY] == 1.0
  assert not entry['flagged']
  flipped = [module_model.record(float(x), tips=float(x <= 0)) for x in xs[:100]] + right[100:]
  entry = performance.measure(classifier, flipped, 'tips', False, accuracy, **LIMITS)
  assert entry['flagged'] and entry['figures'][names.ACCURACY_KEY] == 0.5
  no_x = tf.train.Example()  # a served row without x: the model cannot read it
  no_x.features.feature['tips'].float_list.value.append(1.0)
  no_x = no_x.SerializeToString()
  entry = performance.measure(classifier, right + [no_x], 'tips', False, accuracy, **LIMITS)
  assert entry['rows'] == 200 and entry['unread'] == 1
  assert '1 labelled row(s) the model cannot read' in entry['why']
  regressor = module_model.regressor(str(tmp_path / 'regressor'))
  doubled = [module_model.record(float(x), fare=4.0 * x) for x in xs]  # the model: 2x
  entry = performance.measure(regressor, doubled, 'fare', True, {names.MAE_KEY: 0.1}, **LIMITS)
  assert entry['flagged'] and entry['figures'][names.MAE_KEY] == pytest.approx(
    np.mean(np.abs(2 * xs)), rel=1e-5
  )
