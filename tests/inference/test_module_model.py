"""inference/module_model.py: what a module file's model parses and returns, read from the model;
CSV rows as its tf.Examples. On small hand-made models and on TFX's taxi model
(tests/support/taxi_module_run.py)."""

import glob
import os

import pytest

from contracts import serving
from inference import inputs, model, module_model


def _save(path: str, activation: str, width: int) -> str:
  """A SavedModel as a module file's run_fn saves one: serving_default parses tf.Examples."""
  import tensorflow as tf

  spec = {
    'x': tf.io.FixedLenFeature([], tf.float32),
    'n': tf.io.FixedLenFeature([], tf.int64, default_value=0),
    'city': tf.io.VarLenFeature(tf.string),
  }

  class Model(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name='examples')])
    def serve(self, examples):
      parsed = tf.io.parse_example(examples, spec)
      x = parsed['x'] + tf.cast(parsed['n'], tf.float32)
      x = tf.stack([x * (i + 1) for i in range(width)], axis=1)
      last = {'sigmoid': tf.sigmoid, 'softmax': tf.nn.softmax, 'logits': lambda v: v + 0.5}
      out = last.get(activation, tf.identity)(x)
      return {'outputs': out}

  m = Model()
  tf.saved_model.save(m, path, signatures={serving.SERVING_DEFAULT: m.serve})
  return path


def _signature(path):
  import tensorflow as tf

  loaded = tf.saved_model.load(path)
  return path, dict(loaded.signatures), loaded


@pytest.mark.parametrize(
  'activation, width, meaning',
  [
    ('sigmoid', 1, module_model.SIGMOID),
    ('softmax', 3, module_model.SOFTMAX),
    ('', 1, module_model.NUMBER),
    ('sigmoid', 2, module_model.NUMBER),  # two sigmoids are not one class's probability
    ('logits', 3, module_model.SCORES),  # a Dense layer without activation: TFX's penguin model
  ],
)
def test_the_output_means_what_its_shape_and_last_op_say(tmp_path, activation, width, meaning):
  path, signatures, _ = _signature(_save(str(tmp_path / 'm'), activation, width))
  assert module_model.is_module_model(path, signatures)
  parsed = module_model.parse(signatures[serving.SERVING_DEFAULT])
  assert parsed.meaning == meaning
  assert parsed.kinds == {'city': 'string', 'x': 'float', 'n': 'int'}
  assert parsed.required == ['x']  # n has a default, city is sparse


def test_rows_are_encoded_with_the_types_the_model_parses(tmp_path):
  import tensorflow as tf

  kinds = {'x': 'float', 'n': 'int', 'city': 'string'}
  record, reason = module_model.encode({'x': 1.5, 'n': '7', 'city': 'Köln'}, kinds, ['x'])
  assert reason == ''
  example = tf.train.Example.FromString(record)
  assert example.features.feature['x'].float_list.value == [1.5]
  assert example.features.feature['n'].int64_list.value == [7]
  assert example.features.feature['city'].bytes_list.value == ['Köln'.encode()]
  record, _ = module_model.encode({'x': 1.0, 'n': '', 'city': ''}, kinds, ['x'])
  assert set(tf.train.Example.FromString(record).features.feature) == {'x'}  # empty: absent
  assert module_model.encode({'x': float('nan')}, kinds, ['x']) == (
    None,
    'column x: empty (the model requires it)',
  )
  assert module_model.encode({'x': 1.0, 'n': '2.5'}, kinds, ['x'])[1] == (
    'column n: 2.5 is not a whole number'
  )


def test_the_projects_own_models_are_not_module_models(tmp_path):
  import tensorflow as tf

  class Project(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name='examples')])
    def serve(self, examples):
      return {serving.PROBABILITIES: tf.ones([tf.shape(examples)[0], 2])}

  m = Project()
  path = str(tmp_path / 'p')
  tf.saved_model.save(m, path, signatures={serving.SERVING_DEFAULT: m.serve})
  assert not module_model.is_module_model(*_signature(path)[:2])


def test_a_number_model_predicts_a_number_per_row(tmp_path):
  import numpy as np

  path = _save(str(tmp_path / 'm'), '', 1)
  _, served = model.load(path, inputs.CSV)
  assert served.regression and served.module is not None
  found = module_model.standard_outputs(served.module, {'outputs': np.array([[2.0], [3.0]])})
  assert found[serving.PREDICTION].tolist() == [2.0, 3.0]


def test_class_scores_are_predicted_as_probabilities(tmp_path):
  """Logits (TFX's penguin Keras model) by their softmax; probabilities (its TF-DF model) kept."""
  import numpy as np

  path = _save(str(tmp_path / 'm'), 'logits', 3)
  _, served = model.load(path, inputs.CSV)
  assert not served.regression
  logits = np.array([[2.0, 7.0, -1.0], [0.0, 0.0, 3.0]])
  found = module_model.standard_outputs(served.module, {'outputs': logits})
  probabilities = found[serving.PROBABILITIES]
  assert np.allclose(probabilities.sum(axis=1), 1.0)
  assert probabilities.argmax(axis=1).tolist() == [1, 2]
  assert np.allclose(probabilities[1], np.exp([0, 0, 3]) / np.exp([0, 0, 3]).sum())
  already = np.array([[0.9, 0.05, 0.05], [0.2, 0.3, 0.5]])
  found = module_model.standard_outputs(served.module, {'outputs': already})
  assert np.array_equal(found[serving.PROBABILITIES], already)


def test_a_csv_layout_needs_the_required_columns_only(tmp_path):
  data = tmp_path / 'rows.csv'
  data.write_text('x,note\n1.5,hello\n')
  kinds = {'x': 'float', 'n': 'int', 'city': 'string'}
  layout = inputs.module_csv_layout(str(data), kinds, ['x'])
  assert layout.columns == {'x': 'x'}
  data.write_text('n,note\n1,hello\n')
  with pytest.raises(inputs.Problem, match=r'columns the model requires: x \(the CSV has: n, note'):
    inputs.module_csv_layout(str(data), kinds, ['x'])


@pytest.mark.slow  # TFX's taxi pipeline runs once (tests/conftest.py)
def test_taxi_models_features_are_its_raw_columns_without_the_label(taxi_module_run):
  path = glob.glob(os.path.join(taxi_module_run.serving, '*'))[0]
  _, served = model.load(path, inputs.CSV)
  parsed = served.module
  assert parsed.meaning == module_model.SIGMOID and not served.regression
  assert 'tips' not in parsed.kinds
  assert parsed.kinds['fare'] == 'float' and parsed.kinds['trip_start_hour'] == 'int'
  assert parsed.kinds['payment_type'] == 'string'
  assert 'fare' in parsed.required and 'pickup_latitude' not in parsed.required


@pytest.mark.parametrize('logits', [False, True])
def test_a_logit_is_written_as_its_sigmoid_never_as_a_probability(tmp_path, logits):
  """A Keras Dense(1) of a from_logits model, its label an integer: class 1's probability is
  the logit's sigmoid (keras_module_models: x = 0.1 is a logit of 0.3)."""
  import numpy as np

  from tests.support import keras_module_models

  path = keras_module_models.save(str(tmp_path / 'm'), logits)
  _, served = model.load(path, inputs.CSV)
  assert served.module.meaning == (module_model.LOGIT if logits else module_model.SIGMOID)
  assert not served.regression
  answer = np.array([[0.3]]) if logits else np.array([[1 / (1 + np.exp(-0.3))]])
  found = module_model.standard_outputs(served.module, {'outputs': answer})
  assert found[serving.PROBABILITIES][0, 1] == pytest.approx(1 / (1 + np.exp(-0.3)))


def test_a_linear_output_without_an_integer_label_is_a_number(tmp_path):
  path, signatures, _ = _signature(_save(str(tmp_path / 'm'), '', 1))
  assert not module_model.integer_label(signatures)
  assert module_model.parse(signatures[serving.SERVING_DEFAULT], signatures).meaning == (
    module_model.NUMBER
  )
