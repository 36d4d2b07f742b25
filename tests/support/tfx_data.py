"""Small real data sets that ship inside the tfx wheel (usable offline)."""

import os

import tfx

TFX_DIR = os.path.dirname(tfx.__file__)
TAXI_CSV = os.path.join(TFX_DIR, 'examples', 'chicago_taxi_pipeline', 'data', 'simple', 'data.csv')
PENGUIN_TRAIN = os.path.join(
  TFX_DIR,
  'components',
  'testdata',
  'penguin',
  'data',
  'Split-train',
  'data_tfrecord-00000-of-00001.gz',
)
# TFX's own taxi module file (preprocessing_fn, run_fn), as its template pipeline runs it.
TAXI_MODULE = os.path.join(
  TFX_DIR, 'examples', 'chicago_taxi_pipeline', 'taxi_utils_native_keras.py'
)
IMDB = os.path.join(TFX_DIR, 'examples', 'imdb', 'data', 'imdb_small_with_labels.txt')
SEQUENCE_TESTDATA = os.path.join(TFX_DIR, 'components', 'testdata', 'tfrecord_sequence')
