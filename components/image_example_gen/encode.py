"""Image files → record payloads: decoded once to prove they decode, turned upright by their EXIF
orientation, kept as JPEG/PNG bytes or turned into raw pixels, optionally downscaled once
(max_side) so that the Trainer does not decode camera-size images every epoch
(contracts/image_record.py has the record layout)."""

import io
from typing import NamedTuple

import numpy as np
import PIL.Image
import PIL.ImageOps

from contracts.image_record import ENCODED, RAW, EncodedImage

# Modes TensorFlow's decode_jpeg / decode_png read as they are; anything else
# (CMYK, palette, 32-bit, ...) is converted once here and stored as PNG.
_KEPT_AS_IS = {'JPEG': ('L', 'RGB'), 'PNG': ('L', 'LA', 'RGB', 'RGBA')}
# Formats PIL decodes that are stored as PNG (lossless), so that records and every serving
# signature only ever see JPEG/PNG: the first frame of an animated GIF or WebP, the first page
# of a multi-page TIFF.
CONVERTED_TO_PNG = ('BMP', 'GIF', 'TIFF', 'WEBP')
_CHANNELS = {'L': 1, 'LA': 2, 'RGB': 3, 'RGBA': 4}
DOWNSCALED_JPEG_QUALITY = 90  # also for JPEGs turned upright: a JPEG re-encoded stays a JPEG
_EXIF_ORIENTATION = 0x0112
# EXIF orientations other than 1 (upright): 2-4 flip or turn 180°, 5-8 also swap the sides.
_TURNED = range(2, 9)
_SIDES_SWAPPED = range(5, 9)


class Stored(NamedTuple):
  """An image ready to be written, and whether its EXIF orientation turned it upright."""

  image: EncodedImage
  turned_upright: bool


def _scaled_size(width: int, height: int, max_side: int):
  """(width, height) with the longer side at most max_side, aspect kept (0: unchanged)."""
  longer = max(width, height)
  if not max_side or longer <= max_side:
    return width, height
  return max(1, round(width * max_side / longer)), max(1, round(height * max_side / longer))


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


def orientation(image: PIL.Image.Image) -> int:
  """The EXIF orientation (1-8) of an opened image; 1 when it has none or a bad one.

  For a JPEG, TIFF or WebP it is read from the header PIL parsed on opening (no pixel is
  decoded); a PNG keeps its EXIF chunk anywhere in the file, so PIL reads the file for it.
  """
  try:
    value = image.getexif().get(_EXIF_ORIENTATION, 1)
  except Exception:  # a damaged EXIF block: the pixels may still be fine, decoded below
    return 1
  return value if isinstance(value, int) and value in _TURNED else 1


def encode_image(data: bytes, encoding: str = ENCODED, max_side: int = 0) -> EncodedImage:
  """The payload of `encode_file`."""
  return encode_file(data, encoding, max_side).image


def encode_file(data: bytes, encoding: str = ENCODED, max_side: int = 0) -> Stored:
  """Decodes `data` fully (so corrupt files fail here) and returns the payload.

  An image with an EXIF orientation other than 1 is stored upright (ImageOps.exif_transpose),
  with its upright size: a JPEG re-encoded as JPEG at quality DOWNSCALED_JPEG_QUALITY, anything
  else as PNG; without one the bytes are kept as they are. BMP, GIF, TIFF and WebP files are
  stored as PNG (CONVERTED_TO_PNG).

  max_side: images whose longer side is above it are stored downscaled to it (aspect kept;
  JPEG stays JPEG at quality DOWNSCALED_JPEG_QUALITY, anything else becomes PNG); 0 keeps sizes.

  Raises:
    ValueError: the bytes are not a readable image of a format above.
  """
  if not data:
    raise ValueError('cannot decode image: the file is empty (0 bytes)')
  try:
    image = PIL.Image.open(io.BytesIO(data))
    # MPO: a JPEG with more pictures after it (a phone's Ultra HDR gain map, a stereo pair);
    # TensorFlow's decoders read its first picture, as PIL does: a JPEG here.
    image_format = 'JPEG' if image.format == 'MPO' else image.format
    turn = orientation(image)
    width, height = image.size
    scaled = _scaled_size(width, height, max_side)
    if scaled != (width, height) and image_format == 'JPEG':
      # libjpeg scales by 1/2, 1/4 or 1/8 while decoding (DCT domain): the largest such size
      # still at least `scaled` is decoded, then resized and re-encoded: 1600x1200 → 300x225
      # (decoded at 400x300) in ~12 ms per 2-MP photo on one core here.
      image.draft(image.mode, scaled)
    elif (
      encoding == ENCODED
      and image_format == 'JPEG'
      and image.mode in _KEPT_AS_IS['JPEG']
      and turn == 1
    ):
      # The bytes are kept as they are; decoding only proves they decode. At 1/8 scale libjpeg
      # still reads every coefficient but skips most of the inverse DCT: 125 instead of
      # 169 µs for a 224x224 photo (bench/example_gen.py's images), truncation still caught.
      image.draft(image.mode, (max(1, width // 8), max(1, height // 8)))
    image.load()
    if turn != 1:
      image = PIL.ImageOps.exif_transpose(image)
  except PIL.UnidentifiedImageError:  # its message names the in-memory buffer, not the file
    raise ValueError('cannot decode image: not a JPEG, PNG, WebP, BMP, GIF or TIFF file') from None
  except Exception as e:  # PIL raises many unrelated types for bad files.
    raise ValueError(f'cannot decode image: {e}') from None
  if image_format not in _KEPT_AS_IS and image_format not in CONVERTED_TO_PNG:
    raise ValueError(f'unsupported image format {image_format}')
  if turn in _SIDES_SWAPPED:  # sizes upright from here on
    width, height, scaled = height, width, scaled[::-1]
  if turn != 1 or scaled != (width, height):
    data = b''  # the file's bytes no longer match: re-encoded below
  if scaled != (width, height):
    image = _normalised_mode(image).resize(scaled, PIL.Image.LANCZOS)
    width, height = scaled
  if encoding == RAW:
    # Raw pixels keep 1 or 3 channels: the Trainer drops alpha anyway.
    image = _normalised_mode(image)
    image = image.convert('L' if image.mode in ('L', 'LA') else 'RGB')
    return Stored(EncodedImage(image.tobytes(), height, width, _CHANNELS[image.mode]), turn != 1)
  if data and image.mode in _KEPT_AS_IS.get(image_format, ()):
    return Stored(EncodedImage(data, height, width, _CHANNELS[image.mode]), False)
  image = _normalised_mode(image)
  buffer = io.BytesIO()
  if image_format == 'JPEG' and image.mode in _KEPT_AS_IS['JPEG'] and not data:
    image.save(buffer, format='JPEG', quality=DOWNSCALED_JPEG_QUALITY)
  else:
    image.save(buffer, format='PNG')
  return Stored(EncodedImage(buffer.getvalue(), height, width, _CHANNELS[image.mode]), turn != 1)
