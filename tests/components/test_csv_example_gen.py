"""The Arrow CSV ExampleGen writes TFX's CsvExampleGen's tf.Examples, record for record.

Both executors run in this process (Beam in_memory) on the same files: the taxi CSV that ships
with TFX, and an adversarial CSV (quoted commas and newlines, CRLF rows, empty cells, an empty
column, numbers in a string column, cells Python reads as numbers and pyarrow does not, integers
beyond int64, unicode) cut into ranges of a few hundred bytes so that range ends fall inside it.
"""

import collections
import csv
import glob
import json
import logging
import math
import os
import random
import re

import pyarrow as pa
import pytest
import tensorflow as tf
from tfx.components.example_gen.csv_example_gen import executor as stock_executor
from tfx_bsl.coders import csv_decoder

from components.csv_example_gen import csv_ranges, example_encoding, type_inference
from components.csv_example_gen import executor as arrow_executor
from components.csv_example_gen import stock_executor as counted_stock_executor
from contracts.errors import UnusableData
from tests.support.example_gens import run_executor
from tests.support.tfx_data import TAXI_CSV
from utils import progress

ADVERSARIAL_ROWS = [
  'id,name,amount,count,note,empty,code,big',
  '1,"Smith, John",3.5,7,"said ""hi""",,007,12345678901234567890',
  '2,Ünïcødé ✓,-0.25,+7,"two\nlines",,A1,1',
  '3,,1e3, 7 ,"a, b, and\r\nc",,12,2',
  '4,plain,,-3,,,x,3',
  '',
  '5,"quoted ""and"" comma, too",inf,1_000,last,,9,4',
  '6,tab\there,  2.5,0,"",,-1,9223372036854775808',
]


def _adversarial_csv(path, copies: int = 30) -> None:
  """ADVERSARIAL_ROWS' data rows repeated with shuffled ids (CRLF after every third row)."""
  rows = [ADVERSARIAL_ROWS[0]]
  rng = random.Random(7)
  for copy in range(copies):
    for row in ADVERSARIAL_ROWS[1:]:
      if row:
        row = f'{copy * 10 + rng.randrange(10)}{row[1:]}'
      rows.append(row + ('\r\n' if len(rows) % 3 == 0 else '\n'))
  path.write_bytes((rows[0] + '\n' + ''.join(rows[1:])).encode('utf-8'))


def _records(uri, split):
  """A split's records, each re-serialized deterministically, in file and record order."""
  files = sorted(glob.glob(os.path.join(uri, f'Split-{split}', '*')))
  found = []
  for path in files:
    compression = 'GZIP' if path.endswith('.gz') else ''
    for record in tf.data.TFRecordDataset(path, compression_type=compression).as_numpy_iterator():
      found.append(tf.train.Example.FromString(record).SerializeToString(deterministic=True))
  return found


def _inf_missing(record: bytes) -> bytes:
  """TFX's record with its inf and nan floats missing, as the Arrow ExampleGen reads them."""
  example = tf.train.Example.FromString(record)
  for feature in example.features.feature.values():
    if feature.HasField('float_list') and not all(map(math.isfinite, feature.float_list.value)):
      del feature.float_list.value[:]
  return example.SerializeToString(deterministic=True)


@pytest.fixture(scope='module')
def taxi(tmp_path_factory):
  """(stock artifact, Arrow artifact) on the taxi CSV."""
  root = tmp_path_factory.mktemp('taxi')
  os.symlink(TAXI_CSV, root / 'data.csv')
  stock = run_executor(stock_executor.Executor, root, root / 'stock')
  return stock, run_executor(arrow_executor.Executor, root, root / 'arrow')


@pytest.fixture(scope='module')
def adversarial(tmp_path_factory):
  """(stock artifact, Arrow artifact, Arrow again) on the adversarial CSV in ~300-byte ranges."""
  root = tmp_path_factory.mktemp('adversarial')
  _adversarial_csv(root / 'data.csv')
  stock = run_executor(stock_executor.Executor, root, root / 'stock')
  with pytest.MonkeyPatch.context() as patch:
    patch.setattr(csv_ranges, 'RANGE_BYTES', 300)
    return (
      stock,
      run_executor(arrow_executor.Executor, root, root / 'a'),
      run_executor(arrow_executor.Executor, root, root / 'b'),
    )


def test_taxi_records_equal_csv_example_gen_s_and_the_eval_share_is_within_1_percent(taxi):
  stock, arrow = taxi
  train, evaluation = _records(arrow.uri, 'train'), _records(arrow.uri, 'eval')
  assert sorted(train + evaluation) == sorted(
    _records(stock.uri, 'train') + _records(stock.uri, 'eval')
  )
  assert len(train) + len(evaluation) == 15002
  assert abs(len(evaluation) / (len(train) + len(evaluation)) - 0.20) <= 0.01
  assert json.loads(arrow.get_string_custom_property('split_counts')) == {
    'train': len(train),
    'eval': len(evaluation),
  }
  types = json.loads(arrow.get_string_custom_property('column_types'))['single_split']
  assert (types['fare'], types['trip_start_hour'], types['company']) == ('FLOAT', 'INT', 'STRING')
  assert arrow.split_names == stock.split_names


def test_adversarial_records_equal_csv_example_gen_s_across_range_cuts(adversarial):
  stock, arrow, _ = adversarial
  assert len(glob.glob(os.path.join(arrow.uri, 'Split-train', '*'))) > 10  # cut mid-file
  ours = sorted(_records(arrow.uri, 'train') + _records(arrow.uri, 'eval'))
  theirs = sorted(map(_inf_missing, _records(stock.uri, 'train') + _records(stock.uri, 'eval')))
  assert len(ours) == 6 * 30
  assert ours == theirs
  with open(os.path.join(os.path.dirname(arrow.uri), 'data.csv'), 'rb') as f:
    assert csv_ranges.row_count(f) == len(theirs)  # --csv-reader tfx's total: its rows
  types = json.loads(arrow.get_string_custom_property('column_types'))['single_split']
  assert types == {
    'id': 'INT',
    'name': 'STRING',
    'amount': 'FLOAT',  # '  2.5' is a float to Python; 'inf' is missing
    'count': 'INT',  # '+7', ' 7 ' and '1_000' are ints to Python, not to pyarrow
    'note': 'STRING',
    'empty': 'UNKNOWN',
    'code': 'STRING',
    'big': 'STRING',  # 2**63 is beyond int64
  }


def test_splits_are_the_same_on_everyrun_executor(adversarial):
  _, first, second = adversarial
  for split in ('train', 'eval'):
    assert _records(first.uri, split) == _records(second.uri, split)
  assert _records(first.uri, 'eval')  # both splits have rows


def test_already_split_input_keeps_its_splits_and_tfx_s_reader_shows_rows_converted(
  tmp_path, caplog
):
  """TFX's executor here is --csv-reader tfx's: TFX's own, its rows counted as converted."""
  caplog.set_level(logging.INFO, logger=progress.LOGGER)
  with open(TAXI_CSV) as f:
    lines = f.readlines()[:401]
  for name, rows in (('train', lines[1:301]), ('eval', lines[301:])):
    os.makedirs(tmp_path / name)
    (tmp_path / name / 'part.csv').write_text(lines[0] + ''.join(rows))
  splits = (('train', 'train/*.csv'), ('eval', 'eval/*.csv'))
  stock = run_executor(counted_stock_executor.Executor, tmp_path, tmp_path / 'stock', splits)
  lines = [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]
  assert re.match(r'CsvExampleGen: 400 of 400 CSV rows converted, [\d,]+/s$', lines[-1])
  arrow = run_executor(arrow_executor.Executor, tmp_path, tmp_path / 'arrow', splits)
  for split, count in (('train', 300), ('eval', 100)):
    assert sorted(_records(arrow.uri, split)) == sorted(_records(stock.uri, split))
    assert len(_records(arrow.uri, split)) == count


def test_ranges_end_at_row_ends_outside_quotes(tmp_path):
  _adversarial_csv(tmp_path / 'data.csv', copies=5)
  data = (tmp_path / 'data.csv').read_bytes()
  start = data.index(b'\n') + 1
  cuts = csv_ranges.ranges(data, start, range_bytes=40)
  assert cuts[0][0] == start and cuts[-1][1] == len(data)
  assert all(end == begin for (_, end, _), (begin, _, _) in zip(cuts, cuts[1:]))
  assert len(cuts) > 10
  for begin, end, line in cuts:
    assert data[end - 1 : end] == b'\n'
    assert data[:end].count(b'"') % 2 == 0  # not inside a quoted field
    assert line == 1 + data[:begin].count(b'\n')


@pytest.mark.parametrize(
  'cell',
  [b'7', b'-7', b'+7', b' 7 ', b'1_000', b'007', b'9223372036854775807', b'9223372036854775808',
   b'-9223372036854775809', b'3.5', b'1e3', b'inf', b'nan', b'  2.5', b'1.2.3', b'A1', b'0x10',
   b'\xc3\x9c'],
)  # fmt: skip
def test_a_cell_s_type_is_tfx_bsl_s(cell):
  assert int(type_inference.infer_value_type(cell)) == int(csv_decoder._InferValueType(cell))


@pytest.mark.parametrize(
  'content, message',
  [
    (
      'a,b,label\n1,2,0\n3,caf\xe9,1\n'.encode('latin-1'),
      'data.csv: not UTF-8 (byte 0xe9 on line 3); CsvExampleGen reads UTF-8: save the file as '
      'UTF-8 CSV',
    ),
    (b'a,b,label\n1,2,0\n3,4\n', 'data.csv: line 3 has 2 cells, the header 3 columns'),
  ],
)
def test_a_file_it_cannot_read_is_one_line(tmp_path, content, message):
  (tmp_path / 'data.csv').write_bytes(content)
  with pytest.raises(UnusableData) as raised:
    run_executor(arrow_executor.Executor, tmp_path, tmp_path / 'out')
  assert str(raised.value).endswith(message) and '\n' not in str(raised.value)
  assert not glob.glob(str(tmp_path / 'out' / 'Split-*' / 'data-*'))  # nothing half-written


def test_files_of_one_split_must_share_a_header(tmp_path):
  (tmp_path / 'a.csv').write_text('x,y\n1,2\n')
  (tmp_path / 'b.csv').write_text('x,z\n1,2\n')
  with pytest.raises(UnusableData, match="b.csv: its header differs from .*a.csv's"):
    run_executor(arrow_executor.Executor, tmp_path, tmp_path / 'out')


def _rows_with_duplicates(path, count: int = 1000) -> dict:
  """`count` taxi rows whose rows 0-39 come again (exact copies under row ids 1000-1039) and
  whose rows 80-89 come again with another label (row ids 2080-2089): the column names. 20
  conflicts in 1,050 rows are rare enough to be left out; in 250, they are not."""
  with open(TAXI_CSV) as f:
    header, *rows = f.readlines()[: count + 1]
  names = header.strip().split(',')
  tips = names.index('tips')
  data = []
  for i, row in enumerate(rows):
    cells = row.rstrip('\n').split(',')
    data.append([str(i)] + cells)
  for i in range(40):  # exact copies, another id
    data.append([str(1000 + i)] + data[i][1:])
  for i in range(80, 90):  # the same trip, another tip
    cells = list(data[i])
    cells[1 + tips] = str(float(cells[1 + tips] or 0) + 1.5)
    data.append([str(2000 + i)] + cells[1:])
  path.write_text(
    ','.join(['row_id'] + names) + '\n' + ''.join(','.join(cells) + '\n' for cells in data)
  )
  return names


def _grouped_run(tmp_path, reader: str, count: int):
  """The executor (`reader`) on _rows_with_duplicates(count), grouping by content: (its
  Examples, {content: {(split, row id)}})."""
  names = _rows_with_duplicates(tmp_path / 'trips.csv', count)
  executor_class = arrow_executor.Executor if reader == 'arrow' else counted_stock_executor.Executor
  examples = run_executor(
    executor_class,
    tmp_path,
    tmp_path / 'out',
    label_key='tips',
    id_columns=json.dumps(['row_id']),
    duplicates='group',
  )
  where = collections.defaultdict(set)
  for split in ('train', 'eval'):
    for record in _records(examples.uri, split):
      example = tf.train.Example.FromString(record)
      content = tuple(_value(example, n) for n in names if n != 'tips')
      where[content].add((split, _value(example, 'row_id')))
  return examples, where


@pytest.mark.parametrize('reader', ['arrow', 'tfx'])
def test_duplicate_rows_share_a_split_and_rows_under_two_labels_are_left_out(tmp_path, reader):
  examples, where = _grouped_run(tmp_path, reader, count=1000)
  ids = {row_id for found in where.values() for _, row_id in found}
  conflicting = set(range(80, 90)) | set(range(2080, 2090))
  assert ids == (set(range(1000)) | set(range(1000, 1040))) - conflicting
  for found in where.values():
    assert len({split for split, _ in found}) == 1, found  # never in two splits
  assert sum(len(found) == 2 for found in where.values()) == 40  # the copies, kept together
  properties = examples.mlmd_artifact.custom_properties
  assert properties['num_label_conflicts'].int_value == 20
  assert properties['num_duplicates'].int_value == 80 + 20
  with open(tmp_path / 'out' / 'excluded_files.csv') as f:
    excluded = list(csv.DictReader(f))
  assert len(excluded) == 20 and all('another label' in row['reason'] for row in excluded)
  assert all('row_id' not in row['path'] for row in excluded)
  assert properties['label_noisy'].int_value == 0


@pytest.mark.parametrize('reader', ['arrow', 'tfx'])
def test_rows_under_two_labels_are_all_kept_in_one_split_when_too_many_for_mislabelled_copies(
  tmp_path, reader
):
  examples, where = _grouped_run(tmp_path, reader, count=200)  # 20 conflicts in 250 rows: 8 %
  assert len(where) == 200 and all(len({s for s, _ in found}) == 1 for found in where.values())
  properties = examples.mlmd_artifact.custom_properties
  assert properties['num_label_conflicts'].int_value == 20
  assert properties['label_conflicts_kept'].int_value == properties['label_noisy'].int_value == 1
  assert not os.path.exists(tmp_path / 'out' / 'excluded_files.csv')


def _value(example, name):
  feature = example.features.feature[name]
  kind = feature.WhichOneof('kind')
  values = getattr(feature, kind).value if kind else []
  return values[0] if len(values) else None


def test_distinct_rows_hash_apart_when_cells_shift_digits_between_columns():
  import pyarrow as pa

  rows = range(1, 2001)  # ('10.0', 'w6') and ('20.0', 'w5') once hashed alike, as duplicates
  table = pa.table({'x': [f'{r * 0.5}' for r in rows], 'word': [f'w{r % 7}' for r in rows]})
  assert len(set(example_encoding.row_hashes(table).tolist())) == len(rows)
  assert len(set(example_encoding.row_hashes(pa.concat_tables([table, table])).tolist())) == len(
    rows
  )


def _every_row_twice(path, rows: int = 150) -> None:
  """`rows` rows of float measurements and an int label, each written twice under its own
  record_id (unique per row) and a string serial (unique too)."""
  rng = random.Random(3)
  lines = ['record_id,serial,width,depth,label']
  for i in range(rows):
    cells = f'{rng.random():.6f},{rng.random():.6f},{rng.randrange(2)}'
    for copy in range(2):
      lines.append(f'{10 * i + copy},s{2 * i + copy},{cells}')
  path.write_text('\n'.join(lines) + '\n')


@pytest.mark.parametrize('reader', ['arrow', 'tfx'])
def test_id_like_columns_are_found_over_all_rows_and_copies_behind_them_share_a_split(
  tmp_path, reader
):
  _every_row_twice(tmp_path / 'rows.csv')
  executor_class = arrow_executor.Executor if reader == 'arrow' else counted_stock_executor.Executor
  with pytest.MonkeyPatch.context() as patch:
    patch.setattr(csv_ranges, 'RANGE_BYTES', 500)  # columns judged over every range together
    examples = run_executor(executor_class, tmp_path, tmp_path / 'out', label_key='label')
  where = collections.defaultdict(set)
  for split in ('train', 'eval'):
    for record in _records(examples.uri, split):
      example = tf.train.Example.FromString(record)
      where[(_value(example, 'width'), _value(example, 'depth'))].add(split)
  assert len(where) == 150 and all(len(splits) == 1 for splits in where.values())
  detected = json.loads(examples.get_string_custom_property('detected_id_columns'))
  assert detected == ['record_id', 'serial']  # not the label, not the float measurements
  with open(tmp_path / 'out' / 'id_columns.json') as f:
    assert json.load(f) == {'given': [], 'detected': ['record_id', 'serial']}


@pytest.mark.parametrize('reader', ['arrow', 'tfx'])
def test_a_unique_timestamp_is_no_id_and_is_kept_as_written(tmp_path, reader):
  lines = ['serial,at,width,label']
  for i in range(60):
    stamp = f'2024-03-{1 + i % 28:02d}T{i % 24:02d}:{i:02d}:00'
    lines.append(f's{i},{stamp},{i / 7:.4f},{i % 2}')
  (tmp_path / 'rows.csv').write_text('\n'.join(lines) + '\n')
  executor_class = arrow_executor.Executor if reader == 'arrow' else counted_stock_executor.Executor
  examples = run_executor(executor_class, tmp_path, tmp_path / 'out', label_key='label')
  assert json.loads(examples.get_string_custom_property('detected_id_columns')) == ['serial']
  record = tf.train.Example.FromString(next(iter(_records(examples.uri, 'train'))))
  assert _value(record, 'at').startswith(b'2024-03-')  # the string as written


def test_a_given_id_column_turns_the_search_off_and_a_repeated_value_is_no_id(tmp_path):
  _every_row_twice(tmp_path / 'rows.csv')
  with open(tmp_path / 'rows.csv', 'a') as f:
    f.write('10,s-last,0.5,0.5,1\n')  # record_id 10 again: serial stays unique
  examples = run_executor(
    arrow_executor.Executor, tmp_path, tmp_path / 'out', label_key='label', id_columns='["serial"]'
  )
  assert json.loads(examples.get_string_custom_property('detected_id_columns')) == []
  again = run_executor(arrow_executor.Executor, tmp_path, tmp_path / 'again', label_key='label')
  assert json.loads(again.get_string_custom_property('detected_id_columns')) == ['serial']


def test_a_header_repeated_mid_file_is_skipped_and_inf_cells_are_missing_both_counted(tmp_path):
  rows = [f'{i / 10},{i % 3},{i % 2}' for i in range(40)]
  rows.insert(20, ' a, b ,label')  # two exports joined, the second with spaces in its header
  rows[3], rows[30] = 'inf,1,0', 'NaN,2,1'  # no numbers to learn from: missing
  (tmp_path / 'data.csv').write_text('a,b,label\n' + '\n'.join(rows) + '\n')
  examples = run_executor(arrow_executor.Executor, tmp_path, tmp_path / 'out', label_key='label')
  types = json.loads(examples.get_string_custom_property('column_types'))['single_split']
  assert types == {'a': 'FLOAT', 'b': 'INT', 'label': 'INT'}  # no header cell made them strings
  assert examples.get_int_custom_property('num_repeated_headers') == 1
  assert examples.get_int_custom_property('num_non_finite_cells') == 2
  values = [
    tf.train.Example.FromString(r).features.feature['a'].float_list.value
    for split in ('train', 'eval')
    for r in _records(examples.uri, split)
  ]
  assert sum(not v for v in values) == 2 and all(math.isfinite(v[0]) for v in values if v)
  counts = json.loads(examples.get_string_custom_property('split_counts'))
  assert sum(counts.values()) == 40


def _numbers_as_text_csv(path, rows: int = 300) -> None:
  """price ($, thousands separators, one 'oops'), rate (%, 10 'unknown'), count (integers, 11
  'n/a'), word, big (integers beyond int64: a string, as CsvExampleGen reads it), label ($)."""
  lines = ['price,rate,count,word,big,label']
  for i in range(rows):
    price = f'"${i * 1.5 + 1000:,.2f}"' if i % 2 else f'{i * 1.5 + 1000:.2f}'
    rate = 'unknown' if i % 30 == 0 else f'{i / 10:.2f}%'
    count = 'n/a' if i % 29 == 0 else str(i)
    lines.append(f'{price},{rate},{count},w{i % 3},{2**64 + i},${i % 7}.50')
  lines[5] = 'oops,1%,3,w,1,$1'
  path.write_text('\n'.join(lines) + '\n')


def test_numbers_written_as_text_are_floats_across_ranges_their_other_cells_missing_counted(
  tmp_path, monkeypatch
):
  _numbers_as_text_csv(tmp_path / 'data.csv')
  monkeypatch.setattr(csv_ranges, 'RANGE_BYTES', 2000)  # the census adds up over ranges
  examples = run_executor(arrow_executor.Executor, tmp_path, tmp_path / 'out', label_key='label')
  types = json.loads(examples.get_string_custom_property('column_types'))['single_split']
  assert types == {
    'price': 'FLOAT',
    'rate': 'FLOAT',
    'count': 'FLOAT',
    'word': 'STRING',
    'big': 'STRING',
    'label': 'FLOAT',
  }
  assert json.loads(examples.get_string_custom_property('numbers_from_text')) == {
    'count': {'placeholders': 11, 'other': 0, 'forms': []},
    'label': {'placeholders': 0, 'other': 0, 'forms': ['currency signs']},
    'price': {'placeholders': 0, 'other': 1, 'forms': ['currency signs', 'thousands separators']},
    'rate': {'placeholders': 10, 'other': 0, 'forms': ['percent signs']},
  }
  rows = [
    tf.train.Example.FromString(r).features.feature
    for split in ('train', 'eval')
    for r in _records(examples.uri, split)
  ]
  assert len(rows) == 300 and len(glob.glob(os.path.join(examples.uri, 'Split-train', '*'))) > 3
  prices = sorted(v for row in rows for v in row['price'].float_list.value)
  assert len(prices) == 299 and prices[0] == 1000.0 and prices[-1] == 1448.5
  assert sum(not row['rate'].float_list.value for row in rows) == 10
  assert {row['label'].float_list.value[0] for row in rows} == {i + 0.5 for i in range(7)} | {1}


def test_a_column_of_numbers_as_text_in_one_range_and_words_in_another_stays_strings():
  kinds = type_inference.ColumnType
  names, label = ['a', 'b', 'label'], 'label'
  typings = [[kinds.STRING, kinds.INT, kinds.STRING], [kinds.STRING, kinds.STRING, kinds.STRING]]
  census = [{'a': [100, 50, 0, 1], 'label': [10, 10, 0, 0]}, {'b': [9, 9, 0, 0]}]
  merged = type_inference.numbers_from_text(typings, census, names, label)
  assert merged == [kinds.STRING, kinds.NUMBER_TEXT, kinds.STRING]  # a: no census in range 2
  census[1].update(a=[100, 0, 0, 0], label=[10, 10, 0, 0])
  merged = type_inference.numbers_from_text(typings, census, names, label)
  assert merged == [kinds.NUMBER_TEXT, kinds.NUMBER_TEXT, kinds.NUMBER_TEXT]
  census[1]['label'] = [10, 10, 0, 1]  # one label cell no number: the label stays strings
  assert type_inference.numbers_from_text(typings, census, names, label)[2] == kinds.STRING


def test_decimal_commas_are_read_as_points_in_columns_of_numbers_only():
  """A `;` or tab file (csv_dialect.Dialect.decimal_comma): `12,5` is 12.5 where the column is
  numbers; a column of words keeps its cells as written."""
  table = pa.table(
    {
      'size': ['12,5', '3', '-0,25', '', '1e3'],
      'word': ['Smith, John', '1,5', 'a', 'b', 'c'],
    }
  )
  numbers = csv_ranges.decimal_points(table)
  types = type_inference.column_types(numbers)
  assert types == [type_inference.ColumnType.FLOAT, type_inference.ColumnType.STRING]
  assert type_inference.column_types(table)[0] == type_inference.ColumnType.STRING  # without: words
  batch = example_encoding.to_record_batch(example_encoding.as_read(table, numbers, types), types)
  assert batch.column(0).to_pylist() == [[12.5], [3.0], [-0.25], [], [1000.0]]
  assert batch.column(1).to_pylist() == [[c.encode()] for c in table.column('word').to_pylist()]


def test_files_of_two_delimiters_are_refused_in_one_line_naming_both(tmp_path):
  (tmp_path / 'a.csv').write_text('x ; y\n1;2\n')
  (tmp_path / 'b.csv').write_text('x,y\n1,2\n')
  with pytest.raises(UnusableData) as raised:
    run_executor(arrow_executor.Executor, tmp_path, tmp_path / 'out')
  assert str(raised.value) == (
    f'{tmp_path / "b.csv"} is comma-separated, {tmp_path / "a.csv"} semicolon-separated: save '
    'the CSV files of one run alike'
  )
