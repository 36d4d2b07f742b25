"""Tiny Keras models saved as a TFX module file's run_fn saves one (TFX's taxi template):
`serving_default` parses serialized tf.Examples without the label, `transform_features` returns
the transformed features and the label (`label_xf`, an integer: two classes). The last layer is
`Dense(1, activation='sigmoid')` or, with `logits`, `Dense(1)` (a `from_logits=True` model)."""

LABEL = 'label'
WEIGHT = 3.0  # the one weight: x = 0.3 gives a logit of 0.9 (a probability of 0.71)


def save(path: str, logits: bool) -> str:
  import keras
  import numpy as np
  import tensorflow as tf

  inputs = keras.Input(shape=(1,), name='x_xf')
  dense = keras.layers.Dense(1, activation=None if logits else 'sigmoid')
  model = keras.Model(inputs, dense(inputs))
  dense.set_weights([np.array([[WEIGHT]], np.float32), np.array([0.0], np.float32)])
  spec = {'x': tf.io.FixedLenFeature([], tf.float32)}
  with_label = dict(spec, **{LABEL: tf.io.FixedLenFeature([], tf.int64)})

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name='examples')])
  def serve(examples):
    parsed = tf.io.parse_example(examples, spec)
    return {'outputs': model(tf.reshape(parsed['x'], [-1, 1]))}

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name='examples')])
  def transform(examples):
    parsed = tf.io.parse_example(examples, with_label)
    return {'x_xf': parsed['x'], f'{LABEL}_xf': parsed[LABEL]}

  tf.saved_model.save(
    model, path, signatures={'serving_default': serve, 'transform_features': transform}
  )
  return path
