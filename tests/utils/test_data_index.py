"""utils/data_index.py: data files known by their stat fields and, where those differ, content."""

import json
import os
import time

from tests.support import files
from utils import data_index, fingerprint


def _data(tmp_path, monkeypatch):
  """A data folder, and the index beside it; files are indexed however recently written (their
  change time cannot be set back), and edited a clock tick later."""
  monkeypatch.setattr(data_index, 'RACY_NS', 0)
  data = tmp_path / 'data'
  (data / 'a').mkdir(parents=True)
  (data / 'a' / 'rows.csv').write_text('x,label\n1,0\n2,1\n')
  (data / 'b.csv').write_text('x,label\n3,0\n')
  return str(data), str(tmp_path / data_index.INDEX_FILE)


def _later():
  time.sleep(0.05)  # past the file system's clock tick (a few ms): a new change time


def test_an_edit_with_size_and_time_set_back_changes_the_digest(tmp_path, monkeypatch):
  data, index = _data(tmp_path, monkeypatch)
  before = data_index.digest(data, index)
  _later()
  files.replaced(os.path.join(data, 'a', 'rows.csv'), b'x,label\n1,1\n2,0\n')  # labels flipped
  assert data_index.digest(data, index) != before


def test_a_file_saved_again_with_the_same_content_keeps_the_digest(tmp_path, monkeypatch):
  data, index = _data(tmp_path, monkeypatch)
  before = data_index.digest(data, index)
  _later()
  path = os.path.join(data, 'b.csv')
  with open(path, 'w') as f:
    f.write('x,label\n3,0\n')
  assert data_index.digest(data, index) == before


def test_unchanged_files_are_not_read_again(tmp_path, monkeypatch):
  data, index = _data(tmp_path, monkeypatch)
  data_index.digest(data, index)
  assert sorted(json.load(open(index))) == sorted(
    os.path.abspath(p) for p in (os.path.join(data, 'a', 'rows.csv'), os.path.join(data, 'b.csv'))
  )
  read = []
  monkeypatch.setattr(fingerprint, 'file_digest', lambda path: read.append(path) or 'x')
  data_index.digest(data, index)
  assert read == []
  os.remove(os.path.join(data, 'b.csv'))  # a removed file leaves the index
  data_index.digest(data, index)
  assert list(json.load(open(index))) == [os.path.join(data, 'a', 'rows.csv')]


def test_a_file_just_written_is_read_again_next_time(tmp_path):
  data = tmp_path / 'data'
  data.mkdir()
  (data / 'new.csv').write_text('x\n1\n')  # its ctime is now: a same-tick edit could follow
  index = str(tmp_path / data_index.INDEX_FILE)
  data_index.digest(str(data), index)
  assert not os.path.exists(index) or json.load(open(index)) == {}


def test_a_single_file_and_a_link_to_nothing(tmp_path, monkeypatch):
  data, index = _data(tmp_path, monkeypatch)
  single = os.path.join(data, 'b.csv')
  assert data_index.listing(single, index) == [('b.csv', fingerprint.file_digest(single))]
  os.symlink(str(tmp_path / 'missing'), os.path.join(data, 'gone.csv'))
  assert ('gone.csv', '') in data_index.listing(data, index)


def test_patterns_list_only_the_files_the_example_gen_reads(tmp_path, monkeypatch):
  """A CSV's folder is its ExampleGen's input_base: other files there (an output folder) are
  not its data."""
  data, index = _data(tmp_path, monkeypatch)
  os.makedirs(os.path.join(data, 'out'))
  with open(os.path.join(data, 'out', 'log.txt'), 'w') as f:
    f.write('a run log')
  assert [name for name, _ in data_index.listing(data, index, ['*.csv'])] == ['b.csv']
  assert [name for name, _ in data_index.listing(data, index, ['*/*.csv', '*.csv'])] == [
    'a/rows.csv',
    'b.csv',
  ]
  data_index.listing(data, index, ['*.csv'])
  assert os.path.join(data, 'a', 'rows.csv') in json.load(open(index))  # another pattern's: kept
