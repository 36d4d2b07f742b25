"""Image files → record payloads: decoded once to prove they decode, kept as JPEG/PNG bytes
or turned into raw pixels, optionally downscaled once (max_side) so that the Trainer does not
decode camera-size images every epoch (contracts/image_record.py has the record layout)."""

import io

import numpy as np
import PIL.Image

from contracts.image_record import ENCODED, RAW, EncodedImage

# Modes TensorFlow's decode_jpeg / decode_png read as they are; anything else
# (CMYK, palette, 32-bit, ...) is converted once here and stored as PNG.
_KEPT_AS_IS = {'JPEG': ('L', 'RGB'), 'PNG': ('L', 'LA', 'RGB', 'RGBA')}
_CHANNELS = {'L': 1, 'LA': 2, 'RGB': 3, 'RGBA': 4}
DOWNSCALED_JPEG_QUALITY = 90


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


def encode_image(data: bytes, encoding: str = ENCODED, max_side: int = 0) -> EncodedImage:
  """Decodes `data` fully (so corrupt files fail here) and returns the payload.

  max_side: images whose longer side is above it are stored downscaled to it (aspect kept;
  JPEG stays JPEG at quality DOWNSCALED_JPEG_QUALITY, anything else becomes PNG); 0 keeps sizes.

  Raises:
    ValueError: the bytes are not a readable JPEG or PNG image.
  """
  if not data:
    raise ValueError('cannot decode image: the file is empty (0 bytes)')
  try:
    image = PIL.Image.open(io.BytesIO(data))
    image_format = image.format
    width, height = image.size
    scaled = _scaled_size(width, height, max_side)
    if scaled != (width, height) and image_format == 'JPEG':
      # libjpeg scales by 1/2, 1/4 or 1/8 while decoding (DCT domain): the largest such size
      # still at least `scaled` is decoded, then resized and re-encoded: 1600x1200 → 300x225
      # (decoded at 400x300) in ~12 ms per 2-MP photo on one core here.
      image.draft(image.mode, scaled)
    elif encoding == ENCODED and image_format == 'JPEG' and image.mode in _KEPT_AS_IS['JPEG']:
      # The bytes are kept as they are; decoding only proves they decode. At 1/8 scale libjpeg
      # still reads every coefficient but skips most of the inverse DCT: 125 instead of
      # 169 µs for a 224x224 photo (bench/example_gen.py's images), truncation still caught.
      image.draft(image.mode, (max(1, width // 8), max(1, height // 8)))
    image.load()
  except PIL.UnidentifiedImageError:  # its message names the in-memory buffer, not the file
    raise ValueError('cannot decode image: not a JPEG or PNG file') from None
  except Exception as e:  # PIL raises many unrelated types for bad files.
    raise ValueError(f'cannot decode image: {e}') from None
  if image_format not in _KEPT_AS_IS:
    raise ValueError(f'unsupported image format {image_format}')
  if scaled != (width, height):
    image = _normalised_mode(image).resize(scaled, PIL.Image.LANCZOS)
    width, height = scaled
    data = b''  # the file's bytes no longer match: re-encoded below
    if encoding == ENCODED and image_format == 'JPEG' and image.mode in _KEPT_AS_IS['JPEG']:
      buffer = io.BytesIO()
      image.save(buffer, format='JPEG', quality=DOWNSCALED_JPEG_QUALITY)
      return EncodedImage(buffer.getvalue(), height, width, _CHANNELS[image.mode])
  if encoding == RAW:
    # Raw pixels keep 1 or 3 channels: the Trainer drops alpha anyway.
    image = _normalised_mode(image)
    image = image.convert('L' if image.mode in ('L', 'LA') else 'RGB')
    return EncodedImage(image.tobytes(), height, width, _CHANNELS[image.mode])
  if data and image.mode in _KEPT_AS_IS[image_format]:
    return EncodedImage(data, height, width, _CHANNELS[image.mode])
  image = _normalised_mode(image)
  buffer = io.BytesIO()
  image.save(buffer, format='PNG')
  return EncodedImage(buffer.getvalue(), height, width, _CHANNELS[image.mode])
