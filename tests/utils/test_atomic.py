"""utils/atomic.py: a reader sees a whole file or folder, or what was there before."""

import os

import pytest

from utils import atomic


def test_a_written_file_replaces_the_old_one_whole_and_leaves_no_partial(tmp_path):
  path = str(tmp_path / 'sub' / 'report.html')
  assert atomic.write(path, 'old') == path
  atomic.write(path, b'new bytes')
  with open(path, 'rb') as f:
    assert f.read() == b'new bytes'
  assert os.listdir(tmp_path / 'sub') == ['report.html']
  assert oct(os.stat(path).st_mode & 0o777) == '0o644'


def test_a_write_that_fails_keeps_the_old_file_and_leaves_nothing_behind(tmp_path):
  path = str(tmp_path / 'summary.json')
  atomic.write(path, 'kept')
  with pytest.raises(RuntimeError):
    with atomic.open_atomically(path) as f:
      f.write('half of it')
      raise RuntimeError('stopped mid-write')
  with open(path) as f:
    assert f.read() == 'kept'
  assert os.listdir(tmp_path) == ['summary.json']


def test_a_folder_appears_only_when_complete(tmp_path):
  target = str(tmp_path / 'model')
  with atomic.folder_atomically(target) as staging:
    open(os.path.join(staging, 'saved_model.pb'), 'w').close()
    assert not os.path.exists(target)
  assert os.listdir(target) == ['saved_model.pb']
  with pytest.raises(ValueError):
    with atomic.folder_atomically(str(tmp_path / 'broken')) as staging:
      raise ValueError('export failed')
  assert sorted(os.listdir(tmp_path)) == ['model']
