"""Image files → record payloads: decoded once to prove they decode, turned upright by their EXIF
orientation, kept as JPEG/PNG bytes or turned into raw pixels, optionally downscaled once
(max_side) so that the Trainer does not decode camera-size images every epoch
(contracts/image_record.py has the record layout)."""

import functools
import io
from typing import NamedTuple, Tuple
import zlib

import numpy as np
import PIL.Image
import PIL.ImageOps

from contracts.image_files import (
  CHANNELS,
  CONVERTED_TO_PNG,
  EMPTY,
  KEPT_AS_IS,
  NOT_READABLE,
  SIDES_SWAPPED,
  normalised_mode,
  opened,
)
from contracts.image_record import ENCODED, RAW, EncodedImage

DOWNSCALED_JPEG_QUALITY = 90  # also for JPEGs turned upright: a JPEG re-encoded stays a JPEG
# A JPEG kept as it is is decoded at 1/8 scale, but at least this size a side (a 224 px photo at
# 1/8 is 28): below it the 8x8 cosines of near_hashes reach the decoded pixels' own grain
# (bench/near_duplicates.py, issue 60: 32-64 px tiles decoded at 16-31 px against a lossless PNG
# of them, 0.82 within 4 bits; at 28 or more, 1.00).
DRAFT_SIDE = 28
NEAR_SIDE = 64  # near_hashes averages larger images down to at most this side first (cost)


class Stored(NamedTuple):
  """An image ready to be written, whether its EXIF orientation turned it upright, and its
  content fingerprint and perceptual hashes, as loaded and mirrored (components/duplicates.py
  groups by them)."""

  image: EncodedImage
  turned_upright: bool
  content: int = 0
  near: Tuple[int, int] = (0, 0)


def content_hash(image: PIL.Image.Image) -> int:
  """64 bits of the decoded pixels: their CRC-32 (~30 µs for 224x224x3), and the mode and size's.
  A JPEG kept as it is was decoded at 1/8 scale (encode_file): equal files still hash equal, and a
  lossless re-save in another format is caught as a near-duplicate (near_hashes: 0-2 bits apart)."""
  shape = f'{image.mode} {image.width}x{image.height}'.encode()
  return (zlib.crc32(image.tobytes()) << 32) | zlib.crc32(shape)


@functools.lru_cache(maxsize=None)
def _cosines(n: int) -> np.ndarray:
  """(8, n): the 8 lowest DCT-II cosines sampled at n pixel centres."""
  x = np.arange(n)
  return np.cos(np.pi * (2 * x[None, :] + 1) * np.arange(8)[:, None] / (2 * n)).astype(np.float32)


@functools.lru_cache(maxsize=None)
def _grey_cosines(width: int, channels: int) -> np.ndarray:
  """(width * channels, 8): a row of pixels (RGB interleaved) to its grey level's 8 cosine
  coefficients, the ITU-R 601 luma weights folded in (no grey image to make)."""
  cosines = _cosines(width).T
  if channels == 1:
    return cosines
  luma = np.array([0.299, 0.587, 0.114], dtype=np.float32)
  return (cosines[:, None, :] * luma[None, :, None]).reshape(width * 3, 8)


# The 8x8 coefficients' signs as they are and in the image's left-right mirror, which negates
# the odd horizontal cosines' (coefficient [v, u] is flat index 8v + u).
_AS_IS_AND_MIRRORED = np.stack([np.ones(64), np.tile([1, -1], 32)]).astype(np.float32)


def near_hashes(image: PIL.Image.Image) -> Tuple[int, int]:
  """Two 64-bit DCT hashes (pHash): of the image as loaded and of its left-right mirror
  (components/duplicates.py checks both, so a mirrored copy is near its original). The image is
  averaged over 2x2, 4x4, … blocks until its longer side is at most NEAR_SIDE px, its grey levels
  projected on the 8x8 lowest cosines of its own width and height; one bit per coefficient, set
  when above their median (so 32 bits are set and distances are even). The mirror's
  coefficients are the same with the odd horizontal ones negated (no second projection). The
  cosines are sampled at the image's own size instead of the image being resampled to a fixed
  grid, and the blocks are powers of two like JPEG's 1/2–1/8-scale decoding: a JPEG decoded at
  1/8 scale (8x8-block means) and the same pixels at full size project alike (a lossless PNG of
  a JPEG: 0–2 bits apart). Resizing, re-encoding, mirroring and brightness change few bits, crops
  of a few % more (bench/near_duplicates.py). ~19 µs for a 1/8-drafted 224x224 JPEG (28x28),
  ~90 µs at full size on quiet cores before the mirror (which adds a 2x64 median and compare),
  36 / 141 µs with it on cores shared with four other sessions (docs/benchmarks.md).

  Both are kept, not the smaller of the two: where an image's two hashes are close in value, an
  edit or a mirror can flip which is smaller, and the copy's kept hash is then its mirror's."""
  if image.mode not in ('L', 'RGB'):
    image = normalised_mode(image)
    if image.mode not in ('L', 'RGB'):  # LA, RGBA: alpha dropped
      image = image.convert('RGB' if image.mode == 'RGBA' else 'L')
  factor = 1
  while max(image.width, image.height) > NEAR_SIDE * factor:
    factor *= 2
  if factor > 1:
    image = image.reduce(factor)
  width, height = image.size
  channels = 1 if image.mode == 'L' else 3
  pixels = np.frombuffer(image.tobytes(), np.uint8).reshape(height, width * channels)
  low = _cosines(height) @ pixels.astype(np.float32) @ _grey_cosines(width, channels)
  both = low.reshape(1, 64) * _AS_IS_AND_MIRRORED
  middle = np.partition(both, (31, 32), axis=1)
  bits = both > (middle[:, 31:32] + middle[:, 32:33]) / 2
  as_loaded, mirrored = np.packbits(bits, axis=1).view('>u8').ravel().tolist()
  return as_loaded, mirrored


def _scaled_size(width: int, height: int, max_side: int):
  """(width, height) with the longer side at most max_side, aspect kept (0: unchanged)."""
  longer = max(width, height)
  if not max_side or longer <= max_side:
    return width, height
  return max(1, round(width * max_side / longer)), max(1, round(height * max_side / longer))


def encode_image(data: bytes, encoding: str = ENCODED, max_side: int = 0) -> EncodedImage:
  """The payload of `encode_file`."""
  return encode_file(data, encoding, max_side).image


def encode_file(
  data: bytes, encoding: str = ENCODED, max_side: int = 0, fingerprints: bool = True
) -> Stored:
  """Decodes `data` fully (so corrupt files fail here) and returns the payload, with the
  image's content_hash and near_hashes unless `fingerprints` is False (then 0).

  An image with an EXIF orientation other than 1 is stored upright (ImageOps.exif_transpose),
  with its upright size: a JPEG re-encoded as JPEG at quality DOWNSCALED_JPEG_QUALITY, anything
  else as PNG; without one the bytes are kept as they are. BMP, GIF, TIFF and WebP files are
  stored as PNG (CONVERTED_TO_PNG).

  max_side: images whose longer side is above it are stored downscaled to it (aspect kept;
  JPEG stays JPEG at quality DOWNSCALED_JPEG_QUALITY, anything else becomes PNG); 0 keeps sizes.

  Raises:
    ValueError: the bytes are not a readable image of a format above.
  """
  if not data:  # said here: the clause below would prefix it again
    raise ValueError(EMPTY)
  try:
    image, image_format, turn = opened(data)
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
      and image.mode in KEPT_AS_IS['JPEG']
      and turn == 1
    ):
      # The bytes are kept as they are; decoding only proves they decode. At 1/8 scale libjpeg
      # still reads every coefficient but skips most of the inverse DCT: 125 instead of
      # 169 µs for a 224x224 photo (bench/example_gen.py's images), truncation still caught.
      # Never below DRAFT_SIDE a side: the fingerprints need pixels (an 8x8 JPEG at 1/8 is one,
      # a 48 px tile 6).
      image.draft(
        image.mode,
        (max(width // 8, min(width, DRAFT_SIDE)), max(height // 8, min(height, DRAFT_SIDE))),
      )
    image.load()
    if turn != 1:
      image = PIL.ImageOps.exif_transpose(image)
    content, near = (content_hash(image), near_hashes(image)) if fingerprints else (0, (0, 0))
  except PIL.UnidentifiedImageError:  # its message names the in-memory buffer, not the file
    raise ValueError(NOT_READABLE) from None
  except Exception as e:  # PIL raises many unrelated types for bad files.
    raise ValueError(f'cannot decode image: {e}') from None
  if image_format not in KEPT_AS_IS and image_format not in CONVERTED_TO_PNG:
    raise ValueError(f'unsupported image format {image_format}')
  if turn in SIDES_SWAPPED:  # sizes upright from here on
    width, height, scaled = height, width, scaled[::-1]
  if turn != 1 or scaled != (width, height):
    data = b''  # the file's bytes no longer match: re-encoded below
  if scaled != (width, height):
    image = normalised_mode(image).resize(scaled, PIL.Image.LANCZOS)
    width, height = scaled
  if encoding == RAW:
    # Raw pixels keep 1 or 3 channels: the Trainer drops alpha anyway.
    image = normalised_mode(image)
    image = image.convert('L' if image.mode in ('L', 'LA') else 'RGB')
    pixels = EncodedImage(image.tobytes(), height, width, CHANNELS[image.mode])
    return Stored(pixels, turn != 1, content, near)
  if data and image.mode in KEPT_AS_IS.get(image_format, ()):
    return Stored(EncodedImage(data, height, width, CHANNELS[image.mode]), False, content, near)
  image = normalised_mode(image)
  buffer = io.BytesIO()
  if image_format == 'JPEG' and image.mode in KEPT_AS_IS['JPEG'] and not data:
    image.save(buffer, format='JPEG', quality=DOWNSCALED_JPEG_QUALITY)
  else:
    image.save(buffer, format='PNG')
  encoded = EncodedImage(buffer.getvalue(), height, width, CHANNELS[image.mode])
  return Stored(encoded, turn != 1, content, near)
