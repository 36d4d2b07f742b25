"""Small tables as tf.Example rows, for the trees' tests."""

import numpy as np
import tensorflow as tf

from contracts.trainer_options import REGRESSION
from trainer.data_spec import TabularSpec

COLORS = ('red', 'blue', 'green')
# Four classes; class 1 never occurs, so the trees never see it (its probability must be 0).
SPEC = TabularSpec(
  'label', None, 4, ['x'], ['color'], label_values=[0, 1, 2, 3], integer_label=True
)


def numbers(count: int, seed: int = 0):
  """(x, color, y): y = 100 + 20 x, + 50 when red, with a little noise; as floats."""
  rng = np.random.default_rng(seed)
  x = rng.normal(size=count)
  colors = rng.choice(COLORS, size=count)
  y = 100 + 20 * x + 50 * (colors == 'red') + rng.normal(scale=1.0, size=count)
  return list(zip(x.tolist(), colors.tolist(), y.tolist()))


def regression_spec(table) -> TabularSpec:
  """The spec of a `numbers` table: the label's mean and deviation from its rows."""
  y = np.array([row[2] for row in table])
  return TabularSpec(
    'label', None, 1, ['x'], ['color'], task=REGRESSION, label_mean=y.mean(), label_std=y.std()
  )


def rows(count: int, seed: int = 0):
  """(x, color, label): red → 0, blue with x > 0 → 2, the rest → 3."""
  rng = np.random.default_rng(seed)
  x = rng.normal(size=count)
  colors = rng.choice(COLORS, size=count)
  labels = np.where(colors == 'red', 0, np.where((colors == 'blue') & (x > 0), 2, 3))
  return list(zip(x.tolist(), colors.tolist(), labels.tolist()))


def example(x: float, color: str, label=None) -> bytes:
  feature = {
    'x': tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
    'color': tf.train.Feature(bytes_list=tf.train.BytesList(value=[color.encode()])),
  }
  if isinstance(label, float):
    feature['label'] = tf.train.Feature(float_list=tf.train.FloatList(value=[label]))
  elif label is not None:
    feature['label'] = tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def write(path: str, table, to_example=example) -> str:
  """The rows of `table` as records of `to_example(*row)` in one TFRecord file."""
  with tf.io.TFRecordWriter(path) as writer:
    for row in table:
      writer.write(to_example(*row))
  return path
