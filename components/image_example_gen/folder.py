"""Listing of a class-per-folder image tree: labels, image files, other files."""

import glob
import os
from typing import List, NamedTuple, Tuple
import warnings

from apache_beam.io.filesystems import FileSystems

IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png')  # what ImageExampleGen reads
TOOL_FOLDERS = ('__pycache__',)  # never data, like hidden ones (.ipynb_checkpoints, .git)


def skipped(relpath: str) -> bool:
  """A path inside a hidden or tool folder (or a hidden file): not data, not listed."""
  return any(part.startswith('.') or part in TOOL_FOLDERS for part in relpath.split('/'))


class ImageFile(NamedTuple):
  relpath: str  # relative to the tree's root, '/'-separated
  label: int
  size: int  # bytes


class FolderListing(NamedTuple):
  labels: List[str]  # sorted class folder names; index = label id
  images: List[ImageFile]
  others: List[Tuple[str, str]]  # (relpath, reason) of files that are not images


def list_image_folder(root: str) -> FolderListing:
  """Lists every file below `root`: each sub-folder holding files is a class, its image files
  anywhere below it.

  One Beam file-system listing, sizes included: on object storage that is one request per
  1,000 files, where walking folders and asking each file's size is a request per file
  (1,797 digits on a loopback S3 server: 0.4 s against 40 s).
  """
  root = root.rstrip('/')
  with warnings.catch_warnings():  # re's "possible nested set" for an escaped '['
    warnings.simplefilter('ignore', FutureWarning)
    listed = FileSystems.match([glob.escape(root) + '/**'])[0].metadata_list  # names are literal
  files = sorted(
    (meta.path[len(root) + 1 :].replace(os.sep, '/'), meta.size_in_bytes) for meta in listed
  )
  files = [(relpath, size) for relpath, size in files if not skipped(relpath)]
  labels = sorted({relpath.split('/')[0] for relpath, _ in files if '/' in relpath})
  label_ids = {name: i for i, name in enumerate(labels)}
  images, others = [], []
  for relpath, size in files:
    if '/' not in relpath:
      others.append((relpath, 'not inside a class folder'))
    elif os.path.splitext(relpath)[1].lower() in IMAGE_EXTENSIONS:
      images.append(ImageFile(relpath, label_ids[relpath.split('/')[0]], size))
    else:
      others.append((relpath, 'not an image file (expected .jpg, .jpeg or .png)'))
  return FolderListing(labels, images, others)
