"""An example model file for `pipeline.py run --model docs/examples/small_resnet.py`: a small
residual network for images, with a search space for `--tune-trials`.

The contract (docs/models.md): build_model(spec, hp) returns a keras.Model that takes the uint8
image batch [B, spec.height, spec.width, spec.channels] and returns class probabilities
[B, spec.num_classes]; search_space(hp) is optional.
"""

import keras


def search_space(hp) -> None:
  """What --tune-trials searches; without tuning, build_model gets these defaults (and
  learning_rate from --learning-rate)."""
  hp.Float('learning_rate', 1e-4, 3e-3, sampling='log', default=1e-3)
  hp.Choice('width', [16, 32, 64], default=32)
  hp.Int('blocks', 1, 3, default=2)


def residual_block(x, filters: int):
  shortcut = keras.layers.Conv2D(filters, 1, strides=2, padding='same')(x)
  x = keras.layers.Conv2D(filters, 3, strides=2, padding='same', activation='relu')(x)
  x = keras.layers.Conv2D(filters, 3, padding='same')(x)
  return keras.layers.Activation('relu')(keras.layers.Add()([x, shortcut]))


def build_model(spec, hp) -> keras.Model:
  inputs = keras.Input((spec.height, spec.width, spec.channels), dtype='uint8', name='image')
  x = keras.layers.Rescaling(1 / 255)(inputs)  # normalise inside the model: serving sends uint8
  for block in range(hp.get('blocks')):
    x = residual_block(x, hp.get('width') * 2**block)
  x = keras.layers.GlobalAveragePooling2D()(x)
  outputs = keras.layers.Dense(
    spec.num_classes, activation='softmax', dtype='float32', name='probabilities'
  )(x)
  return keras.Model(inputs, outputs, name='small_resnet')
