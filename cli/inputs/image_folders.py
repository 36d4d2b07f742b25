"""Folders of images: a class-per-folder tree (--data), unlabeled images (--infer-data)."""

import os

from cli.inputs import data_paths
import config as cfg
from contracts.errors import UserError

CLASS_FOLDERS = '*/*'  # images: <class>/<file>
UNLABELED_IMAGES = '*'  # unlabeled images (--infer-data): what lies right below the folder


def check_image_tree(path: str) -> int:
  """The number of images under `path`; raises UserError unless it holds at least two class
  folders with images."""
  from records import image_folder

  listing = image_folder.list_image_folder(path)
  if not listing.labels:
    raise UserError(
      f'--data {path}: no class folders, CSV or TFRecord files in it {data_paths.EXPECTED_LAYOUTS}'
      + _skipped(path, listing.others)
    )
  if not listing.images:
    raise UserError(
      f'--data {path}: no images ({image_folder.IMAGE_SUFFIXES}) in its class folders'
      + _skipped(path, listing.others)
    )
  classes = sorted({listing.labels[f.label] for f in listing.images})
  if len(classes) < 2:
    raise UserError(
      f'--data {path}: only one class folder with images ({classes[0]!r}); '
      'a classifier needs at least two'
    )
  return len(listing.images)


def _skipped(root: str, others: list, shown: int = 3) -> str:
  """'; skipped: a, b (why) and N more': the files a listing left out, a TFRecord shard without a
  TFRecord name said as such."""
  if not others:
    return ''
  from cli.inputs import tfrecord_probe

  named = []
  for relpath, why in others[:shown]:
    path = os.path.join(root, relpath)
    if data_paths.isfile(path) and tfrecord_probe.uncompressed_tfrecords(path):
      why = 'TFRecords without a .tfrecord name: rename it *.tfrecord to read it'
    named.append(f'{relpath} ({why})')
  more = f' and {len(others) - shown} more' if len(others) > shown else ''
  return '; skipped: ' + ', '.join(named) + more


def unlabeled_images(path: str, flag: str) -> str:
  """The folder of a flag's unlabeled images (any depth; files of other kinds are skipped and
  listed); raises UserError for a file, a missing folder or one without images."""
  from records import image_folder

  if not data_paths.exists(path):
    raise UserError(f'{flag} {path}: no such folder')
  if data_paths.isfile(path):
    raise UserError(f'{flag} {path}: a folder of images, not a file')
  root = path.rstrip('/') if cfg.is_remote(path) else os.path.abspath(path)
  if not image_folder.list_unlabeled(root).images:
    raise UserError(f'{flag} {path}: no images ({image_folder.IMAGE_SUFFIXES}) in it')
  return root
