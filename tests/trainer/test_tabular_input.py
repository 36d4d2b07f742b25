"""trainer/tabular_input.py on real rows: labels thresholded, named or defaulted, categories
hashed, batches cut from larger parses, the cache."""

import os

import numpy as np
import pytest
import tensorflow as tf

from trainer import tabular_input
from trainer.data_spec import TabularSpec


def test_tabular_float_label_is_thresholded(tmp_path):
  path = str(tmp_path / 'rows')
  rows = [(1.5, 'cash', 0.0), (2.5, 'card', 3.0), (0.5, '', 1.0)]
  with tf.io.TFRecordWriter(path) as writer:
    for fare, payment, tips in rows:
      feature = {
        'fare': tf.train.Feature(float_list=tf.train.FloatList(value=[fare])),
        'tips': tf.train.Feature(float_list=tf.train.FloatList(value=[tips])),
      }
      if payment:
        feature['payment'] = tf.train.Feature(
          bytes_list=tf.train.BytesList(value=[payment.encode()])
        )
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )
  spec = TabularSpec('tips', 0.0, 2, ['fare'], ['payment'])
  features, labels = next(iter(tabular_input.tabular_dataset([path], spec, 3, training=False)))
  assert labels.numpy().tolist() == [0, 1, 1]
  # categories reach the model as hashed ids; a missing one is hashed as ''
  hashed = tf.strings.to_hash_bucket_fast([b'cash', b'card', b''], spec.hash_bins)
  assert features['payment'].numpy().tolist() == hashed.numpy().tolist()
  np.testing.assert_allclose(features['fare'].numpy(), [1.5, 2.5, 0.5])


@pytest.mark.parametrize(
  'values,spec,expected',
  [
    ([2, None, 0], TabularSpec('label', None, 3, ['x'], [], label_default='1'), [2, 1, 0]),
    ([2, None, 0], TabularSpec('label', None, 3, ['x'], []), [2, 0, 0]),  # no default: 0
    (
      [0.5, None, float('nan')],
      TabularSpec('label', 0.0, 2, ['x'], [], label_default='-1.0'),
      [1, 0, 0],
    ),
    (  # class ids from the values present, not 0..the largest; an unseen value: -1
      [40, 3, 7, 5],
      TabularSpec('label', None, 3, ['x'], [], label_values=[3, 7, 40], integer_label=True),
      [2, 0, 1, -1],
    ),
    (  # an integer label with --label-threshold
      [40, 3, 7, 5],
      TabularSpec('label', 6.0, 2, ['x'], [], integer_label=True),
      [1, 0, 1, 0],
    ),
    (
      [b'setosa', None, b'virginica'],
      TabularSpec('label', None, 3, ['x'], [], [], ['other', 'setosa', 'virginica'], 'other'),
      [1, 0, 2],
    ),
  ],
)
def test_rows_without_a_label_take_the_label_default(tmp_path, values, spec, expected):
  path = str(tmp_path / 'rows')
  kind = {int: 'int64_list', float: 'float_list', bytes: 'bytes_list'}
  with tf.io.TFRecordWriter(path) as writer:
    for value in values:
      feature = {'x': tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))}
      if value is not None:
        lists = {'int64_list': tf.train.Int64List, 'float_list': tf.train.FloatList}
        lists['bytes_list'] = tf.train.BytesList
        name = kind[type(value)]
        feature['label'] = tf.train.Feature(**{name: lists[name](value=[value])})
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )
  batch = len(values)
  _, labels = next(iter(tabular_input.tabular_dataset([path], spec, batch, training=False)))
  assert labels.numpy().tolist() == expected


def _write_rows(path, rows):
  with tf.io.TFRecordWriter(path) as writer:
    for i in range(rows):
      feature = {
        'x': tf.train.Feature(float_list=tf.train.FloatList(value=[float(i)])),
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
      }
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )


def test_tabular_batches_are_cut_from_larger_parses_without_losing_order(tmp_path):
  """Eval: every row once, in order, batches of the asked size (the last one short); training:
  full batches only. Rows are parsed several batches at a time, then cut apart."""
  path = str(tmp_path / 'rows')
  rows = 5 * tabular_input.TABULAR_BATCHES_PER_PARSE + 3  # more than one parse, plus a rest
  _write_rows(path, rows)
  spec = TabularSpec('label', None, 2, ['x'], [])
  batches = list(tabular_input.tabular_dataset([path], spec, 5, training=False))
  assert [len(labels) for _, labels in batches] == [5] * (rows // 5) + [rows % 5]
  assert np.concatenate([f['x'].numpy() for f, _ in batches]).tolist() == list(
    map(float, range(rows))
  )
  training = tabular_input.tabular_dataset([path], spec, 5, training=True).take(7)
  assert [len(labels) for _, labels in training] == [5] * 7


def test_cached_tabular_batches_come_from_memory_in_a_new_order(tmp_path):
  path = str(tmp_path / 'rows')
  _write_rows(path, 40)
  spec = TabularSpec('label', None, 2, ['x'], [])
  iterator = iter(tabular_input.tabular_dataset([path], spec, 5, training=True, cache=True))
  first = [next(iterator) for _ in range(8)]
  os.remove(path)
  epochs = [first] + [[next(iterator) for _ in range(8)] for _ in range(3)]
  orders = []
  for epoch in epochs:
    batches = [tuple(features['x'].numpy().astype(int)) for features, _ in epoch]
    assert sorted(x for batch in batches for x in batch) == list(range(40))
    orders.append(batches)
  assert sorted(orders[1]) == sorted(orders[0])  # the same batches: their rows stay together
  assert len({tuple(order) for order in orders}) > 1  # in a new order


def test_a_list_column_is_fed_whole_its_missing_positions_the_means():
  """[B, N]: a row without the list gets the mean at every position, a shorter one at the
  positions it lacks; values past N are left out. Integers are fed as floats."""
  spec = TabularSpec(
    'label',
    None,
    2,
    ['pixels', 'x'],
    [],
    integer=['pixels'],
    list_lengths={'pixels': 3},
    numeric_mean={'pixels': [10.5, 20.0, 30.0], 'x': 1.0},
  )
  rows = [[1, 2, 3], [], [4], [5, 6, 7, 8]]
  records = []
  for pixels in rows:
    feature = {'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}
    if pixels:
      feature['pixels'] = tf.train.Feature(int64_list=tf.train.Int64List(value=pixels))
    records.append(
      tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
    )
  features, labels = tabular_input.parse_tabular(tf.constant(records), spec)
  assert features['pixels'].dtype == tf.float32
  assert features['pixels'].numpy().tolist() == [
    [1, 2, 3],
    [10.5, 20, 30],
    [4, 20, 30],
    [5, 6, 7],
  ]
  assert features['x'].numpy().tolist() == [1.0] * 4 and labels.numpy().tolist() == [1] * 4


def test_nan_and_inf_after_the_first_rows_are_fed_as_missing(tmp_path):
  """A non-finite number is missing wherever it is (not only in the Trainer's first rows): the
  column's mean, a list column's mean at that position; integers and categories unchanged."""
  spec = TabularSpec(
    'label',
    None,
    2,
    ['x', 'pixels'],
    [],
    list_lengths={'pixels': 2},
    numeric_mean={'x': 0.5, 'pixels': [1.0, 2.0]},
  )
  nan, inf = float('nan'), float('inf')
  xs = [float(i) for i in range(10)] + [nan, -inf, 7.0]
  pixels = [[3.0, 4.0]] * 10 + [[nan, 5.0], [6.0, inf], [3.0, 4.0]]
  path = str(tmp_path / 'rows')
  with tf.io.TFRecordWriter(path) as writer:
    for x, pair in zip(xs, pixels):
      feature = {
        'x': tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
        'pixels': tf.train.Feature(float_list=tf.train.FloatList(value=pair)),
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
      }
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )
  batches = list(tabular_input.tabular_dataset([path], spec, 4, training=False))
  fed = {key: np.concatenate([f[key].numpy() for f, _ in batches]) for key in ('x', 'pixels')}
  assert fed['x'].tolist() == xs[:10] + [0.5, 0.5, 7.0]
  assert fed['pixels'][10:].tolist() == [[1.0, 5.0], [6.0, 2.0], [3.0, 4.0]]
