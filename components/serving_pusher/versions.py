"""Which version under a serving folder already holds a model: runs without TFX.

TensorFlow Serving serves the highest numbered version below its base path. Pushing a model that
is already that version would only add a copy (and, on a server watching the folder, a reload of
the same model), so the Pusher asks `serving_copy` first.
"""

import hashlib
import os
from typing import Dict, Optional

import tensorflow as tf


def newest_version(base_directory: str) -> Optional[str]:
  """The path of the highest numbered version folder under `base_directory`, or None."""
  if not tf.io.gfile.isdir(base_directory):
    return None
  numbers = [
    int(name.rstrip('/'))
    for name in tf.io.gfile.listdir(base_directory)
    if name.rstrip('/').isdigit()
  ]
  return os.path.join(base_directory, str(max(numbers))) if numbers else None


def _digests(folder: str) -> Dict[str, str]:
  """{path relative to folder: sha256 of the file} for every file below `folder`."""
  found = {}
  for parent, _, files in tf.io.gfile.walk(folder):
    for name in files:
      path = os.path.join(parent, name)
      with tf.io.gfile.GFile(path, 'rb') as f:
        found[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
  return found


def serving_copy(model_dir: str, base_directory: str) -> Optional[str]:
  """The newest version folder under `base_directory` when it holds exactly the files of
  `model_dir` (same names, same bytes), else None."""
  newest = newest_version(base_directory)
  if newest is None:
    return None
  return newest if _digests(newest) == _digests(model_dir) else None
