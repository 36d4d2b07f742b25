"""Shared fixtures: small real data sets written to temporary folders."""
import io
import os

import numpy as np
import PIL.Image
import pytest

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')


def write_digits_subset(dest: str, per_class: int) -> str:
  """The first `per_class` scikit-learn digits of each class as <dest>/<digit>/<i>.png."""
  from sklearn.datasets import load_digits
  digits = load_digits()
  seen = {}
  for index, (pixels, target) in enumerate(zip(digits.images, digits.target)):
    if seen.get(target, 0) >= per_class:
      continue
    seen[target] = seen.get(target, 0) + 1
    os.makedirs(os.path.join(dest, str(target)), exist_ok=True)
    gray = np.round(pixels * (255.0 / 16.0)).astype(np.uint8)
    PIL.Image.fromarray(gray, 'L').save(os.path.join(dest, str(target), f'{index:04d}.png'))
  return dest


def image_bytes(array: np.ndarray, fmt: str, mode: str = None) -> bytes:
  buffer = io.BytesIO()
  PIL.Image.fromarray(array, mode).save(buffer, format=fmt)
  return buffer.getvalue()


@pytest.fixture(scope='session')
def digits_subset(tmp_path_factory) -> str:
  """40 digits per class (400 images), shared by the tests that only read it."""
  return write_digits_subset(str(tmp_path_factory.mktemp('digits')), per_class=40)
