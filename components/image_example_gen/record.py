"""The tf.train.Example layout written by ImageExampleGen and read by the Trainer,
and the names of the files written beside the shards.

One record per image:
  image          bytes   encoded JPEG/PNG bytes (default) or raw uint8 pixels, row-major H×W×C
  label          int64   id of the class folder in the sorted label vocabulary
  label_name     bytes   the class folder's name
  image_id       bytes   the source file's path below the data root (since version 2)
  height, width, channels  int64  size of the image as stored
  schema_version int64   bumped whenever this layout changes

Versions: 1 had no image_id; 2 adds it (to trace a record back to its file). The Trainer's
parse_spec reads only features every version has, so shards of both versions train together.
"""
import io
from typing import NamedTuple

import numpy as np
import PIL.Image
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

# Beside Split-*/ in the Examples artifact (see executor.py for their contents).
LABELS_FILE = 'labels.txt'
EXCLUDED_FILE = 'excluded_files.csv'
META_FILE = 'image_meta.json'

ENCODED = 'encoded'
RAW = 'raw'
ENCODINGS = (ENCODED, RAW)

IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png')

# Modes TensorFlow's decode_jpeg / decode_png read as they are; anything else
# (CMYK, palette, 32-bit, ...) is converted once here and stored as PNG.
_KEPT_AS_IS = {'JPEG': ('L', 'RGB'), 'PNG': ('L', 'LA', 'RGB', 'RGBA')}
_CHANNELS = {'L': 1, 'LA': 2, 'RGB': 3, 'RGBA': 4}


class EncodedImage(NamedTuple):
  """An image ready to be written: payload bytes and the size as stored."""
  payload: bytes
  height: int
  width: int
  channels: int


def _normalised_mode(image: PIL.Image.Image) -> PIL.Image.Image:
  """Converts exotic modes to the nearest of L, LA, RGB, RGBA."""
  if image.mode in _CHANNELS:
    return image
  has_alpha = 'A' in image.getbands() or 'transparency' in image.info
  if image.mode in ('1', 'I', 'I;16', 'I;16B', 'I;16L', 'F'):
    if image.mode != '1':
      # Wide grayscale: scale the full range down to 8 bits.
      pixels = np.asarray(image, dtype=np.float64)
      top = pixels.max() or 1.0
      return PIL.Image.fromarray((pixels * (255.0 / top)).round().astype(np.uint8), 'L')
    return image.convert('L')
  return image.convert('RGBA' if has_alpha else 'RGB')


def encode_image(data: bytes, encoding: str = ENCODED) -> EncodedImage:
  """Decodes `data` fully (so corrupt files fail here) and returns the payload.

  Raises:
    ValueError: the bytes are not a readable JPEG or PNG image.
  """
  try:
    image = PIL.Image.open(io.BytesIO(data))
    image_format = image.format
    width, height = image.size
    if encoding == ENCODED and image_format == 'JPEG' and image.mode in _KEPT_AS_IS['JPEG']:
      # The bytes are kept as they are; decoding only proves they decode. At 1/8 scale libjpeg
      # still reads every coefficient but skips most of the inverse DCT: 125 instead of
      # 169 µs for a 224x224 photo (bench/example_gen.py's images), truncation still caught.
      image.draft(image.mode, (max(1, width // 8), max(1, height // 8)))
    image.load()
  except Exception as e:  # PIL raises many unrelated types for bad files.
    raise ValueError(f'cannot decode image: {e}') from None
  if image_format not in _KEPT_AS_IS:
    raise ValueError(f'unsupported image format {image_format}')
  if encoding == RAW:
    # Raw pixels keep 1 or 3 channels: the Trainer drops alpha anyway.
    image = _normalised_mode(image)
    image = image.convert('L' if image.mode in ('L', 'LA') else 'RGB')
    return EncodedImage(image.tobytes(), height, width, _CHANNELS[image.mode])
  if image.mode in _KEPT_AS_IS[image_format]:
    return EncodedImage(data, height, width, _CHANNELS[image.mode])
  image = _normalised_mode(image)
  buffer = io.BytesIO()
  image.save(buffer, format='PNG')
  return EncodedImage(buffer.getvalue(), height, width, _CHANNELS[image.mode])


def _int64(value: int) -> tf.train.Feature:
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def _bytes(value: bytes) -> tf.train.Feature:
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def make_example(image: EncodedImage, label: int, label_name: str,
                 image_id: str) -> tf.train.Example:
  """Builds the record for one image (current layout)."""
  feature = {
      IMAGE_KEY: _bytes(image.payload),
      LABEL_KEY: _int64(label),
      LABEL_NAME_KEY: _bytes(label_name.encode('utf-8')),
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
