"""trainer/models/gbt.py: YDF's trees called as the Keras models are, and saved with the same
signatures (trainer/signatures.py), answering as the model in process does."""

import dataclasses

import numpy as np
import tensorflow as tf

from contracts import serving
from tests.support import tabular_rows
from trainer import signatures, tabular_input, trees
from trainer.data_spec import TabularSpec
from trainer.models import gbt


def _trained(spec, table, loss=''):
  columns, labels = tabular_input.parse_tabular(
    tf.constant([tabular_rows.example(*row) for row in table]), spec
  )
  columns = {key: value.numpy() for key, value in columns.items()}
  trained = gbt.train(columns, labels.numpy(), spec, trees.hyperparameters(), seed=1, loss=loss)
  return trained, columns, labels.numpy()


def test_trees_give_every_class_a_probability_and_learn():
  spec = tabular_rows.SPEC
  trained, columns, labels = _trained(spec, tabular_rows.rows(600))
  model = gbt.TreesModel(trained, spec.num_classes)
  probabilities = model(columns, training=False).numpy()
  assert probabilities.shape == (600, 4)
  np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
  assert np.all(probabilities[:, 1] == 0)  # no train row of class 1
  assert np.mean(np.argmax(probabilities, axis=1) == labels) > 0.95
  # YDF's own answer, its columns in its class order
  own = trained.predict(columns)
  order = [int(name) for name in trained.label_classes()]
  np.testing.assert_allclose(probabilities[:, order], own, atol=1e-5)


def test_two_classes_from_ydf_one_probability():
  spec = dataclasses.replace(tabular_rows.SPEC, label_threshold=2.5, num_classes=2, label_values=[])
  trained, columns, labels = _trained(spec, tabular_rows.rows(400, seed=2))
  probabilities = gbt.TreesModel(trained, 2)(columns).numpy()
  assert trained.label_classes() == ['0', '1']
  np.testing.assert_allclose(probabilities[:, 1], trained.predict(columns), atol=1e-6)
  assert np.mean(np.argmax(probabilities, axis=1) == labels) > 0.95


def test_saved_trees_serve_what_the_model_answers_in_process(tmp_path):
  spec = tabular_rows.SPEC
  trained, columns, _ = _trained(spec, tabular_rows.rows(600))
  model = gbt.TreesModel(trained, spec.num_classes)
  served = signatures.tabular_signatures(model, spec)
  served[serving.BULK_INFERENCE] = signatures.bulk_inference(served[serving.SERVING_DEFAULT])
  signatures.attach_assets(model, spec.class_names, [], str(tmp_path))
  path = str(tmp_path / 'model')
  tf.saved_model.save(model, path, signatures=served)
  loaded = tf.saved_model.load(path)
  assert set(loaded.signatures) == {
    'serving_default',
    'predict_columns',
    'transform_features',
    'bulk_inference',
  }
  new = tabular_rows.rows(50, seed=7)
  examples = tf.constant([tabular_rows.example(x, color) for x, color, _ in new])
  expected = model(tabular_input.parse_tabular(examples, spec, with_label=False)).numpy()
  out = loaded.signatures['serving_default'](examples=examples)
  np.testing.assert_allclose(out['probabilities'].numpy(), expected, atol=1e-6)
  top = np.argmax(expected, axis=1)
  assert out['class_names'].numpy().tolist() == [spec.class_names[i].encode() for i in top]
  by_column = loaded.signatures['predict_columns'](
    x=tf.constant([x for x, _, _ in new], tf.float64),
    color=tf.constant([color for _, color, _ in new]),
  )
  np.testing.assert_allclose(by_column['probabilities'].numpy(), expected, atol=1e-6)
  bulk = loaded.signatures['bulk_inference'](examples=examples)
  assert bulk['class_names'].shape == (50, 1)
  with open(f'{path}/assets/{serving.CLASS_NAMES_ASSET}') as f:
    assert f.read().split() == spec.class_names


def test_regression_trees_serve_the_number_in_the_label_units(tmp_path):
  table = tabular_rows.numbers(800)
  spec = tabular_rows.regression_spec(table)
  trained, columns, standardized = _trained(spec, table, loss=gbt.LOSS)
  model = gbt.TreesModel(trained, 1, regression=True)
  out = model(columns).numpy()
  assert out.shape == (800, 1)
  np.testing.assert_allclose(out[:, 0], trained.predict(columns), atol=1e-6)
  path = str(tmp_path / 'model')
  tf.saved_model.save(model, path, signatures=signatures.tabular_signatures(model, spec))
  new = tabular_rows.numbers(100, seed=9)
  examples = tf.constant([tabular_rows.example(x, color) for x, color, _ in new])
  served = tf.saved_model.load(path).signatures['serving_default'](examples=examples)
  assert set(served) == {serving.PREDICTION}
  expected = model(tabular_input.parse_tabular(examples, spec, with_label=False)).numpy()[:, 0]
  prediction = served[serving.PREDICTION].numpy()
  np.testing.assert_allclose(prediction, expected * spec.label_std + spec.label_mean, rtol=1e-5)
  truth = np.array([y for _, _, y in new])
  assert np.mean(np.abs(prediction - truth)) < 4  # the label spreads ~30 about its mean


def test_trees_split_on_every_value_of_a_list_column_and_serve_it(tmp_path):
  """pixels [B, 4], the class in its last value alone: YDF unrolls it, the model and both
  signatures take it whole."""
  spec = TabularSpec(
    'label', None, 2, ['pixels'], [], list_lengths={'pixels': 4}, label_values=[0, 1]
  )
  rng = np.random.default_rng(3)
  pixels = rng.normal(size=(300, 4)).astype(np.float32)
  labels = (pixels[:, 3] > 0).astype(np.int64)
  trained = gbt.train({'pixels': pixels}, labels, spec, trees.hyperparameters(), seed=1)
  model = gbt.TreesModel(trained, 2)
  assert model.columns == ('pixels',)
  assert np.mean(np.argmax(model({'pixels': pixels}).numpy(), axis=1) == labels) > 0.95
  path = str(tmp_path / 'model')
  tf.saved_model.save(model, path, signatures=signatures.tabular_signatures(model, spec))
  loaded = tf.saved_model.load(path)
  examples = tf.constant(
    [
      tf.train.Example(
        features=tf.train.Features(
          feature={'pixels': tf.train.Feature(float_list=tf.train.FloatList(value=row))}
        )
      ).SerializeToString()
      for row in pixels[:20]
    ]
  )
  expected = model({'pixels': pixels[:20]}).numpy()
  out = loaded.signatures['serving_default'](examples=examples)['probabilities'].numpy()
  np.testing.assert_allclose(out, expected, atol=1e-6)
  by_column = loaded.signatures['predict_columns'](pixels=tf.constant(pixels[:20], tf.float64))
  np.testing.assert_allclose(by_column['probabilities'].numpy(), expected, atol=1e-6)


def test_the_loss_reaches_ydf_and_huber_which_it_lacks_is_refused_in_one_line():
  import pytest

  from contracts.errors import UnusableModel

  table = tabular_rows.numbers(300)
  spec = tabular_rows.regression_spec(table)
  trained, _, _ = _trained(spec, table, loss='mae')
  assert f'Loss: {gbt.YDF_LOSSES["mae"]}' in str(trained.describe(output_format='text'))
  with pytest.raises(UnusableModel, match=r'^--model gbt: --loss huber: the trees regress with '):
    _trained(spec, table, loss='huber')
