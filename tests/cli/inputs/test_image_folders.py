"""cli/inputs/image_folders.py: a class-per-folder tree checked before the run."""

import numpy as np
import PIL.Image
import pytest

from cli.inputs import image_folders
from contracts.errors import UserError


def _image(path) -> None:
  path.parent.mkdir(parents=True, exist_ok=True)
  PIL.Image.fromarray(np.zeros((8, 8), np.uint8), 'L').save(path)


def test_train_and_test_folders_of_class_folders_are_named_as_splits_not_classes(tmp_path):
  for split in ('train', 'test'):
    for klass in ('cat', 'dog'):
      _image(tmp_path / split / klass / '0.png')
  with pytest.raises(UserError) as raised:
    image_folders.check_image_tree(str(tmp_path))
  assert str(raised.value) == (
    f'--data {tmp_path}: its folders test, train look like the splits of a data set, each '
    f'holding class folders (cat, dog), not classes; point --data at the one to train on (e.g. '
    f'--data {tmp_path / "train"}): the pipeline makes its own eval split'
  )
  assert image_folders.check_image_tree(str(tmp_path / 'train')) == 2


def test_classes_that_happen_to_hold_no_folders_are_classes_whatever_their_names(tmp_path):
  for klass in ('train', 'test'):  # a model of trains and tests, say
    _image(tmp_path / klass / '0.png')
  assert image_folders.check_image_tree(str(tmp_path)) == 2
