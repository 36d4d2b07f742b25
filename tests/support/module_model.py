"""Tiny SavedModels shaped as a TFX module file's run_fn saves them (TFX's taxi template): a
serving_default of serialized tf.Examples whose one output is named by the user, a
transform_features that returns the transformed features and label (`<label>_xf`), none of the
project's side files.

- `classifier`: `outputs` [B, 1], class 1's probability sigmoid(x); `tips_xf` = 1 when the raw
  `tips` > 0 (int64), as the taxi file's big-tipper label.
- `regressor`: `outputs` [B, 1] = 2 * x; `fare_xf` = the raw `fare` (float).
- `raw_regressor`: the regressor without transform_features (a run_fn without Transform).
"""

import tensorflow as tf


def record(x: float, **label) -> bytes:
  """A serialized tf.Example with `x` and the label cells given (float)."""
  example = tf.train.Example()
  example.features.feature['x'].float_list.value.append(x)
  for name, value in label.items():
    example.features.feature[name].float_list.value.append(value)
  return example.SerializeToString()


def _parsed(examples, label: str = ''):
  spec = {'x': tf.io.FixedLenFeature([], tf.float32)}
  if label:
    spec[label] = tf.io.FixedLenFeature([], tf.float32, default_value=0.0)
  return tf.io.parse_example(examples, spec)


EXAMPLES = tf.TensorSpec([None], tf.string, name='examples')


class _Classifier(tf.Module):
  @tf.function(input_signature=[EXAMPLES])
  def serve(self, examples):
    return {'outputs': tf.sigmoid(tf.reshape(_parsed(examples)['x'], [-1, 1]))}

  @tf.function(input_signature=[EXAMPLES])
  def transform(self, examples):
    features = _parsed(examples, 'tips')
    return {'x_xf': features['x'], 'tips_xf': tf.cast(features['tips'] > 0, tf.int64)}


class _Regressor(tf.Module):
  @tf.function(input_signature=[EXAMPLES])
  def serve(self, examples):
    return {'outputs': tf.reshape(2 * _parsed(examples)['x'], [-1, 1])}

  @tf.function(input_signature=[EXAMPLES])
  def transform(self, examples):
    features = _parsed(examples, 'fare')
    return {'x_xf': features['x'], 'fare_xf': features['fare']}


def _save(module, folder: str, transform: bool = True) -> str:
  signatures = {'serving_default': module.serve}
  if transform:
    signatures['transform_features'] = module.transform
  tf.saved_model.save(module, folder, signatures=signatures)
  return folder


def classifier(folder: str) -> str:
  return _save(_Classifier(), folder)


def regressor(folder: str) -> str:
  return _save(_Regressor(), folder)


def raw_regressor(folder: str) -> str:
  return _save(_Regressor(), folder, transform=False)
