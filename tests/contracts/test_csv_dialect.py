"""contracts/csv_dialect.py: the same odd CSV files read into the same rows by `run` (the Arrow
CSV ExampleGen), `predict` (inference/inputs.py) and `monitor` (monitoring/serving_data.py);
`run`'s first look reads them alike, and `--csv-reader tfx` refuses what TFX cannot read."""

import math

import pytest

from cli.inputs import csv_input
from contracts import csv_dialect
from contracts.errors import UserError
from inference import inputs

SCHEMA = """
feature { name: "size" type: FLOAT }
feature { name: "rooms" type: INT }
feature { name: "colour" type: BYTES }
"""
ODD_FILES = {
  # Excel's "CSV UTF-8" in a locale of decimal commas: a byte-order mark, `;`, CRLF, spaced names
  'excel.csv': '\ufeffsize; rooms ;colour\r\n12,5;3;red\r\n;4;"dark\r\nblue"\r\n',
  'tabs.csv': 'size\trooms\tcolour\n1.5\t3\t"a\tb"\n\n2\t5\tgreen\n',
  'commas.csv': 'size,rooms,colour\n"1,212.5",3,"dark\nred"\n\n$2,unknown,blue\n',
}
ROWS = {
  'excel.csv': [(12.5, 3, 'red'), (None, 4, 'dark\r\nblue')],
  'tabs.csv': [(1.5, 3, 'a\tb'), (2.0, 5, 'green')],
  'commas.csv': [(1212.5, 3, 'dark\nred'), (2.0, None, 'blue')],
}


def test_a_header_s_delimiter_is_the_one_it_holds_most_of_outside_quotes():
  assert csv_dialect.of_header('"a;b",c,d') == csv_dialect.Dialect(',', False)
  assert csv_dialect.of_header('a;b;"c,d,e"').delimiter == ';'
  assert (
    csv_dialect.of_header('a\tb').delimiter == '\t' and csv_dialect.of_header('a').delimiter == ','
  )
  assert (
    csv_dialect.of_header('a;b').decimal_comma and not csv_dialect.of_header('a,b').decimal_comma
  )


def _predicted(path):
  layout = inputs.csv_layout(str(path), ['size', 'rooms', 'colour'])
  kinds = {'size': 'float', 'rooms': 'float', 'colour': 'string'}
  found = []
  for read in inputs.read_csv(0, path.name, str(path), layout, kinds):
    size, rooms = (
      None if math.isnan(v) else v for v in (read.inputs['size'], read.inputs['rooms'])
    )
    found.append((size, rooms, read.inputs['colour']))
  return found


def _monitored(path):
  from google.protobuf import text_format
  import tensorflow as tf
  from tensorflow_metadata.proto.v0 import schema_pb2

  from monitoring import serving_data

  schema = text_format.Parse(SCHEMA, schema_pb2.Schema())
  found = []
  for record in serving_data.examples(str(path), schema):
    feature = tf.train.Example.FromString(record).features.feature
    size, rooms = feature['size'].float_list.value, feature['rooms'].int64_list.value
    colour = feature['colour'].bytes_list.value[0].decode()
    found.append((size[0] if size else None, rooms[0] if rooms else None, colour))
  return found


def _trained(path):
  """The rows the Arrow CSV ExampleGen writes (train and eval), ordered by colour."""
  import tensorflow as tf

  from components.csv_example_gen import executor
  from tests.support.example_gens import run_executor

  examples = run_executor(executor.Executor, path.parent, path.parent / 'out')
  found = []
  for record in tf.data.TFRecordDataset(tf.io.gfile.glob(f'{examples.uri}/Split-*/*')):
    feature = tf.train.Example.FromString(record.numpy()).features.feature
    size = feature['size'].float_list.value
    rooms = feature['rooms'].int64_list.value or feature['rooms'].float_list.value
    colour = feature['colour'].bytes_list.value[0].decode()
    found.append((size[0] if size else None, rooms[0] if rooms else None, colour))
  return sorted(found, key=lambda row: row[2])


@pytest.mark.parametrize('name', ODD_FILES)
def test_run_predict_and_monitor_read_the_same_rows_from_the_same_odd_file(tmp_path, name):
  path = tmp_path / 'data' / name
  path.parent.mkdir()
  path.write_bytes(ODD_FILES[name].encode())
  assert _predicted(path) == ROWS[name]
  assert _monitored(path) == ROWS[name]
  assert _trained(path) == sorted(ROWS[name], key=lambda row: row[2])


def test_run_s_first_look_reads_the_odd_files_and_tfx_s_reader_refuses_them_in_one_line(tmp_path):
  for name, refused in (
    ('excel.csv', 'starts with a byte-order mark'),
    ('tabs.csv', 'is tab-separated'),
    ('commas.csv', ''),
  ):
    path = tmp_path / name
    path.write_bytes(ODD_FILES[name].encode())
    assert csv_input.csv_header(str(path)) == ['size', 'rooms', 'colour']
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
