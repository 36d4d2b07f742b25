"""What an image file may be and how it is made fit for the records and for every serving
signature: ImageExampleGen (components/image_example_gen/encode.py) stores images by these rules
and `pipeline.py predict` (inference/images.py) sends them by the same ones, so a served image
is what a training record would hold.
"""

IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.webp', '.bmp', '.gif', '.tif', '.tiff')


def is_image(path: str) -> bool:
  """Whether a file's name is one of an image format read (IMAGE_EXTENSIONS, any case)."""
  return path.lower().endswith(IMAGE_EXTENSIONS)


NOT_AN_IMAGE = (  # why a file that is_image rejects is skipped
  f'not an image file (expected {", ".join(IMAGE_EXTENSIONS[:-1])} or {IMAGE_EXTENSIONS[-1]})'
)


# Modes TensorFlow's decode_jpeg / decode_png read as they are; anything else (CMYK, palette,
# 32-bit, ...) is converted once and sent or stored as PNG.
KEPT_AS_IS = {'JPEG': ('L', 'RGB'), 'PNG': ('L', 'LA', 'RGB', 'RGBA')}
# Formats PIL decodes that become PNG (lossless), so that records and every serving signature
# only ever see JPEG/PNG: the first frame of an animated GIF or WebP, the first page of a TIFF.
CONVERTED_TO_PNG = ('BMP', 'GIF', 'TIFF', 'WEBP')
CHANNELS = {'L': 1, 'LA': 2, 'RGB': 3, 'RGBA': 4}
_EXIF_ORIENTATION = 0x0112
TURNED = range(2, 9)  # EXIF orientations other than 1 (upright): 2-4 flip or turn 180°, 5-8 also
SIDES_SWAPPED = range(5, 9)  # swap the sides


NOT_READABLE = 'cannot decode image: not a JPEG, PNG, WebP, BMP, GIF or TIFF file'
EMPTY = 'cannot decode image: the file is empty (0 bytes)'


def opened(data: bytes) -> tuple:
  """(PIL image, its format, its EXIF orientation) of an image file's bytes, pixels not yet
  decoded. An MPO (a JPEG with more pictures after it: a phone's Ultra HDR gain map, a stereo
  pair) is the JPEG it starts with, as TensorFlow's decoders read it. Raises ValueError for an
  empty file, PIL's own errors for what PIL cannot open."""
  import io

  import PIL.Image

  if not data:
    raise ValueError(EMPTY)
  image = PIL.Image.open(io.BytesIO(data))
  return image, 'JPEG' if image.format == 'MPO' else image.format, orientation(image)


def orientation(image) -> int:
  """The EXIF orientation (1-8) of an opened PIL image; 1 when it has none or a bad one.

  For a JPEG, TIFF or WebP it is read from the header PIL parsed on opening (no pixel is
  decoded); a PNG keeps its EXIF chunk anywhere in the file, so PIL reads the file for it.
  """
  try:
    value = image.getexif().get(_EXIF_ORIENTATION, 1)
  except Exception:  # a damaged EXIF block: the pixels may still be fine
    return 1
  return value if isinstance(value, int) and value in TURNED else 1


def normalised_mode(image):
  """A PIL image in the nearest of L, LA, RGB, RGBA (wide grayscale scaled down to 8 bits)."""
  import numpy as np
  import PIL.Image

  if image.mode in CHANNELS:
    return image
  has_alpha = 'A' in image.getbands() or 'transparency' in image.info
  if image.mode in ('1', 'I', 'I;16', 'I;16B', 'I;16L', 'F'):
    if image.mode != '1':
      pixels = np.asarray(image, dtype=np.float64)
      top = pixels.max() or 1.0
      return PIL.Image.fromarray((pixels * (255.0 / top)).round().astype(np.uint8), 'L')
    return image.convert('L')
  return image.convert('RGBA' if has_alpha else 'RGB')
