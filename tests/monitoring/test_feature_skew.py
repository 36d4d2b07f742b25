"""Per-example feature skew: training and serving rows that share an id, feature by feature."""

import tensorflow as tf

from monitoring import feature_skew


def _example(row_id: str, value: float, only_training: float = 0.0) -> bytes:
  features = {
    'id': tf.train.Feature(bytes_list=tf.train.BytesList(value=[row_id.encode()])),
    'f': tf.train.Feature(float_list=tf.train.FloatList(value=[value])),
  }
  if only_training:
    features['old'] = tf.train.Feature(float_list=tf.train.FloatList(value=[only_training]))
  return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def test_rows_sharing_an_id_are_compared_training_as_the_base():
  training = [_example('a', 1.0, only_training=5.0), _example('b', 2.0), _example('c', 3.0)]
  serving = [_example('a', 1.0), _example('b', 2.0), _example('c', 9.0), _example('d', 4.0)]
  found = feature_skew.detect(training, serving, ['id'], [])
  skew = found['features']
  assert int(skew['f']['mismatchCount']) == 1 and int(skew['f']['matchCount']) == 2
  assert int(skew['old']['baseOnly']) == 1  # in training's row only: training is the base
  assert int(found['match_stats']['baseWithIdCount']) == 3
  assert int(found['match_stats']['testWithIdCount']) == 4
