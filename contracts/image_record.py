"""The tf.train.Example layout written by ImageExampleGen and read by the Trainer.

One record per image:
  image          bytes   encoded JPEG/PNG bytes (default) or raw uint8 pixels, row-major H×W×C
  label          int64   id of the class folder in the sorted label vocabulary (absent: unlabeled)
  label_name     bytes   the class folder's name (absent: unlabeled)
  image_id       bytes   the source file's path below the data root (since version 2)
  height, width, channels  int64  size of the image as stored
  schema_version int64   bumped whenever this layout changes

Versions: 1 had no image_id; 2 adds it (to trace a record back to its file). The Trainer's
parse_spec reads only features every version has, so shards of both versions train together.
"""

from typing import NamedTuple, Optional

import tensorflow as tf

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)

IMAGE_KEY = 'image'
LABEL_KEY = 'label'
LABEL_NAME_KEY = 'label_name'
IMAGE_ID_KEY = 'image_id'
HEIGHT_KEY = 'height'
WIDTH_KEY = 'width'
CHANNELS_KEY = 'channels'
SCHEMA_VERSION_KEY = 'schema_version'

ENCODED = 'encoded'
RAW = 'raw'
ENCODINGS = (ENCODED, RAW)


class EncodedImage(NamedTuple):
  """An image ready to be written: payload bytes and the size as stored."""

  payload: bytes
  height: int
  width: int
  channels: int


def _int64(value: int) -> tf.train.Feature:
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def _bytes(value: bytes) -> tf.train.Feature:
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def make_example(
  image: EncodedImage, label: Optional[int], label_name: str, image_id: str
) -> tf.train.Example:
  """Builds the record for one image (current layout); label None: an unlabeled image (no
  label features), as --infer-data's are."""
  labels = (
    {}
    if label is None
    else {LABEL_KEY: _int64(label), LABEL_NAME_KEY: _bytes(label_name.encode('utf-8'))}
  )
  feature = {
    IMAGE_KEY: _bytes(image.payload),
    **labels,
    IMAGE_ID_KEY: _bytes(image_id.encode('utf-8')),
    HEIGHT_KEY: _int64(image.height),
    WIDTH_KEY: _int64(image.width),
    CHANNELS_KEY: _int64(image.channels),
    SCHEMA_VERSION_KEY: _int64(SCHEMA_VERSION),
  }
  return tf.train.Example(features=tf.train.Features(feature=feature))


def parse_spec() -> dict:
  """Feature spec for tf.io.parse_example over a batch of records of any READABLE_VERSIONS."""
  return {
    IMAGE_KEY: tf.io.FixedLenFeature([], tf.string),
    LABEL_KEY: tf.io.FixedLenFeature([], tf.int64),
    HEIGHT_KEY: tf.io.FixedLenFeature([], tf.int64),
    WIDTH_KEY: tf.io.FixedLenFeature([], tf.int64),
    CHANNELS_KEY: tf.io.FixedLenFeature([], tf.int64),
  }
