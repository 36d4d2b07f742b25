"""Encoding of single images into the project's tf.train.Example layout."""

import io

import numpy as np
import PIL.Image
import pytest
import tensorflow as tf

from components.image_example_gen import encode
from contracts import image_record
from tests.conftest import image_bytes

RNG = np.random.default_rng(0)


def _decoded(payload: bytes) -> np.ndarray:
  return tf.io.decode_image(payload, expand_animations=False).numpy()


@pytest.mark.parametrize('mode,channels', [('L', 1), ('LA', 2), ('RGB', 3), ('RGBA', 4)])
def test_png_kept_as_is_with_its_channels(mode, channels):
  pixels = RNG.integers(0, 256, size=(5, 7, channels) if channels > 1 else (5, 7), dtype=np.uint8)
  data = image_bytes(pixels, 'PNG', mode)
  encoded = encode.encode_image(data)
  assert encoded.payload == data
  assert (encoded.height, encoded.width, encoded.channels) == (5, 7, channels)


def test_palette_png_is_converted_and_decodes_to_the_same_pixels():
  rgb = RNG.integers(0, 4, size=(6, 6, 3), dtype=np.uint8) * 60
  image = PIL.Image.fromarray(rgb, 'RGB').convert('P')
  buffer = io.BytesIO()
  image.save(buffer, format='PNG')
  encoded = encode.encode_image(buffer.getvalue())
  assert encoded.channels == 3
  np.testing.assert_array_equal(_decoded(encoded.payload), np.asarray(image.convert('RGB')))


def test_cmyk_jpeg_is_stored_as_rgb_png():
  cmyk = PIL.Image.new('CMYK', (9, 4), (0, 255, 255, 0))  # red
  buffer = io.BytesIO()
  cmyk.save(buffer, format='JPEG')
  encoded = encode.encode_image(buffer.getvalue())
  assert (encoded.height, encoded.width, encoded.channels) == (4, 9, 3)
  decoded = _decoded(encoded.payload)
  assert decoded.shape == (4, 9, 3) and decoded[..., 0].min() > 200 and decoded[..., 2].max() < 60


def test_sixteen_bit_grayscale_png_scales_to_8_bits():
  wide = np.arange(12, dtype=np.uint16).reshape(3, 4) * 5000
  data = image_bytes(wide, 'PNG', 'I;16')
  encoded = encode.encode_image(data)
  assert encoded.channels == 1
  assert _decoded(encoded.payload).max() >= 250


def test_raw_encoding_stores_pixels_row_major():
  rgba = RNG.integers(0, 256, size=(3, 5, 4), dtype=np.uint8)
  encoded = encode.encode_image(image_bytes(rgba, 'PNG', 'RGBA'), image_record.RAW)
  assert (encoded.height, encoded.width, encoded.channels) == (3, 5, 3)
  pixels = np.frombuffer(encoded.payload, np.uint8).reshape(3, 5, 3)
  np.testing.assert_array_equal(pixels, rgba[..., :3])


@pytest.mark.parametrize(
  'data,reason',
  [
    (b'', 'the file is empty (0 bytes)'),
    (b'hello', 'not a JPEG or PNG file'),
    (b'\xff\xd8\xff\xe0' + b'\x00' * 50, 'not a JPEG or PNG file'),
  ],
)
def test_undecodable_bytes_raise_value_error_saying_why(data, reason):
  with pytest.raises(ValueError) as raised:
    encode.encode_image(data)
  assert str(raised.value) == f'cannot decode image: {reason}'  # no '<_io.BytesIO object …>'


def test_truncated_png_is_rejected():
  data = image_bytes(RNG.integers(0, 256, size=(64, 64, 3), dtype=np.uint8), 'PNG')
  with pytest.raises(ValueError):
    encode.encode_image(data[: len(data) // 2])


@pytest.mark.parametrize('mode,channels', [('RGB', 3), ('L', 1)])
def test_a_jpeg_kept_as_is_is_checked_at_reduced_scale_but_fully_read(mode, channels):
  pixels = RNG.integers(0, 256, size=(96, 80, channels), dtype=np.uint8)
  data = image_bytes(pixels if channels == 3 else pixels[..., 0], 'JPEG', mode)
  encoded = encode.encode_image(data)
  assert (encoded.payload, encoded.height, encoded.width, encoded.channels) == (
    data,
    96,
    80,
    channels,
  )  # the original size, not the 1/8 decode's
  with pytest.raises(ValueError, match='cannot decode'):
    encode.encode_image(data[: len(data) // 2])  # truncated: caught at 1/8 scale too
  raw = encode.encode_image(data, image_record.RAW)  # raw pixels: decoded at full size
  assert (raw.height, raw.width, len(raw.payload)) == (96, 80, 96 * 80 * channels)


def test_example_round_trips_through_parse_example():
  encoded = encode.encode_image(image_bytes(np.zeros((2, 3), np.uint8), 'PNG', 'L'))
  serialized = image_record.make_example(encoded, 7, 'seven', '7/a.png').SerializeToString()
  spec = dict(
    image_record.parse_spec(),
    label_name=tf.io.FixedLenFeature([], tf.string),
    image_id=tf.io.FixedLenFeature([], tf.string),
    schema_version=tf.io.FixedLenFeature([], tf.int64),
  )
  parsed = tf.io.parse_example([serialized], spec)
  assert parsed['label'].numpy().tolist() == [7]
  assert parsed['label_name'].numpy().tolist() == [b'seven']
  assert parsed['image_id'].numpy().tolist() == [b'7/a.png']
  assert parsed['schema_version'].numpy().tolist() == [image_record.SCHEMA_VERSION]
  assert [parsed[k].numpy()[0] for k in ('height', 'width', 'channels')] == [2, 3, 1]
  assert parsed['image'].numpy()[0] == encoded.payload


def _photo(width, height, mode='RGB', image_format='JPEG'):
  gradient = np.linspace(0, 255, width * height * 3).reshape(height, width, 3).astype(np.uint8)
  image = PIL.Image.fromarray(gradient, 'RGB').convert(mode)
  buffer = io.BytesIO()
  image.save(buffer, format=image_format, quality=95)
  return buffer.getvalue(), np.asarray(image.convert('RGB'), dtype=np.float64)


@pytest.mark.parametrize(
  'encoding, image_format, stored',
  [
    (image_record.ENCODED, 'JPEG', b'\xff\xd8'),
    (image_record.ENCODED, 'PNG', b'\x89PNG'),
    (image_record.RAW, 'JPEG', None),
  ],
)
def test_max_side_stores_a_large_image_downscaled_once_with_its_aspect(
  encoding, image_format, stored
):
  data, pixels = _photo(400, 300, image_format=image_format)
  encoded = encode.encode_image(data, encoding, max_side=100)
  assert (encoded.height, encoded.width, encoded.channels) == (75, 100, 3)
  if stored:
    assert encoded.payload.startswith(stored)
    decoded = _decoded(encoded.payload)
  else:
    decoded = np.frombuffer(encoded.payload, np.uint8).reshape(75, 100, 3)
  expected = np.asarray(
    PIL.Image.fromarray(pixels.astype(np.uint8)).resize((100, 75), PIL.Image.LANCZOS)
  )
  assert np.abs(decoded.astype(np.float64) - expected).mean() < 4  # the same picture, smaller


def test_max_side_keeps_small_images_and_their_bytes():
  data, _ = _photo(80, 60)
  encoded = encode.encode_image(data, image_record.ENCODED, max_side=100)
  assert encoded.payload == data and (encoded.height, encoded.width) == (60, 80)


def test_max_side_still_rejects_a_truncated_jpeg():
  data, _ = _photo(400, 300)
  with pytest.raises(ValueError, match='cannot decode image'):
    encode.encode_image(data[: len(data) // 2], image_record.ENCODED, max_side=100)
