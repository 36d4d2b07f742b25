"""The embedded data of a run without --data: scikit-learn's digits as a class-per-folder tree."""

import os

from cli.inputs import data_layout, image_folders
import config as cfg
from utils import atomic

DIGITS = 1797  # scikit-learn's digits: the images of the tree


def source(local_dir: str) -> data_layout.DataSource:
  """The digits a run in `local_dir` without --data reads, as resolve_data finds them once
  written (write_digits(source.root)): known without writing them."""
  root = os.path.abspath(os.path.join(local_dir, 'default_data', 'digits'))
  return data_layout.DataSource(cfg.IMAGES, root, image_folders.CLASS_FOLDERS, images=DIGITS)


def write_digits(dest: str) -> str:
  """scikit-learn's 1,797 labelled 8×8 digits as <dest>/<digit>/<index>.png (grayscale).

  Written once, into a temporary folder renamed at the end, so an interrupted first run
  never leaves a partial tree (and file mtimes stay put, which keeps ExampleGen cached).
  """
  if os.path.isdir(dest):
    return dest
  import numpy as np
  import PIL.Image
  from sklearn.datasets import load_digits

  digits = load_digits()
  with atomic.folder_atomically(dest) as staging:
    for index, (pixels, target) in enumerate(zip(digits.images, digits.target)):
      class_dir = os.path.join(staging, str(target))
      os.makedirs(class_dir, exist_ok=True)
      gray = np.round(pixels * (255.0 / 16.0)).astype(np.uint8)  # 0..16 → 0..255
      PIL.Image.fromarray(gray, 'L').save(os.path.join(class_dir, f'{index:04d}.png'))
  return dest
