"""Image shards for the trainer's tests: random images written as the project's records."""

import os

import numpy as np
import tensorflow as tf

from components.image_example_gen import encode
from records import image_codec
from tests.conftest import image_bytes
from trainer.data_spec import ImageSpec

RNG = np.random.default_rng(1)


def write_image_shards(folder, payload_images, encoding, compression, shards=2):
  """payload_images: list of (uint8 array, label). Returns the shard paths."""
  os.makedirs(folder, exist_ok=True)
  suffix = '.gz' if compression == 'GZIP' else ''
  paths = [os.path.join(folder, f'data-{i:05d}-of-{shards:05d}{suffix}') for i in range(shards)]
  writers = [tf.io.TFRecordWriter(p, options=compression or None) for p in paths]
  for i, (pixels, label) in enumerate(payload_images):
    mode = 'L' if pixels.ndim == 2 else 'RGB'
    encoded = encode.encode_image(image_bytes(pixels, 'PNG', mode), encoding)
    example = image_codec.make_example(encoded, label, str(label), f'{label}/{i}.png')
    writers[i % shards].write(example.SerializeToString())
  for writer in writers:
    writer.close()
  return paths


def random_images(n, shape):
  return [(RNG.integers(0, 256, size=shape, dtype=np.uint8), i % 3) for i in range(n)]


def image_spec(height, width, channels, encoding, uniform):
  return ImageSpec(height, width, channels, ['0', '1', '2'], encoding, uniform)
