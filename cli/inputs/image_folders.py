"""Folders of images: a class-per-folder tree (--data), unlabeled images (--infer-data)."""

import os

from cli.inputs import data_paths
import config as cfg
from contracts.errors import UserError

CLASS_FOLDERS = '*/*'  # images: <class>/<file>
UNLABELED_IMAGES = '*'  # unlabeled images (--infer-data): what lies right below the folder
# Folder names of a data set already split (Kaggle's, torchvision's ImageFolder layouts).
SPLIT_NAMES = ('train', 'training', 'test', 'testing', 'val', 'valid', 'validation', 'eval', 'dev')


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
  _check_not_split_folders(path, classes)
  if len(classes) < 2:
    raise UserError(
      f'--data {path}: only one class folder with images ({classes[0]!r}); '
      'a classifier needs at least two'
    )
  return len(listing.images)


def _check_not_split_folders(path: str, classes: list) -> None:
  """Class folders named as splits (train/, test/), each holding folders of its own, are the
  splits of a data set, not its classes: a model of 'train' against 'test' is no one's aim."""
  if cfg.is_remote(path) or not all(c.lower() in SPLIT_NAMES for c in classes):
    return
  inner = sorted(
    {
      entry.name
      for split in classes
      for entry in os.scandir(os.path.join(path, split))
      if entry.is_dir() and not entry.name.startswith('.')
    }
  )
  if inner:
    shown = ', '.join(inner[:5]) + (', …' if len(inner) > 5 else '')
    train = next((c for c in classes if c.lower() in ('train', 'training')), classes[0])
    raise UserError(
      f'--data {path}: its folders {", ".join(classes)} look like the splits of a data set, '
      f'each holding class folders ({shown}), not classes; point --data at the one to train on '
      f'(e.g. --data {os.path.join(path, train)}): '
      'the pipeline makes its own eval split'
    )


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
