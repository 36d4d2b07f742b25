"""monitoring/distances.py and monitoring/serving_data.py on small hand-made data: which measure
each feature gets, thresholds, the SERVING environment, and how serving files are read."""

import subprocess
import sys

import numpy as np
import pytest

from contracts.errors import UserError

ROOT = __file__.rsplit('/tests/', 1)[0]
SCHEMA = """
feature { name: "size" type: FLOAT presence { min_fraction: 1.0 } }
feature { name: "rooms" type: INT presence { min_fraction: 1.0 } }
feature { name: "colour" type: BYTES domain: "colour" presence { min_fraction: 1.0 } }
feature { name: "label" type: INT presence { min_fraction: 1.0 } }
string_domain { name: "colour" value: "red" value: "blue" value: "green" }
"""


@pytest.fixture(scope='module')
def schema():
  from google.protobuf import text_format
  from tensorflow_metadata.proto.v0 import schema_pb2

  return text_format.Parse(SCHEMA, schema_pb2.Schema())


def _examples(size, rooms, colour, label=None):
  import tensorflow as tf

  found = []
  for i in range(len(size)):
    features = {
      'size': tf.train.Feature(float_list=tf.train.FloatList(value=[size[i]])),
      'rooms': tf.train.Feature(int64_list=tf.train.Int64List(value=[rooms[i]])),
      'colour': tf.train.Feature(bytes_list=tf.train.BytesList(value=[colour[i].encode()])),
    }
    if label is not None:
      features['label'] = tf.train.Feature(int64_list=tf.train.Int64List(value=[label[i]]))
    found.append(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
  return found


def _data(seed, n=2000, shift=0.0, move=0.0, label=True):
  random = np.random.default_rng(seed)
  colours = random.choice(['red', 'blue', 'green'], n, p=[0.5, 0.3, 0.2]).tolist()
  for i in range(int(move * n)):  # the first move·n rows become green
    colours[i] = 'green'
  return _examples(
    (random.normal(50, 10, n) + shift * 10).tolist(),
    random.integers(1, 6, n).tolist(),
    colours,
    random.integers(0, 2, n).tolist() if label else None,
  )


def _compare(schema, serving, thresholds=None):
  from monitoring import distances

  training = distances.statistics(_data(0), schema)
  monitoring_schema = distances.monitoring_schema(schema, training, 'label', thresholds or {})
  serving_statistics = distances.statistics(serving, monitoring_schema, leave_out=['label'])
  return distances.compare(training, serving_statistics, monitoring_schema), monitoring_schema


def test_same_distribution_without_the_label_flags_nothing(schema):
  result, _ = _compare(schema, _data(1, n=500, label=False))
  assert result['flagged'] == [] and result['anomalies'] == {}
  measures = {name: entry['measure'] for name, entry in result['features'].items()}
  assert measures == {
    'size': 'jensen_shannon_divergence',
    'rooms': 'jensen_shannon_divergence',
    'colour': 'infinity_norm',
  }
  assert all(entry['drift'] is None for entry in result['features'].values())


def test_a_shift_and_a_move_are_flagged_each_by_its_measure(schema):
  shifted, _ = _compare(schema, _data(1, n=500, shift=3))
  assert shifted['flagged'] == ['size']
  moved, _ = _compare(schema, _data(1, n=500, move=0.2))
  assert moved['flagged'] == ['colour']
  assert moved['features']['colour']['value'] == pytest.approx(0.2, abs=0.06)


def test_thresholds_from_the_flag_the_schema_or_the_default(schema):
  from monitoring import distances

  strict, prepared = _compare(schema, _data(1, n=500), {'*': 1e-6})
  assert set(strict['flagged']) == {'size', 'rooms', 'colour'}
  label = next(f for f in prepared.feature if f.name == 'label')
  assert list(label.not_in_environment) == ['SERVING'] and not label.HasField('skew_comparator')
  own = type(schema)()
  own.CopyFrom(schema)
  next(f for f in own.feature if f.name == 'colour').skew_comparator.infinity_norm.threshold = 0.5
  training = distances.statistics(_data(0), schema)
  prepared = distances.monitoring_schema(own, training, 'label', {'size': 0.01})
  thresholds = {
    f.name: getattr(f.skew_comparator, distances.JSD).threshold
    or getattr(f.skew_comparator, distances.L_INFINITY).threshold
    for f in prepared.feature
    if f.name != 'label'
  }
  assert thresholds == {
    'size': 0.01,
    'rooms': distances.DEFAULT_THRESHOLDS[distances.JSD],
    'colour': 0.5,
  }


def test_drift_is_measured_against_the_previous_window(schema):
  from monitoring import distances

  training = distances.statistics(_data(0), schema)
  prepared = distances.monitoring_schema(schema, training, 'label', {})
  previous = distances.statistics(_data(1, n=500), prepared, ['label'])
  now = distances.statistics(_data(2, n=500, move=0.2), prepared, ['label'])
  result = distances.compare(training, now, prepared, previous)
  assert result['features']['colour']['drift']['flagged']
  assert not result['features']['size']['drift']['flagged']


def test_a_spreadsheet_csv_is_read_with_the_schemas_types(schema, tmp_path):
  import tensorflow as tf

  from monitoring import serving_data

  path = tmp_path / 'export.csv'
  path.write_bytes('\ufeffsize;rooms;colour\n12,5;3;red\n;4;\n'.encode())
  first, second = [
    tf.train.Example.FromString(e).features.feature
    for e in serving_data.examples(str(path), schema)
  ]
  assert first['size'].float_list.value == [12.5] and first['rooms'].int64_list.value == [3]
  assert first['colour'].bytes_list.value == [b'red']
  assert second['size'].HasField('float_list') and not second['size'].float_list.value  # empty cell


def test_numbers_written_as_text_are_read_as_training_reads_them(schema, tmp_path):
  import tensorflow as tf

  from monitoring import serving_data

  path = tmp_path / 'export.csv'
  path.write_text('size,rooms,colour\n"$1,212.50",3,red\nunknown,n/a,blue\n')
  first, second = [
    tf.train.Example.FromString(e).features.feature
    for e in serving_data.examples(str(path), schema)
  ]
  assert first['size'].float_list.value == [1212.5] and first['rooms'].int64_list.value == [3]
  assert not second['size'].float_list.value and not second['rooms'].int64_list.value


def test_a_quoted_newline_stays_in_its_cell_and_errors_name_the_line_a_row_starts_on(
  schema, tmp_path
):
  import tensorflow as tf

  from monitoring import serving_data

  path = tmp_path / 'export.csv'
  path.write_text('size,rooms,colour\n1.5,3,"dark\nred"\n2,4,blue\n')
  found = [
    tf.train.Example.FromString(e).features.feature
    for e in serving_data.examples(str(path), schema)
  ]
  assert [f['colour'].bytes_list.value for f in found] == [[b'dark\nred'], [b'blue']]
  path.write_text('size,rooms,colour\n1.5,3,"dark\nred"\n2,x,blue\n')
  with pytest.raises(UserError, match=r"export.csv:4: column rooms: 'x' is not an integer"):
    serving_data.examples(str(path), schema)


@pytest.mark.parametrize(
  'text, words',
  [
    ('size,rooms,weight\n1,2,3\n', 'columns the training schema does not have: weight'),
    ('size,rooms\n1,two\n', "column rooms: 'two' is not an integer"),
    ('size,rooms\n1,2.5\n', "column rooms: '2.5' is not an integer"),
  ],
)
def test_csv_that_does_not_fit_the_schema_is_refused_by_name(schema, tmp_path, text, words):
  from monitoring import serving_data

  path = tmp_path / 'bad.csv'
  path.write_text(text)
  with pytest.raises(UserError, match=words):
    serving_data.examples(str(path), schema)


def test_prediction_logs_are_told_from_examples(schema, tmp_path):
  import tensorflow as tf

  from contracts import request_log, serving
  from monitoring import serving_data

  log = request_log.predict_log(
    serving.COLUMNS,
    {
      'size': np.array([1.5, np.nan], np.float32),
      'rooms': np.array([2.0, 3.0]),
      'colour': np.array([b'blue', b''], dtype=object),
    },
  )
  request_log.write(str(tmp_path / 'requests.tfrecord'), [log])
  with tf.io.TFRecordWriter(str(tmp_path / 'records.tfrecord')) as writer:
    writer.write(_data(0, n=1)[0])
  assert serving_data.kind_of([str(tmp_path / 'requests.tfrecord')]) == serving_data.PREDICTION_LOG
  assert serving_data.kind_of([str(tmp_path / 'records.tfrecord')]) == serving_data.TFRECORDS
  rows = [
    tf.train.Example.FromString(e).features.feature
    for e in serving_data.examples(str(tmp_path / 'requests.tfrecord'), schema)
  ]
  assert rows[0]['size'].float_list.value == [1.5] and rows[0]['rooms'].int64_list.value == [2]
  assert not rows[1]['size'].float_list.value and not rows[1]['colour'].bytes_list.value


def test_help_does_not_import_tensorflow():
  code = (
    'import sys; from cli import main\n'
    'try:\n  main.main(["monitor", "--help"])\nexcept SystemExit:\n  pass\n'
    'assert "tensorflow" not in sys.modules, "tensorflow imported"'
  )
  done = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True)
  assert done.returncode == 0, done.stderr
  assert '--serving-data' in done.stdout


def test_tfrecords_without_the_models_columns_are_refused_and_one_lacking_is_flagged(
  schema, tmp_path
):
  """As `predict` (contracts/record_features.py): records holding none of the schema's features
  but the label are refused; a feature absent from every record is flagged by the comparison."""
  import tensorflow as tf

  from monitoring import serving_data

  def write(records):
    with tf.io.TFRecordWriter(str(tmp_path / 'serving.tfrecord')) as writer:
      for record in records:
        writer.write(record)
    return str(tmp_path / 'serving.tfrecord')

  labelled = tf.train.Example()
  labelled.features.feature['label'].int64_list.value.append(1)
  path = write([tf.train.Example().SerializeToString(), labelled.SerializeToString()])
  with pytest.raises(UserError, match="the first 2 record.s. hold none of the model's 3 input"):
    serving_data.examples(path, schema, label='label')
  without_size = []
  for record in _data(1, n=300, label=False):
    example = tf.train.Example.FromString(record)
    del example.features.feature['size']
    without_size.append(example.SerializeToString())
  found = serving_data.examples(write(without_size), schema, label='label')
  result, _ = _compare(schema, found)
  assert result['flagged'] == ['size']
  assert result['anomalies'] == {'size': ['The feature was not present in any examples.']}
