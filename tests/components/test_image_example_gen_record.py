"""Encoding of single images into the project's tf.train.Example layout."""

import io

import numpy as np
import PIL.Image
import pytest
import tensorflow as tf

from components.image_example_gen import encode
from contracts import image_record
from records import image_codec
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
    (b'hello', 'not a JPEG, PNG, WebP, BMP, GIF or TIFF file'),
    (b'\xff\xd8\xff\xe0' + b'\x00' * 50, 'not a JPEG, PNG, WebP, BMP, GIF or TIFF file'),
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
  serialized = image_codec.make_example(encoded, 7, 'seven', '7/a.png').SerializeToString()
  spec = dict(
    image_codec.parse_spec(),
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


def _with_orientation(pixels: np.ndarray, orientation: int, image_format: str = 'JPEG') -> bytes:
  """`pixels` saved with an EXIF orientation tag."""
  exif = PIL.Image.Exif()
  exif[0x0112] = orientation
  buffer = io.BytesIO()
  PIL.Image.fromarray(pixels).save(buffer, image_format, exif=exif.tobytes(), quality=95)
  return buffer.getvalue()


# A portrait photo, 40 high and 24 wide, as a phone stores it with orientation 6: its sensor
# rows turned a quarter counter-clockwise (24 high, 40 wide); viewers turn it back clockwise.
UPRIGHT = np.linspace(0, 255, 40 * 24 * 3).reshape(40, 24, 3).astype(np.uint8)
SIDEWAYS = np.ascontiguousarray(np.rot90(UPRIGHT, 1))


@pytest.mark.parametrize('image_format', ['JPEG', 'PNG'])
def test_an_exif_orientation_6_photo_is_stored_upright_with_its_upright_size(image_format):
  data = _with_orientation(SIDEWAYS, 6, image_format)
  stored = encode.encode_file(data)
  assert stored.turned_upright is True
  image = stored.image
  assert (image.height, image.width, image.channels) == (40, 24, 3)  # not the file's 24x40
  assert image.payload != data and image.payload.startswith(
    b'\xff\xd8' if image_format == 'JPEG' else b'\x89PNG'
  )  # re-encoded, in its own format
  decoded = _decoded(image.payload)
  assert decoded.shape == (40, 24, 3) and np.abs(decoded.astype(float) - UPRIGHT).mean() < 2
  assert PIL.Image.open(io.BytesIO(image.payload)).getexif().get(0x0112) is None  # not twice
  raw = encode.encode_file(data, image_record.RAW)
  assert raw.turned_upright and (raw.image.height, raw.image.width) == (40, 24)
  pixels = np.frombuffer(raw.image.payload, np.uint8).reshape(40, 24, 3)
  assert np.abs(pixels.astype(float) - UPRIGHT).mean() < 2


@pytest.mark.parametrize(
  'orientation,expected', [(3, np.rot90(SIDEWAYS, 2)), (2, SIDEWAYS[:, ::-1])]
)
def test_a_half_turn_or_a_mirror_keeps_the_size_and_is_undone(orientation, expected):
  stored = encode.encode_file(_with_orientation(SIDEWAYS, orientation, 'PNG'))
  assert stored.turned_upright and (stored.image.height, stored.image.width) == (24, 40)
  np.testing.assert_array_equal(_decoded(stored.image.payload), expected)


def test_max_side_downscales_the_upright_photo():
  stored = encode.encode_file(_with_orientation(SIDEWAYS, 6), image_record.ENCODED, max_side=20)
  assert stored.turned_upright and (stored.image.height, stored.image.width) == (20, 12)
  decoded = _decoded(stored.image.payload)
  expected = np.asarray(PIL.Image.fromarray(UPRIGHT).resize((12, 20), PIL.Image.LANCZOS))
  assert decoded.shape == (20, 12, 3) and np.abs(decoded.astype(float) - expected).mean() < 6


@pytest.mark.parametrize('encoding', image_record.ENCODINGS)
def test_an_orientation_1_or_bad_orientation_keeps_the_bytes_and_counts_nothing(encoding):
  for orientation in (1, 0, 9):
    data = _with_orientation(SIDEWAYS, orientation)
    stored = encode.encode_file(data, encoding)
    assert stored.turned_upright is False
    assert (stored.image.height, stored.image.width) == (24, 40)
    if encoding == image_record.ENCODED:
      assert stored.image.payload == data  # untouched, EXIF and all


def test_a_multi_picture_jpeg_is_a_jpeg_kept_as_is():
  # MPO: what PIL calls a JPEG with more pictures after it (phones' Ultra HDR gain maps).
  first = PIL.Image.fromarray(SIDEWAYS)
  buffer = io.BytesIO()
  first.save(buffer, 'MPO', save_all=True, append_images=[PIL.Image.new('L', (8, 8))])
  data = buffer.getvalue()
  assert PIL.Image.open(io.BytesIO(data)).format == 'MPO'
  stored = encode.encode_file(data)
  assert stored.image.payload == data and (stored.image.height, stored.image.width) == (24, 40)
  assert _decoded(data).shape == (24, 40, 3)  # what the Trainer's decoders read: the first


@pytest.mark.parametrize(
  'image_format,mode,options',
  [
    ('WEBP', 'RGB', {'lossless': True}),
    ('BMP', 'RGB', {}),
    ('BMP', 'L', {}),
    ('GIF', 'L', {}),
    ('TIFF', 'RGB', {}),
    ('TIFF', 'RGBA', {'compression': 'tiff_lzw'}),
  ],
)
def test_webp_bmp_gif_and_tiff_are_stored_as_png_with_the_same_pixels(image_format, mode, options):
  source = PIL.Image.fromarray(UPRIGHT).convert(mode)
  buffer = io.BytesIO()
  source.save(buffer, image_format, **options)
  stored = encode.encode_file(buffer.getvalue())
  assert stored.turned_upright is False
  image = stored.image
  assert image.payload.startswith(b'\x89PNG') and (image.height, image.width) == (40, 24)
  decoded = _decoded(image.payload)
  expected = np.asarray(source.convert({1: 'L', 3: 'RGB', 4: 'RGBA'}[image.channels]))
  np.testing.assert_array_equal(decoded.reshape(expected.shape), expected)
  raw = encode.encode_file(buffer.getvalue(), image_record.RAW).image
  assert (raw.height, raw.width) == (40, 24)


def test_only_the_first_frame_of_an_animated_gif_is_stored():
  frames = [PIL.Image.new('L', (6, 4), value) for value in (10, 200)]
  buffer = io.BytesIO()
  frames[0].save(buffer, 'GIF', save_all=True, append_images=frames[1:])
  decoded = _decoded(encode.encode_image(buffer.getvalue()).payload)
  assert decoded.shape[:2] == (4, 6) and int(decoded.max()) == 10
