"""Helpers for tests that write TFRecord shards and damage them on purpose."""

import struct

import numpy as np
import tensorflow as tf

from components.image_example_gen import encode
from records import image_codec
from tests.conftest import image_bytes

RNG = np.random.default_rng(4)
RECORDS = 500
DAMAGED_INDEX = 10  # the 11th record


def digit_records(count: int = RECORDS):
  """`count` serialized image records of varying size (random 8x8 to 24x24 grayscale PNGs)."""
  out = []
  for i in range(count):
    side = int(RNG.integers(8, 25))
    pixels = RNG.integers(0, 256, size=(side, side), dtype=np.uint8)
    encoded = encode.encode_image(image_bytes(pixels, 'PNG', 'L'))
    out.append(
      image_codec.make_example(
        encoded, i % 10, str(i % 10), f'{i % 10}/{i}.png'
      ).SerializeToString()
    )
  return out


def write_shard(path: str, records, compression: str = '') -> str:
  with tf.io.TFRecordWriter(path, options=compression or None) as writer:
    for serialized in records:
      writer.write(serialized)
  return path


def record_offset(data: bytes, index: int) -> int:
  """Byte offset of record `index` in an uncompressed shard."""
  position = 0
  for _ in range(index):
    position += 16 + struct.unpack_from('<Q', data, position)[0]
  return position


def damage(path: str, offset: int) -> None:
  data = bytearray(open(path, 'rb').read())
  data[offset] ^= 0x5A
  open(path, 'wb').write(bytes(data))


def read_all(path: str):
  return [
    r.numpy()
    for r in tf.data.TFRecordDataset(
      path, compression_type=('GZIP' if path.endswith('.gz') else '')
    )
  ]
