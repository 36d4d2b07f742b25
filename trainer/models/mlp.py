"""A small MLP over normalised numeric columns (a list of numbers: every value) and one-hot
hashed categorical columns: the default model for tabular data (CSV, TFRecord columns)."""

import warnings

import keras

# Normalised inputs are clipped to this many deviations: a value far outside what the train
# sample held (the taxi CSV's one pickup_census_tract of 15,002 rows, 1.7e10 where the sample's
# 4,096 rows held none) would otherwise reach the network as 1e17 and blow a regression's loss up.
CLIP = 10.0


def search_space(hp) -> None:
  hp.Float('learning_rate', 1e-4, 1e-2, sampling='log', default=1e-3)
  hp.Choice('hidden_units', [32, 64, 128], default=64)


def build_model(spec, hp) -> keras.Model:
  """Inputs keyed by column: numeric ones float32 [B] (a list column [B, N]), normalised with
  the train split's mean and variance (per position); categorical ones int64 ids [B] (hashed by the Trainer), one-hot encoded.
  Classes: probabilities [B, classes]; regression: the standardized label [B, 1]."""
  inputs, encoded = {}, []
  for key in spec.numeric:
    length = spec.list_lengths.get(key)  # a list column: [B, N], normalised per position
    shape = (length,) if length else ()
    inputs[key] = keras.Input(shape=shape, dtype='float32', name=spec.input_name(key))
    norm = keras.layers.Normalization(
      axis=-1 if length else None,
      mean=spec.numeric_mean[key],
      variance=spec.numeric_variance[key],
    )
    clipped = keras.layers.Lambda(lambda x: keras.ops.clip(x, -CLIP, CLIP))(norm(inputs[key]))
    encoded.append(keras.layers.Reshape((length or 1,))(clipped))
  for key in spec.categorical:
    inputs[key] = keras.Input(shape=(), dtype='int64', name=spec.input_name(key))
    encoded.append(
      keras.layers.CategoryEncoding(spec.hash_bins, output_mode='one_hot')(inputs[key])
    )
  x = keras.layers.Concatenate()(encoded) if len(encoded) > 1 else encoded[0]
  units = hp.get('hidden_units')
  for width in (units, units // 2):
    x = keras.layers.Dense(width, activation='relu')(x)
  if spec.regression:  # the standardized label; float32 under mixed precision too
    outputs = keras.layers.Dense(1, name='prediction', dtype='float32')(x)
  else:
    outputs = keras.layers.Dense(
      spec.num_classes, activation='softmax', name='probabilities', dtype='float32'
    )(x)
  with warnings.catch_warnings():  # inputs stay keyed by column, whatever their layer names
    warnings.filterwarnings('ignore', message='When providing `inputs` as a dict')
    return keras.Model(inputs, outputs, name='mlp')
