"""The images of bench/near_duplicates.py and their edited copies: crops of the real photos
installed here, mosaics of them, the embedded digits, and the edits made to each (the
benchmark's docstring lists them)."""

import contextlib
import io
import os
import warnings

import numpy as np
import PIL.Image
import PIL.ImageEnhance

warnings.filterwarnings('ignore', category=DeprecationWarning)  # scipy.misc.face

SIDE = 224


def source_photos():
  """[(name, RGB image)] of the real photos installed here."""
  import sklearn.datasets

  folder = os.path.join(os.path.dirname(sklearn.datasets.__file__), 'images')
  photos = [
    (name, PIL.Image.open(os.path.join(folder, name)).convert('RGB'))
    for name in ('china.jpg', 'flower.jpg')
  ]
  with contextlib.suppress(Exception):
    import matplotlib.cbook

    path = matplotlib.cbook.get_sample_data('grace_hopper.jpg', asfileobj=False)
    photos.append(('grace_hopper.jpg', PIL.Image.open(path).convert('RGB')))
  with contextlib.suppress(Exception):
    from scipy import misc

    photos.append(('scipy face', PIL.Image.fromarray(misc.face())))
  return photos


def jpeg(image, quality=90) -> bytes:
  buffer = io.BytesIO()
  image.save(buffer, format='JPEG', quality=quality)
  return buffer.getvalue()


def png(image) -> bytes:
  buffer = io.BytesIO()
  image.save(buffer, format='PNG')
  return buffer.getvalue()


def decoded(data: bytes):
  image = PIL.Image.open(io.BytesIO(data))
  return image.convert('RGB' if image.mode != 'L' else 'L')


def photo_crops(photos, count: int, rng):
  """(JPEG bytes, class, crop window (class, left, top, side, mirrored)) of `count` crops."""
  out = []
  for i in range(count):
    klass = i % len(photos)
    photo = photos[klass][1]
    side = int(rng.integers(160, min(photo.size) + 1))
    left = int(rng.integers(0, photo.size[0] - side + 1))
    top = int(rng.integers(0, photo.size[1] - side + 1))
    image = photo.crop((left, top, left + side, top + side)).resize(
      (SIDE, SIDE), PIL.Image.BILINEAR
    )
    mirrored = bool(rng.random() < 0.5)
    if mirrored:
      image = image.transpose(PIL.Image.FLIP_LEFT_RIGHT)
    out.append((jpeg(image), klass, (klass, left, top, side, mirrored)))
  return out


def tile_crops(photos, count: int, rng, sides=(32, 64)):
  """As photo_crops, but small tiles at the photo's own resolution: squares of 32–64 px, half
  mirrored, JPEG q90 (issue 60: mirrored tiles' two hashes are often close in value)."""
  out = []
  for i in range(count):
    klass = i % len(photos)
    photo = photos[klass][1]
    side = int(rng.integers(sides[0], sides[1] + 1))
    left = int(rng.integers(0, photo.size[0] - side + 1))
    top = int(rng.integers(0, photo.size[1] - side + 1))
    image = photo.crop((left, top, left + side, top + side))
    mirrored = bool(rng.random() < 0.5)
    if mirrored:
      image = image.transpose(PIL.Image.FLIP_LEFT_RIGHT)
    out.append((jpeg(image), klass, (klass, left, top, side, mirrored)))
  return out


def large_crops(photos, count: int, rng):
  out = []
  for i in range(count):
    klass = i % len(photos)
    photo = photos[klass][1]
    width = int(photo.size[0] * rng.uniform(0.7, 1.0))
    height = int(photo.size[1] * rng.uniform(0.7, 1.0))
    left = int(rng.integers(0, photo.size[0] - width + 1))
    top = int(rng.integers(0, photo.size[1] - height + 1))
    out.append((jpeg(photo.crop((left, top, left + width, top + height))), klass, None))
  return out


def mosaic(photos, rng, tile: int, grid: int = 3):
  canvas = PIL.Image.new('RGB', (tile * grid, tile * grid))
  for a in range(grid):
    for b in range(grid):
      photo = photos[int(rng.integers(len(photos)))][1]
      side = int(rng.integers(24, 160))
      left = int(rng.integers(0, photo.size[0] - side))
      top = int(rng.integers(0, photo.size[1] - side))
      patch = photo.crop((left, top, left + side, top + side)).resize((tile, tile), PIL.Image.BOX)
      canvas.paste(patch, (tile * a, tile * b))
  return canvas


def digit_images():
  """([8x8 grayscale image], labels): the default data, as cli/inputs/default_data.write_digits
  writes it."""
  from sklearn.datasets import load_digits

  digits = load_digits()
  images = [
    PIL.Image.fromarray(np.round(pixels * (255.0 / 16.0)).astype(np.uint8), 'L')
    for pixels in digits.images
  ]
  return images, np.asarray(digits.target)


# -- edits ----------------------------------------------------------------------------------------


def _resized(image, scale):
  size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
  return image.resize(size, PIL.Image.LANCZOS)


def _cropped(image, share, rng):
  """`share` of the width and of the height cut off, split at random between the two sides."""
  cut_x, cut_y = round(image.width * share), round(image.height * share)
  left, top = int(rng.integers(0, cut_x + 1)), int(rng.integers(0, cut_y + 1))
  return image.crop((left, top, left + image.width - cut_x, top + image.height - cut_y))


def _mirrored(image):
  return image.transpose(PIL.Image.FLIP_LEFT_RIGHT)


def brightened(image, factor):
  return PIL.ImageEnhance.Brightness(image).enhance(factor)


def photo_edits(rng):
  """{edit: function(decoded RGB image) -> encoded bytes}."""
  return {
    'resize 50%': lambda im: jpeg(_resized(im, 0.5)),
    'resize 25%': lambda im: jpeg(_resized(im, 0.25)),
    'JPEG q90': lambda im: jpeg(im, 90),
    'JPEG q70': lambda im: jpeg(im, 70),
    'JPEG q50': lambda im: jpeg(im, 50),
    'lossless PNG': png,
    'crop 2%': lambda im: jpeg(_cropped(im, 0.02, rng)),
    'crop 5%': lambda im: jpeg(_cropped(im, 0.05, rng)),
    'crop 10%': lambda im: jpeg(_cropped(im, 0.10, rng)),
    'brightness +10%': lambda im: jpeg(brightened(im, 1.1)),
    'brightness -10%': lambda im: jpeg(brightened(im, 0.9)),
    'brightness +20%': lambda im: jpeg(brightened(im, 1.2)),
    'brightness -20%': lambda im: jpeg(brightened(im, 0.8)),
    'resize 50% + q70': lambda im: jpeg(_resized(im, 0.5), 70),
    'crop 2% + brightness -10% + resize 50%': lambda im: jpeg(
      _resized(brightened(_cropped(im, 0.02, rng), 0.9), 0.5)
    ),
    'crop 5% + brightness +10% + q70': lambda im: jpeg(
      brightened(_cropped(im, 0.05, rng), 1.1), 70
    ),
    'resize 50% + crop 5% as PNG': lambda im: png(_cropped(_resized(im, 0.5), 0.05, rng)),
    'mirrored': lambda im: jpeg(_mirrored(im)),
    'mirrored + resize 50% + q70': lambda im: jpeg(_resized(_mirrored(im), 0.5), 70),
  }


DIGIT_EDITS = {
  'upscaled 2x (PNG)': lambda im: png(im.resize((16, 16), PIL.Image.BICUBIC)),
  'upscaled 4x (PNG)': lambda im: png(im.resize((32, 32), PIL.Image.BICUBIC)),
  'upscaled 4x (JPEG q90)': lambda im: jpeg(im.resize((32, 32), PIL.Image.BICUBIC)),
  'JPEG q90 (8x8)': jpeg,
  'brightness +20% (PNG)': lambda im: png(brightened(im, 1.2)),
  'brightness -20% (PNG)': lambda im: png(brightened(im, 0.8)),
}
