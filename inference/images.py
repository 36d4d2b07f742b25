"""Image files → the bytes `predict_image_bytes` is sent: what a serving client sends, upright.

ImageExampleGen stores every image upright (its EXIF orientation applied) and BMP, GIF, TIFF
and WebP files as PNG (components/image_example_gen/encode.py); `predict_image_bytes` decodes
JPEG/PNG bytes as they are and reads no orientation (docs/serving.md). So a JPEG or PNG without
an orientation is sent as it is (the file's own bytes), and anything else, an EXIF-turned file
or another format, is decoded, turned upright and sent as PNG (lossless: the pixels PIL
decoded, exactly). The rules are contracts/image_files.py, shared with the component.
"""

import io
from typing import NamedTuple, Tuple

from contracts.image_files import (
  CONVERTED_TO_PNG,
  KEPT_AS_IS,
  NOT_READABLE,
  normalised_mode,
  opened,
)

_READ = tuple(KEPT_AS_IS) + CONVERTED_TO_PNG  # MPO is read as the JPEG it starts with


class Prepared(NamedTuple):
  data: bytes  # JPEG or PNG bytes, upright
  turned_upright: bool  # its EXIF orientation was applied
  converted: bool  # re-encoded as PNG (another format or mode, or turned)
  size: Tuple[int, int]  # (width, height), upright


def prepare(data: bytes) -> Prepared:
  """The bytes to send for an image file's `data`; decodes it fully, so that a corrupt file
  fails here. Raises ValueError (a one-line reason) for what is not a readable image."""
  import PIL.Image
  import PIL.ImageOps

  try:
    image, image_format, turn = opened(data)
    image.load()
    if image_format not in _READ:
      raise ValueError(f'unsupported image format {image_format}')
    if turn == 1 and image.mode in KEPT_AS_IS.get(image_format, ()):
      return Prepared(data, False, False, image.size)
    if turn != 1:
      image = PIL.ImageOps.exif_transpose(image)
    buffer = io.BytesIO()
    normalised_mode(image).save(buffer, format='PNG')
  except PIL.UnidentifiedImageError:
    raise ValueError(NOT_READABLE) from None
  except ValueError:
    raise
  except Exception as e:  # PIL raises many unrelated types for bad files
    raise ValueError(f'cannot decode image: {str(e).splitlines()[0] if str(e) else e!r}') from None
  return Prepared(buffer.getvalue(), turn != 1, True, image.size)
