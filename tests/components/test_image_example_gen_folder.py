"""Listing of class folders, label ids and the deterministic split."""

import os

from components.image_example_gen import folder
from contracts import splits


def _touch(root, relpath, data=b'x'):
  path = os.path.join(root, relpath)
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, 'wb') as f:
    f.write(data)


def test_labels_are_sorted_folder_names_and_files_any_case(tmp_path):
  root = str(tmp_path)
  _touch(root, 'zebra/a.JPG', b'abc')
  for relpath in ('ant/b.png', 'ant/sub/c.jpeg', 'mole/d.PnG', 'mole/notes.txt', 'README.md'):
    _touch(root, relpath)
  listing = folder.list_image_folder(root)
  assert listing.labels == ['ant', 'mole', 'zebra']
  assert sorted(listing.images) == sorted(
    [
      folder.ImageFile('ant/b.png', 0, 1),
      folder.ImageFile('ant/sub/c.jpeg', 0, 1),
      folder.ImageFile('mole/d.PnG', 1, 1),
      folder.ImageFile('zebra/a.JPG', 2, 3),
    ]
  )
  assert dict(listing.others) == {
    'README.md': 'not inside a class folder',
    'mole/notes.txt': 'not an image file (expected .jpg, .jpeg or .png)',
  }


def test_split_is_deterministic_and_near_the_ratio():
  paths = [f'class{i % 7}/img{i}.png' for i in range(5000)]
  first = [splits.is_eval(p, 20) for p in paths]
  assert first == [splits.is_eval(p, 20) for p in paths]
  assert 0.18 < sum(first) / len(paths) < 0.22
  assert not any(splits.is_eval(p, 0) for p in paths)
  assert all(splits.is_eval(p, 100) for p in paths)
