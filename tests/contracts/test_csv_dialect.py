"""contracts/csv_dialect.py: the same odd CSV files read into the same rows, with the same counts
of repeated headers skipped and inf / nan cells made missing, and text cells as written (`NA` a
category, not missing), by `run` (the Arrow CsvExampleGen's functions, csv_ranges.py and its
neighbours in components/csv_example_gen/), `predict` (inference/inputs.py) and `monitor`
(monitoring/serving_data.py); a row of another width read by none; `run`'s first look reads them
alike, and `--csv-reader tfx` refuses what TFX's reader cannot read."""

import math

import pytest

from cli.inputs import csv_input
from contracts import artifacts, csv_dialect
from contracts.errors import UserError
from inference import inputs

SCHEMA = """
feature { name: "size" type: FLOAT }
feature { name: "rooms" type: INT }
feature { name: "colour" type: BYTES }
"""
ODD_FILES = {
  # Excel's "CSV UTF-8" in a locale of decimal commas: a byte-order mark, `;`, CRLF
  'excel.csv': '\ufeffsize; rooms ;colour\r\n12,5;3;red\r\n;4;"dark\r\nblue"\r\n',
  # a locale that writes a decimal comma after points grouping thousands, a currency sign
  'thousands.csv': 'size;rooms;colour\n"1.234,5 €";3;red\n1.025.162,5;4;blue\n',
  'tabs.csv': 'size\trooms\tcolour\n1.5\t3\t"a\tb"\n\n2\t5\tgreen\n',
  'commas.csv': 'size,rooms,colour\n"1,212.5",3,"dark\nred"\n\n$2,unknown,blue\n',
  'crlf.csv': 'size,rooms,colour\r\n2.5,1,"two\r\nlines"\r\n3,2,plain\r\n',
  # files joined with their headers (spaces around the names), inf and nan cells
  'joined.csv': (
    ' size , rooms ,colour\n1.5,3,red\n size , rooms ,colour\ninf,4,blue\n-inf,5,x\nnan,6,y\n'
  ),
  # a text column's placeholders and spaces are categories as written; only an empty cell is missing
  'text.csv': 'size,rooms,colour\n1,2,NA\n2,3, n/a \n3,4,\n4,5,None\n5,6,"?"\n6,7,  \n',
}
ROWS = {
  'excel.csv': [(12.5, 3, 'red'), (None, 4, 'dark\r\nblue')],
  'thousands.csv': [(1234.5, 3, 'red'), (1025162.5, 4, 'blue')],
  'tabs.csv': [(1.5, 3, 'a\tb'), (2.0, 5, 'green')],
  'commas.csv': [(1212.5, 3, 'dark\nred'), (2.0, None, 'blue')],
  'crlf.csv': [(2.5, 1, 'two\r\nlines'), (3.0, 2, 'plain')],
  'joined.csv': [(1.5, 3, 'red'), (None, 4, 'blue'), (None, 5, 'x'), (None, 6, 'y')],
  'text.csv': [
    (1, 2, 'NA'),
    (2, 3, ' n/a '),
    (3, 4, None),
    (4, 5, 'None'),
    (5, 6, '?'),
    (6, 7, '  '),
  ],
}
COUNTS = {'joined.csv': (1, 3)}  # (repeated headers skipped, inf / nan cells made missing)
COLUMNS = ('size', 'rooms', 'colour')


def test_a_header_s_delimiter_is_the_one_it_holds_most_of_outside_quotes():
  assert csv_dialect.of_header('"a;b",c,d') == csv_dialect.Dialect(',', False)
  assert csv_dialect.of_header('a;b;"c,d,e"').delimiter == ';'
  assert (
    csv_dialect.of_header('a\tb').delimiter == '\t' and csv_dialect.of_header('a').delimiter == ','
  )
  assert (
    csv_dialect.of_header('a;b').decimal_comma and not csv_dialect.of_header('a,b').decimal_comma
  )


def _row(feature) -> tuple:
  """(size, rooms, colour) of a tf.Example's features, None where a feature has no value."""
  found = []
  for name in COLUMNS:
    values = feature[name]
    kind = values.WhichOneof('kind')
    value = list(getattr(values, kind).value) if kind else []
    found.append((value[0].decode() if kind == 'bytes_list' else value[0]) if value else None)
  return tuple(found)


def _ran(path):
  """The rows and counts of `run`: the Arrow CsvExampleGen's steps on one range (the executor
  runs them in Beam, components/csv_example_gen/executor.py)."""
  import tensorflow as tf

  from components.csv_example_gen import csv_ranges, example_encoding, type_inference

  data = path.read_bytes()
  first = data[: data.index(b'\n') + 1]
  dialect, names = csv_dialect.header(first)
  table = csv_ranges.read_range(data[len(first) :], names, str(path), 2, dialect)
  table, headers = csv_ranges.without_header_rows(table)
  numbers = csv_ranges.decimal_points(table) if dialect.decimal_comma else table
  types = type_inference.column_types(numbers)
  types = type_inference.numbers_from_text(
    [types], [type_inference.text_census(numbers, types)], names, ''
  )
  non_finite = []
  records = example_encoding.to_examples(
    example_encoding.as_read(table, numbers, types), types, non_finite
  )
  rows = [_row(tf.train.Example.FromString(r).features.feature) for r in records]
  return rows, (headers, sum(non_finite))


def _predicted(path):
  layout = inputs.csv_layout(str(path), list(COLUMNS))
  kinds = {'size': 'float', 'rooms': 'float', 'colour': 'string'}
  found, counts = [], csv_dialect.Counts()
  for read in inputs.read_csv(0, path.name, str(path), layout, kinds, counts):
    size, rooms = (
      None if math.isnan(v) else v for v in (read.inputs['size'], read.inputs['rooms'])
    )
    found.append((size, rooms, read.inputs['colour'] or None))  # '': missing in predict_columns
  return found, (counts.repeated_headers, counts.non_finite_cells)


def _schema():
  from google.protobuf import text_format
  from tensorflow_metadata.proto.v0 import schema_pb2

  return text_format.Parse(SCHEMA, schema_pb2.Schema())


def _monitored(path):
  import tensorflow as tf

  from monitoring import serving_data

  counts = csv_dialect.Counts()
  records = serving_data.examples(str(path), _schema(), counts)
  rows = [_row(tf.train.Example.FromString(r).features.feature) for r in records]
  return rows, (counts.repeated_headers, counts.non_finite_cells)


def _odd_file(tmp_path, name):
  path = tmp_path / name
  path.write_bytes(ODD_FILES[name].encode())
  return path


@pytest.mark.parametrize('name', ODD_FILES)
def test_predict_and_monitor_read_the_same_rows_from_the_same_odd_file(tmp_path, name):
  path = _odd_file(tmp_path, name)
  expected = (ROWS[name], COUNTS.get(name, (0, 0)))
  assert _predicted(path) == expected
  assert _monitored(path) == expected


@pytest.mark.parametrize('name', ODD_FILES)
def test_run_reads_the_rows_predict_and_monitor_read(tmp_path, name):
  assert _ran(_odd_file(tmp_path, name)) == (ROWS[name], COUNTS.get(name, (0, 0)))


def test_the_csv_example_gen_writes_the_rows_of_an_excel_export(tmp_path):
  """The executor itself (its dialect found from the header, decimal commas read) on the oddest
  file: the rows _ran reads, over its train and eval splits."""
  import tensorflow as tf

  from components.csv_example_gen import executor
  from tests.support.example_gens import run_executor

  path = tmp_path / 'data' / 'excel.csv'
  path.parent.mkdir()
  path.write_bytes(ODD_FILES['excel.csv'].encode())
  examples = run_executor(executor.Executor, path.parent, tmp_path / 'out')
  records = tf.data.TFRecordDataset(tf.io.gfile.glob(f'{examples.uri}/Split-*/*'))
  rows = [_row(tf.train.Example.FromString(r.numpy()).features.feature) for r in records]
  assert sorted(rows, key=str) == sorted(ROWS['excel.csv'], key=str)
  said = examples.get_string_custom_property(artifacts.CSV_DIALECT)  # the summary's `csv:` line
  assert said == (
    'semicolon-separated, decimal commas in number columns read as points (12,5 is 12.5), '
    "a byte-order mark (Excel's CSV UTF-8) left out"
  )


def test_a_plain_comma_file_is_described_by_nothing_and_a_tab_file_by_its_delimiter():
  assert csv_dialect.Dialect(',', False).described() == ''
  assert (
    csv_dialect.Dialect(',', True).described() == "a byte-order mark (Excel's CSV UTF-8) left out"
  )
  assert csv_dialect.Dialect('\t').described().startswith('tab-separated, decimal commas')


def test_a_row_of_another_width_is_read_by_no_reader_and_named_by_its_line(tmp_path):
  from components.csv_example_gen import csv_ranges

  path = tmp_path / 'wide.csv'
  path.write_text('size,rooms,colour\n1,2,a\n3,4,b,extra\n5,6,c\n')
  words = 'line 3 has 4 cells, the header 3 columns'
  with pytest.raises(csv_ranges.CsvError, match=f': {words}$'):
    _ran(path)
  with pytest.raises(UserError, match=f'^--serving-data {path}: {words}$'):
    _monitored(path)
  layout = inputs.csv_layout(str(path), list(COLUMNS))
  read = list(inputs.read_csv(0, 'wide.csv', str(path), layout, {'size': 'float'}))
  assert [type(r).__name__ for r in read] == ['Input', 'Unreadable', 'Input']
  assert read[1].reason == words


def test_the_counts_reach_the_user_in_one_line():
  assert csv_dialect.Counts().line() == ''
  assert csv_dialect.Counts(2, 3).line() == (
    '2 repeated header line(s) skipped, 3 inf/nan cell(s) read as missing'
  )
  counts = csv_dialect.Counts()
  assert math.isnan(csv_dialect.number('NA', False, counts)) and counts.non_finite_cells == 0
  assert math.isnan(csv_dialect.number('1e999', False, counts)) and counts.non_finite_cells == 1
  assert csv_dialect.number('12,5', True, counts) == 12.5


def test_run_s_first_look_reads_the_odd_files_and_tfx_s_reader_refuses_them_in_one_line(tmp_path):
  for name, refused in (
    ('excel.csv', 'starts with a byte-order mark'),
    ('tabs.csv', 'is tab-separated'),
    ('commas.csv', ''),
  ):
    path = _odd_file(tmp_path, name)
    assert csv_input.csv_header(str(path)) == list(COLUMNS)
    assert csv_input.label_task(str(path), 'size', None, 'auto')[0] == 'regression'
    if refused:
      with pytest.raises(UserError, match=f'--csv-reader tfx: .*{name} {refused}') as e:
        csv_input.refuse_tfx_dialect(str(path))
      assert '\n' not in str(e.value)
    else:
      csv_input.refuse_tfx_dialect(str(path))
  path.write_bytes(ODD_FILES['excel.csv'].encode()[len(csv_dialect.BOM) :])
  with pytest.raises(UserError, match='is semicolon-separated'):
    csv_input.refuse_tfx_dialect(str(path))
  path.write_text('size, rooms, colour\n1,2,a\n')
  with pytest.raises(UserError, match="has spaces around header names \\(' rooms'\\)"):
    csv_input.refuse_tfx_dialect(str(path))
