"""Paths given on the command line, local or in object storage (gs://, s3://: TensorFlow's file
systems, imported only for those)."""

import os

import config as cfg

EXPECTED_LAYOUTS = (
  '(expected a folder of class folders, .csv, .tfrecord or .tfrecord.gz, or Split-* '
  'folders of TFRecords)'
)


def gfile():
  """TensorFlow's file API, imported when a path is remote or a file is read through it."""
  import tensorflow as tf

  return tf.io.gfile


def exists(path: str) -> bool:
  return gfile().exists(path) if cfg.is_remote(path) else os.path.exists(path)


def isdir(path: str) -> bool:
  return gfile().isdir(path) if cfg.is_remote(path) else os.path.isdir(path)


def isfile(path: str) -> bool:
  return exists(path) and not isdir(path)


def visible_entries(path: str) -> list:
  """The folder's entries, hidden ones left out (object stores list folders with a '/')."""
  names = (
    [e.rstrip('/') for e in gfile().listdir(path)] if cfg.is_remote(path) else os.listdir(path)
  )
  return [e for e in names if not e.startswith('.')]


def skipped(relpath: str) -> bool:
  """A path inside a hidden or tool folder (or a hidden file): never read as data."""
  from records import image_folder  # Beam's file systems: only when needed

  return image_folder.skipped(relpath)
