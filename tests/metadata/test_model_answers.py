"""metadata/model_answers.py: a model's answers and the labels they are scored against, for the
project's models (tests/support/regression_model) and a module file's (tests/support/module_model),
in batches."""

import numpy as np
import pytest

from metadata import model_answers
from tests.support import module_model, regression_model


@pytest.fixture(scope='module')
def models(tmp_path_factory):
  folder = tmp_path_factory.mktemp('models')
  return {
    'project': regression_model.save(str(folder / 'project')),
    'classifier': module_model.classifier(str(folder / 'classifier')),
    'regressor': module_model.regressor(str(folder / 'regressor')),
    'raw': module_model.raw_regressor(str(folder / 'raw')),
  }


def test_the_project_s_regression_model_is_read_by_its_signatures(models):
  rows = [regression_model.record(float(f), 'Cash', 3.0 * f) for f in range(5)]
  predicted, actual = model_answers.scored(models['project'], rows, True, regression_model.LABEL)
  assert predicted.tolist() == [regression_model.expected(f, 'Cash') for f in range(5)]
  assert actual.tolist() == [3.0 * f for f in range(5)]


def test_a_module_file_s_sigmoid_is_class_1_above_a_half_against_its_transformed_label(
  models, monkeypatch
):
  monkeypatch.setattr(model_answers, 'BATCH_SIZE', 4)  # 10 rows: three batches
  xs = [-2.0, -1.0, -0.1, 0.1, 1.0, 2.0, -3.0, 3.0, 0.5, -0.5]
  rows = [module_model.record(x, tips=float(i % 2)) for i, x in enumerate(xs)]
  predicted, actual = model_answers.scored(models['classifier'], rows, False, 'tips')
  assert predicted.tolist() == [float(x > 0) for x in xs]
  assert actual.tolist() == [float(i % 2) for i in range(10)]  # tips_xf: tips > 0


def test_a_module_file_s_number_against_its_transformed_or_raw_label(models):
  rows = [module_model.record(float(x), fare=4.0 * x) for x in range(6)]
  for name in ('regressor', 'raw'):  # transform_features' fare_xf; the raw fare without it
    predicted, actual = model_answers.scored(models[name], rows, True, 'fare')
    assert predicted.tolist() == [2.0 * x for x in range(6)], name
    assert actual.tolist() == [4.0 * x for x in range(6)], name


def test_what_cannot_be_scored_is_none(models):
  rows = [module_model.record(1.0, fare=2.0)]
  assert model_answers.scored(models['regressor'], rows, True, 'tips') is None  # no tips_xf
  text = regression_model.record(1.0, 'Cash')  # no label at all: NaN, a text label: None
  assert np.isnan(model_answers.raw_labels([text], 'tips')[0])
  assert model_answers.raw_labels([regression_model.record(1.0, 'Cash')], 'payment_type') is None
  assert model_answers.load(models['project'], regression=False) is None  # no CLASS_IDS


def test_a_record_the_model_cannot_read_is_nan_and_the_others_are_answered(models):
  """A served row without a value the module model's parsing requires (its batch fails): read
  one by one, that row NaN."""
  import tensorflow as tf

  missing = tf.train.Example()
  missing.features.feature['tips'].float_list.value.append(1.0)  # no x
  rows = [module_model.record(1.0, tips=1.0), missing.SerializeToString()]
  rows.append(module_model.record(-1.0, tips=0.0))
  predicted, actual = model_answers.scored(models['classifier'], rows, False, 'tips')
  assert predicted[[0, 2]].tolist() == [1.0, 0.0] and np.isnan(predicted[1])
  assert actual[[0, 2]].tolist() == [1.0, 0.0] and np.isnan(actual[1])


@pytest.mark.parametrize('logits', [False, True])
def test_a_one_wide_logit_is_class_1_above_0_as_the_evaluator_reads_it(tmp_path, logits):
  """x = 0.1 gives a logit of 0.3 (class 1: its sigmoid is 0.57); read as a probability, the
  logit model would call it class 0."""
  import tensorflow as tf

  from tests.support import keras_module_models

  path = keras_module_models.save(str(tmp_path / 'model'), logits=logits)
  xs = [-0.5, -0.1, 0.1, 0.5]
  rows = [
    tf.train.Example(
      features=tf.train.Features(
        feature={
          'x': tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
          'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[int(x > 0)])),
        }
      )
    ).SerializeToString()
    for x in xs
  ]
  predicted, actual = model_answers.scored(path, rows, False, keras_module_models.LABEL)
  assert predicted.tolist() == actual.tolist() == [0.0, 0.0, 1.0, 1.0]
