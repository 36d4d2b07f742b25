"""Listing of a class-per-folder image tree: labels, image files, other files."""
import hashlib
import os
from typing import List, NamedTuple, Tuple

from tfx.dsl.io import fileio

from components.image_example_gen.record import IMAGE_EXTENSIONS


class ImageFile(NamedTuple):
  relpath: str  # relative to the tree's root, '/'-separated
  label: int


class FolderListing(NamedTuple):
  labels: List[str]  # sorted class folder names; index = label id
  images: List[ImageFile]
  others: List[Tuple[str, str]]  # (relpath, reason) of files that are not images


def list_image_folder(root: str) -> FolderListing:
  """Walks `root`: each sub-folder is a class, image files anywhere below it."""
  labels = sorted(name.rstrip('/') for name in fileio.listdir(root)
                  if fileio.isdir(os.path.join(root, name)))
  others = [(name, 'not inside a class folder') for name in sorted(fileio.listdir(root))
            if not fileio.isdir(os.path.join(root, name))]
  images = []
  for label, name in enumerate(labels):
    for folder, _, files in fileio.walk(os.path.join(root, name)):
      for file_name in sorted(files):
        relpath = os.path.relpath(os.path.join(folder, file_name), root).replace(os.sep, '/')
        if os.path.splitext(file_name)[1].lower() in IMAGE_EXTENSIONS:
          images.append(ImageFile(relpath, label))
        else:
          others.append((relpath, 'not an image file (expected .jpg, .jpeg or .png)'))
  return FolderListing(labels, images, others)


def path_hash(relpath: str) -> int:
  """A stable 64-bit hash of a relative path (the same on every machine and run)."""
  return int.from_bytes(hashlib.md5(relpath.encode('utf-8')).digest()[:8], 'big')


def is_eval(relpath: str, eval_percent: int) -> bool:
  """Deterministic split: the path's hash decides, so re-runs keep their split."""
  return path_hash(relpath) % 100 < eval_percent
