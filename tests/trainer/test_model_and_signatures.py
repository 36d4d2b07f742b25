"""Models build from the data's shape; saved signatures answer for examples and image bytes."""

import numpy as np
import pytest
import tensorflow as tf

from components.image_example_gen import encode
from contracts import image_record, serving
from records import image_codec
from tests.conftest import image_bytes
from tests.support import built_models
from trainer import signatures
from trainer.data_spec import ImageSpec, TabularSpec


@pytest.mark.parametrize('size,channels', [((8, 8), 1), ((64, 48), 3)])
def test_image_model_shapes(size, channels):
  spec = ImageSpec(size[0], size[1], channels, list('abcd'), image_record.ENCODED, True)
  built = built_models.built_in('cnn', spec)
  batch = np.random.default_rng(0).integers(0, 256, size=(2, *size, channels), dtype=np.uint8)
  probabilities = built(batch).numpy()
  assert probabilities.shape == (2, 4)
  np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)


def test_image_model_learns_a_separable_toy_problem():
  rng = np.random.default_rng(0)
  labels = rng.integers(0, 2, size=256)
  images = np.where(labels[:, None, None, None] == 1, 200, 30).astype(np.uint8)
  images = np.clip(images + rng.integers(0, 40, size=(256, 8, 8, 1)), 0, 255).astype(np.uint8)
  built = built_models.built_in(
    'cnn', ImageSpec(8, 8, 1, ['dark', 'light'], image_record.ENCODED, True)
  )
  built.fit(images, labels, epochs=5, batch_size=32, verbose=0)
  assert built.evaluate(images, labels, verbose=0)[1] > 0.95


def _saved(tmp_path, built, serving):
  path = str(tmp_path / 'model')
  tf.saved_model.save(built, path, signatures=serving)
  return tf.saved_model.load(path)


def test_image_signatures_agree_on_examples_and_image_bytes(tmp_path):
  spec = ImageSpec(8, 8, 1, ['zero', 'one', 'two'], image_record.ENCODED, True)
  built = built_models.built_in('cnn', spec)
  loaded = _saved(tmp_path, built, signatures.image_signatures(built, spec))
  assert set(loaded.signatures) == {'serving_default', 'predict_image_bytes', 'transform_features'}
  pixels = np.random.default_rng(3).integers(0, 256, size=(8, 8), dtype=np.uint8)
  png = image_bytes(pixels, 'PNG', 'L')
  example = image_codec.make_example(
    encode.encode_image(png), 2, 'two', '2/a.png'
  ).SerializeToString()
  from_examples = loaded.signatures['serving_default'](examples=tf.constant([example]))
  # A client sends a bigger RGB JPEG-free PNG: resized and converted by the signature.
  big_rgb = image_bytes(
    np.repeat(np.kron(pixels, np.ones((2, 2), np.uint8))[..., None], 3, -1), 'PNG'
  )
  from_bytes = loaded.signatures['predict_image_bytes'](image_bytes=tf.constant([png, big_rgb]))
  expected = built(pixels[None, ..., None]).numpy()
  np.testing.assert_allclose(from_examples['probabilities'].numpy(), expected, rtol=1e-5)
  np.testing.assert_allclose(from_bytes['probabilities'].numpy()[:1], expected, rtol=1e-5)
  assert from_bytes['probabilities'].shape == (2, 3)
  top = int(np.argmax(expected))
  assert from_examples['class_names'].numpy().tolist() == [spec.labels[top].encode()]
  labels = loaded.signatures['transform_features'](examples=tf.constant([example]))
  assert labels[serving.EVAL_LABEL_KEY].numpy().tolist() == [2]


def test_tabular_model_and_signatures(tmp_path):
  # Column names as CSV headers have them: Keras and TensorFlow names take neither.
  spec = TabularSpec(
    'tips',
    0.0,
    2,
    ['fare/usd'],
    ['payment (type)'],
    numeric_mean={'fare/usd': 2.0},
    numeric_variance={'fare/usd': 2 / 3},
  )
  built = built_models.built_in('mlp', spec)
  loaded = _saved(tmp_path, built, signatures.tabular_signatures(built, spec))
  example = tf.train.Example(
    features=tf.train.Features(
      feature={
        'fare/usd': tf.train.Feature(float_list=tf.train.FloatList(value=[2.0])),
        'tips': tf.train.Feature(float_list=tf.train.FloatList(value=[1.5])),
      }
    )
  ).SerializeToString()
  out = loaded.signatures['serving_default'](examples=tf.constant([example]))
  assert out['probabilities'].shape == (1, 2)
  labels = loaded.signatures['transform_features'](examples=tf.constant([example]))
  assert labels[serving.EVAL_LABEL_KEY].numpy().tolist() == [1]

  # Raw values by column, a missing one as NaN / '': the same answers as the examples, where a
  # missing feature gets the same training default.
  only_payment = tf.train.Example(
    features=tf.train.Features(
      feature={'payment (type)': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'b']))}
    )
  ).SerializeToString()
  from_examples = loaded.signatures['serving_default'](
    examples=tf.constant([example, only_payment])
  )
  from_columns = loaded.signatures['predict_columns'](
    fare_usd=tf.constant([2.0, float('nan')], tf.float64), payment__type_=tf.constant(['', 'b'])
  )
  np.testing.assert_allclose(
    from_columns['probabilities'].numpy(), from_examples['probabilities'].numpy(), rtol=1e-6
  )
  assert sorted(loaded.signatures['predict_columns'].structured_input_signature[1]) == [
    'fare_usd',
    'payment__type_',
  ]

  # NaN or inf in a record or a column: missing, as training reads them (the mean), not NaN out.
  def fare(value):
    feature = tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
    return tf.train.Example(
      features=tf.train.Features(feature={'fare/usd': feature})
    ).SerializeToString()

  absent = tf.train.Example().SerializeToString()
  served = loaded.signatures['serving_default'](
    examples=tf.constant([absent, fare(float('nan')), fare(float('inf')), fare(-float('inf'))])
  )['probabilities'].numpy()
  assert np.isfinite(served).all()
  np.testing.assert_allclose(served[1:], np.repeat(served[:1], 3, axis=0), rtol=1e-6)
  by_column = loaded.signatures['predict_columns'](
    fare_usd=tf.constant([float('inf'), float('nan')], tf.float64),
    payment__type_=tf.constant(['', '']),
  )['probabilities'].numpy()
  np.testing.assert_allclose(by_column, np.repeat(served[:1], 2, axis=0), rtol=1e-6)


def test_a_list_column_is_one_input_of_every_value_in_each_signature(tmp_path):
  """pixels [B, 3] from records and from predict_columns (float64 [B, 3], NaN: missing, fed the
  mean at that position); every position counts, not the first alone."""
  spec = TabularSpec(
    'label',
    None,
    2,
    ['pixels', 'x'],
    [],
    list_lengths={'pixels': 3},
    numeric_mean={'pixels': [1.0, 2.0, 3.0], 'x': 0.0},
    numeric_variance={'pixels': [1.0, 0.0, 4.0], 'x': 1.0},  # a constant position: no NaN
  )
  built = built_models.built_in('mlp', spec)
  signatures.attach_columns(built, spec, str(tmp_path))
  loaded = _saved(tmp_path, built, signatures.tabular_signatures(built, spec))
  columns = serving.columns(str(tmp_path / 'model'))
  assert columns == {'pixels': 'float32[3]', 'x': 'float32', 'label': 'int64'}

  def record(pixels):
    feature = {'x': tf.train.Feature(float_list=tf.train.FloatList(value=[0.5]))}
    if pixels:
      feature['pixels'] = tf.train.Feature(float_list=tf.train.FloatList(value=pixels))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

  rows = [[1.0, 2.0, 3.0], [1.0, 2.0, -9.0], [], [7.0]]
  from_examples = loaded.signatures['serving_default'](
    examples=tf.constant([record(r) for r in rows])
  )['probabilities'].numpy()
  nan = float('nan')
  columns = loaded.signatures['predict_columns']
  assert columns.structured_input_signature[1]['pixels'].shape.as_list() == [None, 3]
  from_columns = columns(
    pixels=tf.constant([rows[0], rows[1], [nan] * 3, [7.0, nan, nan]], tf.float64),
    x=tf.constant([0.5] * 4, tf.float64),
  )['probabilities'].numpy()
  np.testing.assert_allclose(from_columns, from_examples, rtol=1e-5)
  assert np.all(np.isfinite(from_examples))
  assert not np.allclose(from_examples[0], from_examples[1])  # the third value counts
  np.testing.assert_allclose(from_examples[2], from_examples[0], rtol=1e-5)  # missing: the means


def test_a_regression_model_learns_the_standardized_label_and_serves_it_in_label_units(tmp_path):
  rng = np.random.default_rng(4)
  rooms = rng.integers(1, 6, size=512).astype(np.float32)
  price = 50_000 + 40_000 * rooms  # a target in the hundreds of thousands
  spec = TabularSpec(
    'price',
    None,
    1,
    numeric=['rooms'],
    categorical=[],
    numeric_mean={'rooms': float(rooms.mean())},
    numeric_variance={'rooms': float(rooms.var())},
    task='regression',
    label_mean=float(price.mean()),
    label_std=float(price.std()),
  )
  built = built_models.built_in('mlp', spec, learning_rate=1e-2)
  standardized = (price - spec.label_mean) / spec.label_std
  built.fit({'rooms': rooms}, standardized, epochs=30, batch_size=64, verbose=0)
  loaded = _saved(tmp_path, built, signatures.tabular_signatures(built, spec))
  rows = [
    tf.train.Example(
      features=tf.train.Features(
        feature={
          'rooms': tf.train.Feature(float_list=tf.train.FloatList(value=[r])),
          'price': tf.train.Feature(float_list=tf.train.FloatList(value=[50_000 + 40_000 * r])),
        }
      )
    ).SerializeToString()
    for r in (1.0, 3.0, 5.0)
  ]
  served = loaded.signatures['serving_default'](examples=tf.constant(rows))
  assert set(served) == {serving.PREDICTION}
  np.testing.assert_allclose(served[serving.PREDICTION].numpy(), [90e3, 170e3, 250e3], rtol=0.05)
  by_column = loaded.signatures['predict_columns'](rooms=tf.constant([3.0], tf.float64))
  assert by_column[serving.PREDICTION].numpy() == pytest.approx(
    served[serving.PREDICTION].numpy()[1], rel=1e-5
  )
  labels = loaded.signatures['transform_features'](examples=tf.constant(rows))
  np.testing.assert_allclose(labels[serving.EVAL_LABEL_KEY].numpy(), [90e3, 170e3, 250e3])
