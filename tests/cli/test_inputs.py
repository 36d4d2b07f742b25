"""cli/inputs.resolve_data: which ExampleGen reads --data, and with which file pattern."""
import os

import pytest

import config as cfg
from cli import inputs
from tests.conftest import write_digits_subset


def _touch(path):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, 'w') as f:
    f.write('a,b\n1,2\n')


def test_flat_folders_of_each_kind(tmp_path, digits_subset):
  _touch(str(tmp_path / 'csv' / 'part.csv'))
  _touch(str(tmp_path / 'tfr' / 'part.tfrecord.gz'))
  assert inputs.resolve_data(str(tmp_path / 'csv')) == (cfg.CSV, str(tmp_path / 'csv'), '*.csv', ())
  assert inputs.resolve_data(str(tmp_path / 'tfr')).pattern == '*.tfrecord.gz'
  assert inputs.resolve_data(digits_subset) == (cfg.IMAGES, digits_subset, '*/*', ())


def test_spans_and_versions_of_each_kind(tmp_path):
  for span, version in ((1, 1), (2, 1), (2, 3)):
    _touch(str(tmp_path / 'csv' / f'span-{span}' / f'version-{version}' / 'part.csv'))
    _touch(str(tmp_path / 'tfr' / f'span-{span}' / 'part.tfrecord'))
    write_digits_subset(str(tmp_path / 'img' / f'span-{span}' / f'version-{version}'), 1)
  assert inputs.resolve_data(str(tmp_path / 'csv')) == (
      cfg.CSV, str(tmp_path / 'csv'), 'span-{SPAN}/version-{VERSION}/*.csv', (1, 2))
  assert inputs.resolve_data(str(tmp_path / 'tfr')) == (
      cfg.TFRECORDS, str(tmp_path / 'tfr'), 'span-{SPAN}/*.tfrecord', (1, 2))
  assert inputs.resolve_data(str(tmp_path / 'img')) == (
      cfg.IMAGES, str(tmp_path / 'img'), 'span-{SPAN}/version-{VERSION}/*/*', (1, 2))


def test_the_image_executor_reads_the_resolved_version_folder():
  from components.image_example_gen import executor
  properties = {'input_base': '/data', 'input_config': '{"splits": [{"name": "images", '
                '"pattern": "span-2/version-3/*/*"}]}'}
  assert executor.images_root(properties) == '/data/span-2/version-3'


def test_a_span_folder_next_to_other_files_is_not_a_data_version(tmp_path):
  _touch(str(tmp_path / 'span-1' / 'part.csv'))
  _touch(str(tmp_path / 'notes.csv'))
  assert inputs.resolve_data(str(tmp_path)).pattern == '*.csv'


def test_an_empty_latest_span_is_a_one_line_error(tmp_path):
  _touch(str(tmp_path / 'span-1' / 'part.csv'))
  os.makedirs(tmp_path / 'span-2')
  with pytest.raises(inputs.UserError, match='span-2: the folder is empty'):
    inputs.resolve_data(str(tmp_path))
