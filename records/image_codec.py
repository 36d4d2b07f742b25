"""The image record layout (contracts/py) as TensorFlow writes and parses it."""

from typing import Optional

import tensorflow as tf

from contracts.image_record import (
  CHANNELS_KEY,
  HEIGHT_KEY,
  IMAGE_ID_KEY,
  IMAGE_KEY,
  LABEL_KEY,
  LABEL_NAME_KEY,
  SCHEMA_VERSION,
  SCHEMA_VERSION_KEY,
  WIDTH_KEY,
  EncodedImage,
)


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
  """Feature spec for tf.io.parse_example over a batch of records of any of contracts.image_record.READABLE_VERSIONS."""
  return {
    IMAGE_KEY: tf.io.FixedLenFeature([], tf.string),
    LABEL_KEY: tf.io.FixedLenFeature([], tf.int64),
    HEIGHT_KEY: tf.io.FixedLenFeature([], tf.int64),
    WIDTH_KEY: tf.io.FixedLenFeature([], tf.int64),
    CHANNELS_KEY: tf.io.FixedLenFeature([], tf.int64),
  }
