"""A small CNN trained from scratch: the default model for images.

Strided convolutions halve the resolution until it is 8 pixels or less, so the same file
serves 8×8 digits (no downsampling) and 224×224 photos (5 halvings); the final ≤8×8 feature
map is flattened, keeping where things are (digits need that).
"""

import math

import keras


def search_space(hp) -> None:
  hp.Float('learning_rate', 1e-4, 1e-2, sampling='log', default=1e-3)
  hp.Choice('dense_units', [64, 128, 256], default=128)
  hp.Choice('dropout', [0.0, 0.3, 0.5], default=0.3)


def build_model(spec, hp) -> keras.Model:
  """uint8 images in, class probabilities out; normalisation happens here, not on the host."""
  inputs = keras.Input(shape=(spec.height, spec.width, spec.channels), dtype='uint8', name='image')
  x = keras.layers.Rescaling(1.0 / 255)(inputs)
  filters = 32
  x = keras.layers.Conv2D(filters, 3, padding='same', activation='relu')(x)
  for _ in range(max(0, math.ceil(math.log2(max(spec.height, spec.width) / 8)))):
    filters = min(filters * 2, 128)
    x = keras.layers.Conv2D(filters, 3, strides=2, padding='same', activation='relu')(x)
  x = keras.layers.Conv2D(64, 3, padding='same', activation='relu')(x)
  x = keras.layers.Flatten()(x)
  x = keras.layers.Dropout(hp.get('dropout'))(x)
  x = keras.layers.Dense(hp.get('dense_units'), activation='relu')(x)
  outputs = keras.layers.Dense(
    spec.num_classes, activation='softmax', name='probabilities', dtype='float32'
  )(x)
  return keras.Model(inputs, outputs, name='cnn')
