"""Listing of class folders, label ids and the deterministic split."""

import os

from contracts import splits
from records import image_folder


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
  listing = image_folder.list_image_folder(root)
  assert listing.labels == ['ant', 'mole', 'zebra']
  assert sorted(listing.images) == sorted(
    [
      image_folder.ImageFile('ant/b.png', 0, 1),
      image_folder.ImageFile('ant/sub/c.jpeg', 0, 1),
      image_folder.ImageFile('mole/d.PnG', 1, 1),
      image_folder.ImageFile('zebra/a.JPG', 2, 3),
    ]
  )
  assert dict(listing.others) == {
    'README.md': 'not inside a class folder',
    'mole/notes.txt': (
      'not an image file (expected .jpg, .jpeg, .png, .webp, .bmp, .gif, .tif or .tiff)'
    ),
  }


def test_unlabeled_images_are_every_image_at_any_depth(tmp_path):
  root = str(tmp_path)
  for relpath in ('top.JPG', 'a/b.png', 'a/deep/er/c.webp', 'a/notes.txt', '.cache/d.png'):
    _touch(root, relpath)
  listing = image_folder.list_unlabeled(root)
  assert listing.labels == []
  assert [f.relpath for f in listing.images] == ['a/b.png', 'a/deep/er/c.webp', 'top.JPG']
  assert {f.label for f in listing.images} == {image_folder.UNLABELED}
  assert [relpath for relpath, _ in listing.others] == ['a/notes.txt']  # hidden: not listed


def test_webp_bmp_gif_and_tiff_files_are_listed_as_images(tmp_path):
  root = str(tmp_path)
  names = ('a/1.webp', 'a/2.BMP', 'b/3.gif', 'b/4.tif', 'b/5.Tiff', 'b/6.heic', 'b/7.svg')
  for relpath in names:
    _touch(root, relpath)
  listing = image_folder.list_image_folder(root)
  assert [f.relpath for f in listing.images] == list(names[:5])
  assert [relpath for relpath, _ in listing.others] == ['b/6.heic', 'b/7.svg']


def test_symbolic_links_class_folders_followed_broken_ones_listed(tmp_path):
  root, elsewhere = str(tmp_path / 'data'), str(tmp_path / 'elsewhere')
  _touch(root, 'cat/a.png')
  _touch(elsewhere, 'dog/b.png')
  os.symlink(os.path.join(elsewhere, 'dog'), os.path.join(root, 'dog'))  # a class folder
  os.symlink(root, os.path.join(root, 'cat', 'back-up'))  # a loop through folders
  os.symlink(os.path.join(elsewhere, 'gone.png'), os.path.join(root, 'cat', 'dangling.png'))
  os.symlink('self.png', os.path.join(root, 'cat', 'self.png'))  # a loop of one link
  listing = image_folder.list_image_folder(root)
  assert listing.labels == ['cat', 'dog']
  assert [f.relpath for f in listing.images] == ['cat/a.png', 'dog/b.png']
  assert dict(listing.others) == {
    'cat/dangling.png': 'a symbolic link to nothing readable (No such file or directory)',
    'cat/self.png': 'a symbolic link to nothing readable (Too many levels of symbolic links)',
  }


def test_names_with_glob_characters_and_hidden_folders(tmp_path):
  root = str(tmp_path / 'photos [2024]')
  for relpath in ('a*/1.png', 'b?/2.png', '.ipynb_checkpoints/3.png', '__pycache__/4.png'):
    _touch(root, relpath)
  listing = image_folder.list_image_folder(root)
  assert listing.labels == ['a*', 'b?'] and len(listing.images) == 2 and listing.others == []


def test_split_is_deterministic_and_near_the_ratio():
  paths = [f'class{i % 7}/img{i}.png' for i in range(5000)]
  first = [splits.is_eval(p, 20) for p in paths]
  assert first == [splits.is_eval(p, 20) for p in paths]
  assert 0.18 < sum(first) / len(paths) < 0.22
  assert not any(splits.is_eval(p, 0) for p in paths)
  assert all(splits.is_eval(p, 100) for p in paths)
