"""Image files → the bytes `predict_image_bytes` is sent: what a serving client sends, upright.

ImageExampleGen stores every image upright (its EXIF orientation applied) and BMP, GIF, TIFF
and WebP files as PNG (components/image_example_gen/encode.py); `predict_image_bytes` decodes
JPEG/PNG bytes as they are and reads no orientation (docs/serving.md). So a JPEG or PNG without
an orientation is sent as it is (the file's own bytes), and anything else, an EXIF-turned file
or another format, is decoded, turned upright and sent as PNG (lossless: the pixels PIL
decoded, exactly). tests/inference/test_images.py keeps the formats in step with the component.
"""

import io
from typing import NamedTuple

# What ImageExampleGen reads (components/image_example_gen/folder.py IMAGE_EXTENSIONS).
IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.webp', '.bmp', '.gif', '.tif', '.tiff')
NOT_AN_IMAGE = f'not an image file (expected {", ".join(IMAGE_EXTENSIONS)})'
_SENT_AS_IS = {'JPEG': ('L', 'RGB'), 'PNG': ('L', 'LA', 'RGB', 'RGBA')}
_READ = ('JPEG', 'MPO', 'PNG', 'BMP', 'GIF', 'TIFF', 'WEBP')
_EXIF_ORIENTATION = 0x0112


class Prepared(NamedTuple):
  data: bytes  # JPEG or PNG bytes, upright
  turned_upright: bool  # its EXIF orientation was applied
  converted: bool  # re-encoded as PNG (another format or mode, or turned)


def is_image(path: str) -> bool:
  return path.lower().endswith(IMAGE_EXTENSIONS)


def _orientation(image) -> int:
  try:
    value = image.getexif().get(_EXIF_ORIENTATION, 1)
  except Exception:  # a damaged EXIF block: ImageExampleGen keeps the pixels as they are too
    return 1
  return value if isinstance(value, int) and 2 <= value <= 8 else 1


def _eight_bit(image):
  """L, LA, RGB or RGBA, as ImageExampleGen stores other modes (wide grayscale scaled down)."""
  import numpy as np
  import PIL.Image

  if image.mode in ('L', 'LA', 'RGB', 'RGBA'):
    return image
  if image.mode in ('I', 'I;16', 'I;16B', 'I;16L', 'F'):
    pixels = np.asarray(image, dtype=np.float64)
    top = pixels.max() or 1.0
    return PIL.Image.fromarray((pixels * (255.0 / top)).round().astype(np.uint8), 'L')
  if image.mode == '1':
    return image.convert('L')
  has_alpha = 'A' in image.getbands() or 'transparency' in image.info
  return image.convert('RGBA' if has_alpha else 'RGB')


def prepare(data: bytes) -> Prepared:
  """The bytes to send for an image file's `data`; decodes it fully, so that a corrupt file
  fails here. Raises ValueError (a one-line reason) for what is not a readable image."""
  import PIL.Image
  import PIL.ImageOps

  if not data:
    raise ValueError('cannot decode image: the file is empty (0 bytes)')
  try:
    image = PIL.Image.open(io.BytesIO(data))
    image_format = 'JPEG' if image.format == 'MPO' else image.format
    turn = _orientation(image)
    image.load()
    if image_format not in _READ:
      raise ValueError(f'unsupported image format {image_format}')
    if turn == 1 and image.mode in _SENT_AS_IS.get(image_format, ()):
      return Prepared(data, False, False)
    if turn != 1:
      image = PIL.ImageOps.exif_transpose(image)
    buffer = io.BytesIO()
    _eight_bit(image).save(buffer, format='PNG')
  except PIL.UnidentifiedImageError:
    raise ValueError('cannot decode image: not a JPEG, PNG, WebP, BMP, GIF or TIFF file') from None
  except ValueError:
    raise
  except Exception as e:  # PIL raises many unrelated types for bad files
    raise ValueError(f'cannot decode image: {str(e).splitlines()[0] if str(e) else e!r}') from None
  return Prepared(buffer.getvalue(), turn != 1, True)
