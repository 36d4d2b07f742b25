"""inference/images.py: the bytes predict sends for an image file decode to the pixels
ImageExampleGen stores for it (upright, JPEG/PNG only)."""

import io

import numpy as np
import PIL.Image
import pytest

from components.image_example_gen import encode
from contracts.image_record import RAW
from inference import images


def _file(image: PIL.Image.Image, fmt: str, **save) -> bytes:
  buffer = io.BytesIO()
  image.save(buffer, fmt, **save)
  return buffer.getvalue()


def _pixels(data: bytes) -> np.ndarray:
  with PIL.Image.open(io.BytesIO(data)) as image:
    assert image.format in ('JPEG', 'PNG')  # what predict_image_bytes decodes
    return np.asarray(image.convert('RGB' if image.mode not in ('L',) else 'L'))


def _stored(data: bytes) -> np.ndarray:
  stored = encode.encode_file(data, RAW).image
  shape = (stored.height, stored.width, stored.channels)
  pixels = np.frombuffer(stored.payload, np.uint8).reshape(shape)
  return pixels[..., 0] if stored.channels == 1 else pixels


RGB = PIL.Image.fromarray(np.random.default_rng(0).integers(0, 255, (6, 9, 3), np.uint8))


@pytest.mark.parametrize(
  'fmt, mode',
  [
    ('PNG', 'RGB'),
    ('PNG', 'L'),
    ('BMP', 'RGB'),
    ('GIF', 'P'),
    ('TIFF', 'RGB'),
    ('WEBP', 'RGB'),
    ('PNG', 'I;16'),
  ],
)
def test_pixels_are_those_training_stores(fmt, mode):
  source = (
    RGB.convert(mode)
    if mode not in ('I;16',)
    else PIL.Image.fromarray((np.arange(54, dtype=np.uint16).reshape(6, 9) * 1000), 'I;16')
  )
  data = _file(source, fmt, **({'lossless': True} if fmt == 'WEBP' else {}))
  prepared = images.prepare(data)
  assert prepared.converted == (fmt not in ('PNG', 'JPEG') or mode not in ('RGB', 'L'))
  if not prepared.converted:
    assert prepared.data == data  # the file's own bytes, as a client sends them
  np.testing.assert_array_equal(_pixels(prepared.data), _stored(data))


def test_an_exif_turned_photo_is_sent_upright_and_lossless():
  exif = PIL.Image.Exif()
  exif[0x0112] = 6  # turn a quarter clockwise to view
  data = _file(RGB, 'JPEG', exif=exif.tobytes(), quality=95)
  prepared = images.prepare(data)
  assert prepared.turned_upright and prepared.converted
  with PIL.Image.open(io.BytesIO(data)) as decoded:
    expected = np.rot90(np.asarray(decoded), -1)  # the same JPEG pixels, turned
  np.testing.assert_array_equal(_pixels(prepared.data), expected)
  assert _pixels(prepared.data).shape[:2] == (9, 6)


@pytest.mark.parametrize(
  'data, reason',
  [
    (b'', 'empty'),
    (b'not an image at all', 'not a JPEG, PNG'),
    (b'\xff\xd8\xff\xe0' + b'\x00' * 100, 'cannot decode image'),
  ],
)
def test_unreadable_files_give_a_reason(data, reason):
  with pytest.raises(ValueError, match=reason):
    images.prepare(data)


def test_a_truncated_png_is_unreadable():
  data = _file(RGB, 'PNG')
  with pytest.raises(ValueError, match='cannot decode image'):
    images.prepare(data[: len(data) // 2])
