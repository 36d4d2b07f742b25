"""Rows without a label past the command line's first look, counted by every ExampleGen over all
rows: the Arrow CSV reader, TFX's CSV reader and TFRecords. Without --label-default the run stops
with one line (count, first rows); with it the rows take the default and are counted."""

import glob
import json
import os

import pytest
import tensorflow as tf

from components import label_gaps
from components.csv_example_gen import executor as arrow_executor
from components.csv_example_gen import stock_executor
from components.import_example_gen import executor as import_executor
from contracts.errors import UnusableData
from tests.support.example_gens import run_executor

READERS = {'arrow': arrow_executor.Executor, 'tfx': stock_executor.Executor}
GAPS = {300: '', 400: '  ', 500: 'NA', 550: ''}  # data row (1: the first) → its label cell


def _csv(path, rows: int = 600, ids: bool = False) -> None:
  """`rows` rows (x, word, label) with GAPS' label cells; `ids`: a first column unique per row."""
  lines = ['row_id,x,word,label' if ids else 'x,word,label']
  for row in range(1, rows + 1):
    lines.append(f'{f"{7 * row}," if ids else ""}{row * 0.5},w{row % 7},{GAPS.get(row, row % 3)}')
  path.write_text('\n'.join(lines) + '\n')


def _labels(uri: str) -> dict:
  """{x: the label values of its record} over both splits."""
  found = {}
  for path in glob.glob(os.path.join(uri, 'Split-*', '*')):
    compression = 'GZIP' if path.endswith('.gz') else ''
    for record in tf.data.TFRecordDataset(path, compression).as_numpy_iterator():
      feature = tf.train.Example.FromString(record).features.feature
      kind = feature['label'].WhichOneof('kind') if 'label' in feature else None
      found[feature['x'].float_list.value[0]] = (
        list(getattr(feature['label'], kind).value) if kind else []
      )
  return found


@pytest.mark.parametrize('reader', sorted(READERS))
def test_csv_rows_without_a_label_past_row_200_stop_the_run_in_one_line(tmp_path, reader):
  _csv(tmp_path / 'data.csv')
  with pytest.raises(UnusableData) as raised:
    run_executor(READERS[reader], tmp_path, tmp_path / 'out', label_key='label')
  said = str(raised.value)
  assert '\n' not in said
  assert said.startswith(f'--label label: 4 of 600 rows of {tmp_path / "data.csv"} have no value')
  assert '(lines 301, 401, 501, 551)' in said and '--label-default' in said


def test_the_lines_without_a_label_are_found_in_bom_semicolon_and_tab_files(tmp_path):
  """contracts/csv_dialect.py: a byte-order mark, `;` or tab, a quoted newline, names stripped."""
  rows = ['1;2', '"a\nb";', '3; NA ', '', '4;5']  # data rows, the second two lines long
  (tmp_path / 'excel.csv').write_bytes(('\ufeffx ; label\n' + '\n'.join(rows) + '\n').encode())
  (tmp_path / 'tabs.csv').write_text('x\tlabel\n' + '\n'.join(rows).replace(';', '\t') + '\n')
  for name in ('excel.csv', 'tabs.csv'):
    assert label_gaps.csv_lines([str(tmp_path / name)], 'label', 2) == 'lines 3, 5'


@pytest.mark.parametrize('reader', sorted(READERS))
def test_csv_rows_without_a_label_take_the_default_and_are_counted(tmp_path, reader):
  _csv(tmp_path / 'data.csv')
  examples = run_executor(
    READERS[reader], tmp_path, tmp_path / 'out', label_key='label', label_default='2'
  )
  found = _labels(examples.uri)
  assert len(found) == 600 and all(len(values) == 1 for values in found.values())
  # TFX's reader types the column before: 'NA' makes it a column of names ('0', '1', '2')
  kind = bytes if reader == 'tfx' else int
  assert {kind for values in found.values() for kind in map(type, values)} == {kind}
  assert [found[row * 0.5] for row in sorted(GAPS)] == [[kind(b'2' if kind is bytes else 2)]] * 4
  assert examples.mlmd_artifact.custom_properties[label_gaps.DEFAULTED].int_value == 4


@pytest.mark.parametrize('reader', sorted(READERS))
def test_defaulted_labels_and_a_found_id_column_in_one_read(tmp_path, reader):
  _csv(tmp_path / 'data.csv', ids=True)
  examples = run_executor(
    READERS[reader], tmp_path, tmp_path / 'out', label_key='label', label_default='2'
  )
  assert examples.mlmd_artifact.custom_properties[label_gaps.DEFAULTED].int_value == 4
  assert json.loads(examples.get_string_custom_property('detected_id_columns')) == ['row_id']
  assert len(_labels(examples.uri)) == 600


def _tfrecords(path) -> None:
  """40 records; record 30 has no label feature, record 35 an empty one."""
  with tf.io.TFRecordWriter(str(path)) as writer:
    for i in range(40):
      feature = {'x': tf.train.Feature(float_list=tf.train.FloatList(value=[i]))}
      if i != 30:
        feature['label'] = tf.train.Feature(
          int64_list=tf.train.Int64List(value=[] if i == 35 else [i % 2])
        )
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )


@pytest.mark.parametrize('duplicates', ['group', 'off'])
def test_tfrecords_without_a_label_stop_the_run_or_take_the_default(tmp_path, duplicates):
  _tfrecords(tmp_path / 'data.tfrecord')
  run = lambda out, **more: run_executor(
    import_executor.Executor,
    tmp_path,
    tmp_path / out,
    (('single_split', '*.tfrecord'),),
    label_key='label',
    duplicates=duplicates,
    **more,
  )
  with pytest.raises(UnusableData, match=r'^--label label: 2 of 40 rows of .* have no value \(x=3'):
    run('refused')
  examples = run('defaulted', label_default='1')
  found = _labels(examples.uri)
  assert len(found) == 40 and found[30.0] == found[35.0] == [1]
  assert examples.mlmd_artifact.custom_properties[label_gaps.DEFAULTED].int_value == 2


def test_tfrecords_without_the_label_at_all_are_left_to_label_check(tmp_path):
  _tfrecords(tmp_path / 'data.tfrecord')
  examples = run_executor(
    import_executor.Executor,
    tmp_path,
    tmp_path / 'out',
    (('single_split', '*.tfrecord'),),
    label_key='target',
  )
  assert len(_labels(examples.uri)) == 40  # no record holds 'target': nothing refused here
