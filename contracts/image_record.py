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
The TensorFlow codec that writes and parses it is records/image_codec.py.
"""

from typing import NamedTuple

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
