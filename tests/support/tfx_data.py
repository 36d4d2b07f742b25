"""Small real data sets that ship inside the tfx wheel (usable offline)."""

import os

import tfx

TFX_DIR = os.path.dirname(tfx.__file__)
TAXI_CSV = os.path.join(TFX_DIR, 'examples', 'chicago_taxi_pipeline', 'data', 'simple', 'data.csv')
PENGUIN_DATA = os.path.join(TFX_DIR, 'components', 'testdata', 'penguin', 'data')


def penguin_split(split: str) -> str:
  """The penguin tf.Examples of a split ('train': 234, 'eval': 100), gzipped."""
  return os.path.join(PENGUIN_DATA, f'Split-{split}', 'data_tfrecord-00000-of-00001.gz')


PENGUIN_TRAIN = penguin_split('train')
# TFX's penguin Keras module file (preprocessing_fn, run_fn, tuner_fn) and the module it imports.
PENGUIN_DIR = os.path.join(TFX_DIR, 'examples', 'penguin')
PENGUIN_MODULES = ('penguin_utils_keras.py', 'penguin_utils_base.py')
# TFX's own taxi module file (preprocessing_fn, run_fn), as its template pipeline runs it.
TAXI_MODULE = os.path.join(
  TFX_DIR, 'examples', 'chicago_taxi_pipeline', 'taxi_utils_native_keras.py'
)
IMDB = os.path.join(TFX_DIR, 'examples', 'imdb', 'data', 'imdb_small_with_labels.txt')
SEQUENCE_TESTDATA = os.path.join(TFX_DIR, 'components', 'testdata', 'tfrecord_sequence')
