"""Keras models: a small CNN for images, a small MLP for tabular columns, embedding + masked
mean pooling for token sequences."""

import math
from typing import Dict
import warnings

import keras
import tensorflow as tf

from contracts import serving
from trainer.data_spec import ImageSpec, SequenceSpec, TabularSpec

HASH_BINS = 64  # buckets per categorical column (no vocabulary pass needed)


def build_image_model(
  spec: ImageSpec, learning_rate: float = 1e-3, jit_compile: bool = False
) -> keras.Model:
  """uint8 images in, class probabilities out; normalisation happens here, not on the host.

  Strided convolutions halve the resolution until it is 8 pixels or less, so the same
  builder serves 8×8 digits (no downsampling) and 224×224 photos (5 halvings); the final
  ≤8×8 feature map is flattened, keeping where things are (digits need that).
  """
  inputs = keras.Input(shape=(spec.height, spec.width, spec.channels), dtype='uint8', name='image')
  x = keras.layers.Rescaling(1.0 / 255)(inputs)
  filters = 32
  x = keras.layers.Conv2D(filters, 3, padding='same', activation='relu')(x)
  for _ in range(max(0, math.ceil(math.log2(max(spec.height, spec.width) / 8)))):
    filters = min(filters * 2, 128)
    x = keras.layers.Conv2D(filters, 3, strides=2, padding='same', activation='relu')(x)
  x = keras.layers.Conv2D(64, 3, padding='same', activation='relu')(x)
  x = keras.layers.Flatten()(x)
  x = keras.layers.Dropout(0.3)(x)
  x = keras.layers.Dense(128, activation='relu')(x)
  outputs = keras.layers.Dense(
    spec.num_classes, activation='softmax', name='probabilities', dtype='float32'
  )(x)
  return _compiled(keras.Model(inputs, outputs), learning_rate, jit_compile)


def build_tabular_model(
  spec: TabularSpec,
  numeric_sample: Dict[str, tf.Tensor],
  learning_rate: float = 1e-3,
  jit_compile: bool = False,
) -> keras.Model:
  """Normalised numeric columns + hashed one-hot categorical columns → MLP.

  `numeric_sample` (a few thousand training rows) sets the normalisation statistics.
  """
  inputs, encoded = {}, []
  for key in spec.numeric:
    inputs[key] = keras.Input(shape=(), dtype='float32', name=serving.column_input(key))
    norm = keras.layers.Normalization(axis=None)
    norm.adapt(numeric_sample[key])
    encoded.append(keras.layers.Reshape((1,))(norm(inputs[key])))
  for key in spec.categorical:
    inputs[key] = keras.Input(shape=(), dtype='string', name=serving.column_input(key))
    encoded.append(
      keras.layers.Hashing(HASH_BINS, output_mode='one_hot')(
        keras.layers.Reshape((1,))(inputs[key])
      )
    )
  x = keras.layers.Concatenate()(encoded) if len(encoded) > 1 else encoded[0]
  for units in (64, 32):
    x = keras.layers.Dense(units, activation='relu')(x)
  outputs = keras.layers.Dense(
    spec.num_classes, activation='softmax', name='probabilities', dtype='float32'
  )(x)
  with warnings.catch_warnings():  # inputs stay keyed by column, whatever their layer names
    warnings.filterwarnings('ignore', message='When providing `inputs` as a dict')
    return _compiled(keras.Model(inputs, outputs), learning_rate, jit_compile)


class MaskedMean(keras.layers.Layer):
  """Mean of the embeddings of the non-padding positions (id 0 is padding); 0 for an empty
  sequence instead of 0/0."""

  def call(self, embedded, ids):
    mask = keras.ops.expand_dims(keras.ops.cast(ids > 0, embedded.dtype), -1)
    total = keras.ops.sum(embedded * mask, axis=1)
    return total / keras.ops.maximum(keras.ops.sum(mask, axis=1), 1.0)


def build_sequence_model(
  spec: SequenceSpec,
  learning_rate: float = 1e-3,
  jit_compile: bool = False,
  embedding_dim: int = 32,
) -> keras.Model:
  """Token ids [B, T] (0-padded, any T) → embedding → masked mean → MLP → class probabilities.

  Averaging is order-blind but cheap and length-independent: enough for "which words occur"
  (sentiment, topic); a recurrent layer would be the next step for order-dependent labels.
  """
  ids = keras.Input(shape=(None,), dtype='int64', name='tokens')
  embedded = keras.layers.Embedding(spec.vocabulary_size, embedding_dim)(ids)
  x = MaskedMean()(embedded, ids)
  x = keras.layers.Dense(32, activation='relu')(x)
  outputs = keras.layers.Dense(
    spec.num_classes, activation='softmax', name='probabilities', dtype='float32'
  )(x)
  return _compiled(keras.Model(ids, outputs), learning_rate, jit_compile)


def _compiled(model: keras.Model, learning_rate: float, jit_compile: bool) -> keras.Model:
  model.compile(
    optimizer=keras.optimizers.Adam(learning_rate),
    jit_compile=jit_compile,
    loss='sparse_categorical_crossentropy',
    metrics=['sparse_categorical_accuracy'],
  )
  return model
