"""cli/inputs/data_layout.resolve_data: which ExampleGen reads --data, and with which file pattern."""

import os

import pytest

from cli.inputs import data_layout
import config as cfg
from contracts.errors import UserError
from tests.conftest import write_digits_subset


def _touch(path):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, 'w') as f:
    f.write('a,b\n1,2\n')


def test_flat_folders_of_each_kind(tmp_path, digits_subset):
  _touch(str(tmp_path / 'csv' / 'part.csv'))
  _touch(str(tmp_path / 'tfr' / 'part.tfrecord.gz'))
  assert data_layout.resolve_data(str(tmp_path / 'csv')) == (
    cfg.CSV,
    str(tmp_path / 'csv'),
    '*.csv',
    (),
    (),
    0,
  )
  assert data_layout.resolve_data(str(tmp_path / 'tfr')).pattern == '*.tfrecord.gz'
  assert data_layout.resolve_data(digits_subset) == (cfg.IMAGES, digits_subset, '*/*', (), (), 400)


def test_spans_and_versions_of_each_kind(tmp_path):
  for span, version in ((1, 1), (2, 1), (2, 3)):
    _touch(str(tmp_path / 'csv' / f'span-{span}' / f'version-{version}' / 'part.csv'))
    _touch(str(tmp_path / 'tfr' / f'span-{span}' / 'part.tfrecord'))
    write_digits_subset(str(tmp_path / 'img' / f'span-{span}' / f'version-{version}'), 1)
  assert data_layout.resolve_data(str(tmp_path / 'csv')) == (
    cfg.CSV,
    str(tmp_path / 'csv'),
    'span-{SPAN}/version-{VERSION}/*.csv',
    (1, 2),
    (),
    0,
  )
  assert data_layout.resolve_data(str(tmp_path / 'tfr')) == (
    cfg.TFRECORDS,
    str(tmp_path / 'tfr'),
    'span-{SPAN}/*.tfrecord',
    (1, 2),
    (),
    0,
  )
  assert data_layout.resolve_data(str(tmp_path / 'img')) == (
    cfg.IMAGES,
    str(tmp_path / 'img'),
    'span-{SPAN}/version-{VERSION}/*/*',
    (1, 2),
    (),
    10,  # the latest version's: one digit of each class
  )


def test_the_image_executor_reads_the_resolved_version_folder():
  from components.image_example_gen import executor

  properties = {
    'input_base': '/data',
    'input_config': '{"splits": [{"name": "images", "pattern": "span-2/version-3/*/*"}]}',
  }
  assert executor.images_root(properties) == '/data/span-2/version-3'


def test_a_span_folder_next_to_other_files_is_not_a_data_version_nor_guessed_away(tmp_path):
  _touch(str(tmp_path / 'span-1' / 'part.csv'))
  _touch(str(tmp_path / 'notes.csv'))
  with pytest.raises(UserError, match=r'holds both folders \(span-1\) and data files'):
    data_layout.resolve_data(str(tmp_path))
  assert data_layout.resolve_data(str(tmp_path / 'notes.csv')).pattern == 'notes.csv'


def test_an_empty_latest_span_is_a_one_line_error(tmp_path):
  _touch(str(tmp_path / 'span-1' / 'part.csv'))
  os.makedirs(tmp_path / 'span-2')
  with pytest.raises(UserError, match='span-2: the folder is empty'):
    data_layout.resolve_data(str(tmp_path))


def test_files_of_two_suffixes_are_refused_rather_than_half_read(tmp_path):
  for name in ('part-0.tfrecord', 'part-1.tfrecord', 'part-2.tfrecord.gz'):
    (tmp_path / name).write_bytes(b'')
  with pytest.raises(UserError) as refused:
    data_layout.resolve_data(str(tmp_path))
  assert str(refused.value) == (
    f'--data {tmp_path}: holds .tfrecord (part-0.tfrecord and 1 more), .tfrecord.gz '
    '(part-2.tfrecord.gz): one kind of file is read at a time; give them one suffix (compress '
    'all of them or none)'
  )


def test_split_folders_need_train_and_eval(tmp_path):
  (tmp_path / 'Split-train').mkdir()
  with pytest.raises(UserError, match='need at least Split-train and Split-eval'):
    data_layout.resolve_data(str(tmp_path))


def _bare_shard(path):
  """A one-record TFRecord file named as TFX and ImageExampleGen name shards (no suffix)."""
  import tensorflow as tf

  os.makedirs(os.path.dirname(path), exist_ok=True)
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(tf.train.Example().SerializeToString())


def test_a_folder_left_with_nothing_names_the_files_it_skipped(tmp_path):
  shard = str(tmp_path / 'data' / 'data-00000-of-00001')
  _bare_shard(shard)
  (tmp_path / 'data' / 'notes.dat').write_bytes(b'x' * 20)
  with pytest.raises(UserError) as refused:
    data_layout.resolve_data(str(tmp_path / 'data'))
  said = str(refused.value)
  assert 'no class folders, CSV or TFRecord files' in said
  assert 'data-00000-of-00001 (TFRecords without a .tfrecord name: rename it' in said
  assert 'notes.dat (not inside a class folder)' in said
  with pytest.raises(UserError, match='TFRecords without a .tfrecord name'):
    data_layout.resolve_data(shard)  # the shard itself as --data
  for name in ('cats', 'dogs'):
    _touch(str(tmp_path / 'classes' / name / 'a.txt'))
  with pytest.raises(UserError, match=r'in its class folders; skipped: cats/a.txt \(.+\), dogs'):
    data_layout.resolve_data(str(tmp_path / 'classes'))
