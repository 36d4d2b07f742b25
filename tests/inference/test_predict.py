"""inference/ and `pipeline.py predict` on a tiny SavedModel with a predict_columns signature:
rows, order, skipped inputs, class names, request logs and bad input (tests/e2e/test_predict.py has
the real runs)."""

import csv
import math
import os

import numpy as np
import pytest

from cli import main as cli_main
from contracts import predictions, request_log, serving
from contracts.errors import EXIT_BAD_INPUT, EXIT_OK
from contracts.image_files import NOT_AN_IMAGE
from inference import inputs, model
from tests.support import regression_model

NAMES = ['low', 'high', 'other']


@pytest.fixture(scope='module')
def tiny_model(tmp_path_factory) -> str:
  """predict_columns(fare: float, payment_type: string): softmax of [fare (NaN → 0),
  len(payment_type), 1]; fails on a fare of 666 (an input the model cannot take)."""
  import tensorflow as tf

  class Tiny(tf.Module):
    @tf.function(
      input_signature=[
        tf.TensorSpec([None], tf.float32, name='fare'),
        tf.TensorSpec([None], tf.string, name='payment_type'),
      ]
    )
    def columns(self, fare, payment_type):
      tf.debugging.assert_none_equal(fare, 666.0, message='fare 666')
      fare = tf.where(tf.math.is_nan(fare), tf.zeros_like(fare), fare)
      length = tf.cast(tf.strings.length(payment_type), tf.float32)
      probabilities = tf.nn.softmax(tf.stack([fare, length, tf.ones_like(fare)], axis=1))
      class_ids = tf.argmax(probabilities, axis=-1)
      return {
        serving.PROBABILITIES: probabilities,
        serving.CLASS_IDS: class_ids,
        serving.CLASS_NAMES: tf.gather(tf.constant(NAMES), class_ids),
      }

  module = Tiny()
  output = tmp_path_factory.mktemp('tiny')
  names = output / serving.CLASS_NAMES_ASSET
  names.write_text(''.join(f'{name}\n' for name in NAMES))
  module.class_names_asset = tf.saved_model.Asset(str(names))  # as trainer/signatures.py saves
  path = str(output / 'serving' / '7')
  tf.saved_model.save(module, path, signatures={serving.COLUMNS: module.columns})
  os.makedirs(output / 'serving' / '12')  # no SavedModel inside: not a version
  return str(output)


def _expected(fare: float, payment_type: str) -> np.ndarray:
  logits = np.array([0.0 if math.isnan(fare) else fare, len(payment_type.encode()), 1.0])
  e = np.exp(logits - logits.max())
  return e / e.sum()


def _predict(*argv):
  return cli_main.main(['predict', *argv])


def _rows(path):
  with open(path, newline='') as f:
    return list(csv.DictReader(f))


def test_every_row_predicted_in_order_and_the_unreadable_listed(tiny_model, tmp_path, capsys):
  data = tmp_path / 'in.csv'
  data.write_text(
    'id,payment_type,fare,tips\n'  # id and tips feed no input: ignored
    '1,Cash,0.5,1\n'
    '2,,3,0\n'  # '' → missing
    '3,Credit Card,nan,\n'  # NaN → missing
    '4,Cash,lots,1\n'  # not a number: skipped
    '5,Cash,666,1\n'  # the model fails on it: skipped
    'id, payment_type ,fare,tips\n'  # the header again (files joined): skipped, counted
    + ''.join(f'{i},Card,{i % 5},1\n' for i in range(6, 200))
  )
  out = str(tmp_path / 'p.csv')
  log = str(tmp_path / 'log')
  assert (
    _predict('--data', str(data), '--output', tiny_model, '--out', out, '--log', log) == EXIT_OK
  )
  shown = capsys.readouterr().out
  rows = _rows(out)
  assert tuple(rows[0]) == predictions.HEADER
  assert [r['id'] for r in rows] == [f'in.csv:{i}' for i in [1, 2, 3] + list(range(6, 200))]
  cells = {1: (0.5, 'Cash'), 2: (3.0, ''), 3: (math.nan, 'Credit Card')}
  cells.update({i: (float(i % 5), 'Card') for i in range(6, 200)})
  for r, (_, (fare, payment)) in zip(rows, sorted(cells.items())):
    expected = _expected(fare, payment)
    assert r[predictions.CLASS] == NAMES[int(np.argmax(expected))]
    assert float(r[predictions.PROBABILITY]) == pytest.approx(expected.max(), rel=1e-5)
    top = [part.split('=') for part in r[predictions.TOP_K].split(';')]
    assert [name for name, _ in top] == [NAMES[i] for i in np.argsort(-expected, kind='stable')]
    assert sum(float(p) for _, p in top) == pytest.approx(1.0, abs=1e-5)
  skipped = _rows(out[: -len('.csv')] + '_skipped.csv')
  assert [(s['id'], s['reason'][:30]) for s in skipped] == [
    ('in.csv:4', "column fare: 'lots' is not a n"),
    ('in.csv:5', 'the model failed on it: assert'),
  ]
  assert 'predicted 197 input(s)' in shown and 'skipped 2 input(s)' in shown
  assert (
    'missing numbers: 1 row(s) predicted with empty, NA, inf or nan cells as missing (0, as in '
    'training): fare 1\n'
  ) in shown  # row 3 (the fare 'nan'); row 2's empty payment_type is a category
  assert 'CSV rows: 1 repeated header line(s) skipped, 1 inf/nan cell(s) read as missing\n' in shown
  assert '/serving/7 (predict_columns)' in shown

  logged = list(request_log.read(request_log.files(log)))
  assert len(logged) == 197 and {r.signature for r in logged} == {serving.COLUMNS}
  first, second = logged[0].inputs, logged[1].inputs
  assert sorted(first) == ['fare', 'payment_type']
  np.testing.assert_array_equal(first['fare'], np.array([0.5], np.float32))
  assert first['payment_type'].tolist() == [b'Cash'] and second['payment_type'].tolist() == [b'']


def test_empty_or_na_number_cells_are_marked_missing_per_row(tmp_path):
  data = tmp_path / 'rows.csv'
  data.write_text('fare,tolls,payment_type\n1,2,Cash\n,NA,Cash\nn/a,0,\n')
  layout = inputs.csv_layout(str(data), ['fare', 'tolls', 'payment_type'])
  kinds = {'fare': 'double', 'tolls': 'double', 'payment_type': 'string'}
  read = list(inputs.read_csv(0, 'rows.csv', str(data), layout, kinds))
  assert [r.inputs.get(inputs.MISSING_NUMBERS) for r in read] == [None, ['fare', 'tolls'], ['fare']]


def test_numbers_written_as_text_are_read_as_training_reads_them(tmp_path):
  data = tmp_path / 'rows.csv'
  data.write_text('price,rate\n"$1,234.50",8.91%\n(3.20),unknown\nabc,1\n')
  layout = inputs.csv_layout(str(data), ['price', 'rate'])
  read = list(
    inputs.read_csv(0, 'rows.csv', str(data), layout, {'price': 'float', 'rate': 'float'})
  )
  assert read[0].inputs == {'price': 1234.5, 'rate': 8.91}
  assert read[1].inputs['price'] == -3.2 and read[1].inputs[inputs.MISSING_NUMBERS] == ['rate']
  assert read[2].reason == "column price: 'abc' is not a number"


def test_numbers_as_people_write_them_are_read_as_training_reads_them(tmp_path):
  data = tmp_path / 'rows.csv'
  data.write_text('temp;amount;revenue\n−5,2;1 234,5;3.94M\n7;1\u00a0000;534.8k\n', 'utf-8')
  layout = inputs.csv_layout(str(data), ['temp', 'amount', 'revenue'])
  kinds = dict.fromkeys(['temp', 'amount', 'revenue'], 'float')
  read = list(inputs.read_csv(0, 'rows.csv', str(data), layout, kinds))
  assert read[0].inputs == {'temp': -5.2, 'amount': 1234.5, 'revenue': 3940000.0}
  assert read[1].inputs == {'temp': 7.0, 'amount': 1000.0, 'revenue': 534800.0}


def test_an_error_before_any_prediction_leaves_no_log(tiny_model, tmp_path, capsys):
  """An error after the log was opened once left an empty logs/predict-*.log beside --out."""
  (tmp_path / 'images').mkdir()
  (tmp_path / 'images' / 'a.png').write_bytes(b'x')  # the model has no image signature
  new = tmp_path / 'new' / 'deeper'
  argv = ['--data', str(tmp_path / 'images'), '--output', tiny_model]
  assert _predict(*argv, '--out', str(new / 'p.csv')) == EXIT_BAD_INPUT
  assert not (tmp_path / 'new').exists()  # nor the folders made for it
  (tmp_path / 'old' / 'logs').mkdir(parents=True)
  (tmp_path / 'old' / 'logs' / 'earlier.log').write_text('kept')
  assert _predict(*argv, '--out', str(tmp_path / 'old' / 'p.csv')) == EXIT_BAD_INPUT
  assert os.listdir(tmp_path / 'old' / 'logs') == ['earlier.log']
  assert capsys.readouterr().err.count('error: ') == 2


@pytest.fixture(scope='module')
def image_model(tmp_path_factory) -> str:
  """predict_image_bytes(image_bytes): softmax of [bytes / 100, 1] (names: small, large)."""
  import tensorflow as tf

  class Images(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.IMAGE_BYTES_INPUT)])
    def images(self, image_bytes):
      size = tf.cast(tf.strings.length(image_bytes), tf.float32) / 100.0
      probabilities = tf.nn.softmax(tf.stack([tf.ones_like(size), size], axis=1))
      return {serving.PROBABILITIES: probabilities}

  module = Images()
  path = str(tmp_path_factory.mktemp('images') / 'serving' / '1')
  tf.saved_model.save(module, path, signatures={serving.IMAGE_BYTES: module.images})
  return os.path.dirname(path)


def test_the_first_line_counts_every_file_found_and_those_skipped(image_model, tmp_path, capsys):
  """It once counted the 6 images of 7 files found, the .txt skipped later not among them."""
  import PIL.Image

  data = tmp_path / 'photos'
  (data / 'day').mkdir(parents=True)
  for name in ('a.png', 'day/b.png'):
    PIL.Image.new('L', (4, 4)).save(data / name)
  (data / 'notes.txt').write_text('not an image')
  out = str(tmp_path / 'p.csv')
  assert _predict('--data', str(data), '--model', image_model, '--out', out) == EXIT_OK
  first, *rest = capsys.readouterr().out.splitlines()
  assert first.startswith(f'predicting 3 file(s) (images) under {data} with ')
  assert first.endswith(f'; 1 of them skipped: {NOT_AN_IMAGE}')
  assert 'predicted 2 input(s)' in '\n'.join(rest) and [r['id'] for r in _rows(out)] == [
    'a.png',
    'day/b.png',
  ]


def test_the_models_id_column_is_carried_to_each_prediction(tiny_model, tmp_path):
  import shutil

  model_dir = tmp_path / 'with_ids'
  shutil.copytree(os.path.join(tiny_model, 'serving', '7'), model_dir)
  (model_dir / 'assets' / serving.ID_COLUMNS_ASSET).write_text('record_id\n')  # as trained
  data = tmp_path / 'in.csv'
  rows = [(f'r{i:03d}', i % 3, 'Cash' if i % 2 else 'Card') for i in range(30)]
  data.write_text('fare,record_id,payment_type\n' + ''.join(f'{f},{r},{p}\n' for r, f, p in rows))
  out = str(tmp_path / 'p.csv')
  assert _predict('--data', str(data), '--model', str(model_dir), '--out', out) == EXIT_OK
  written = _rows(out)
  assert tuple(written[0]) == predictions.header(['record_id'])
  assert [(w['id'], w['record_id']) for w in written] == [
    (f'in.csv:{n}', r) for n, (r, _, _) in enumerate(rows, 1)
  ]
  assert _predict('--data', str(data), '--model', str(model_dir), '--out', out) == EXIT_OK


def test_a_spreadsheets_semicolon_csv_with_decimal_commas(tiny_model, tmp_path):
  data = tmp_path / 'excel.csv'
  data.write_bytes('\ufefffare;payment_type\r\n"1,5";Cash\r\n2;Card\r\n'.encode('utf-8'))
  out = str(tmp_path / 'p.csv')
  assert _predict('--data', str(data), '--output', tiny_model, '--out', out) == EXIT_OK
  rows = _rows(out)
  assert [r['id'] for r in rows] == ['excel.csv:1', 'excel.csv:2']
  assert float(rows[0][predictions.PROBABILITY]) == pytest.approx(
    _expected(1.5, 'Cash').max(), 1e-5
  )


def test_a_csv_without_the_models_columns_stops_naming_them(tiny_model, tmp_path, capsys):
  data = tmp_path / 'other.csv'
  data.write_text('fare,company\n1,x\n')
  out = tmp_path / 'p.csv'
  code = _predict('--data', str(data), '--output', tiny_model, '--out', str(out))
  assert code == EXIT_BAD_INPUT
  error = capsys.readouterr().err.strip().splitlines()
  assert len(error) == 1 and error[0].startswith('error: ') and 'payment_type' in error[0]
  assert 'fare,' not in error[0].split('inputs:')[1].split('(')[0]  # only the missing one named
  assert not out.exists()


@pytest.mark.parametrize(
  'argv, message',
  [
    (['--data', '{tmp}/nothing'], 'no such file or folder'),
    (['--data', '{tmp}/images'], 'no predict_image_bytes signature'),
    (['--data', '{tmp}/images', '--output', '{tmp}'], 'no pushed model under'),
    (['--data', '{tmp}/images', '--model', '{tmp}'], 'no SavedModel there'),
    (['--data', '{tmp}/mixed'], 'more than one kind'),
  ],
)
def test_bad_input_is_one_line(tiny_model, tmp_path, capsys, argv, message):
  (tmp_path / 'images').mkdir()
  (tmp_path / 'images' / 'a.png').write_bytes(b'x')
  (tmp_path / 'mixed').mkdir()
  (tmp_path / 'mixed' / 'a.csv').write_text('a\n1\n')
  (tmp_path / 'mixed' / 'b.jpg').write_bytes(b'x')
  argv = [a.format(tmp=tmp_path) for a in argv]
  if '--output' not in argv:
    argv += ['--output', tiny_model]
  assert _predict(*argv, '--out', str(tmp_path / 'p.csv')) == EXIT_BAD_INPUT
  error = capsys.readouterr().err.strip().splitlines()
  assert len(error) == 1 and message in error[0], error


def test_the_newest_version_with_a_saved_model_is_found(tiny_model):
  assert model.find('', tiny_model) == os.path.join(tiny_model, 'serving', '7')


def test_an_image_folder_of_any_depth_lists_other_files_to_skip(tmp_path):
  for relpath in ('a/b/c/x.JPG', 'y.png', 'a/notes.txt', '.hidden/z.png', 'a/__pycache__/q.png'):
    (tmp_path / relpath).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / relpath).write_bytes(b'')
  found = inputs.find(str(tmp_path))
  assert found.kind == inputs.IMAGES
  assert found.files == ['a/b/c/x.JPG', 'y.png'] and found.others == ['a/notes.txt']


@pytest.fixture(scope='module')
def text_model(tmp_path_factory) -> str:
  """predict_text(text): softmax of [words, 3] (names: short, long)."""
  import tensorflow as tf

  class Text(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.TEXT_INPUT)])
    def text(self, text):
      words = tf.cast(tf.strings.split(text).row_lengths(), tf.float32)
      probabilities = tf.nn.softmax(tf.stack([3.0 * tf.ones_like(words), words], axis=1))
      class_ids = tf.argmax(probabilities, axis=-1)
      return {
        serving.PROBABILITIES: probabilities,
        serving.CLASS_IDS: class_ids,
        serving.CLASS_NAMES: tf.gather(tf.constant(['short', 'long']), class_ids),
      }

  module = Text()
  path = str(tmp_path_factory.mktemp('text') / 'serving' / '1')
  tf.saved_model.save(module, path, signatures={serving.TEXT: module.text})
  return os.path.dirname(path)


def test_a_text_csv_goes_to_predict_text_from_its_free_text_column(text_model, tmp_path):
  data = tmp_path / 'reviews.csv'
  data.write_text(
    'stars,review\n'
    '5,"A great film, one of the best of the year."\n'
    '1,Dull.\n'
    '3,"Not bad at all, if a little too long."\n'
  )
  out = str(tmp_path / 'p.csv')
  assert (
    _predict('--data', str(data), '--model', text_model, '--out', out, '--log', str(tmp_path)) == 0
  )
  assert [r[predictions.CLASS] for r in _rows(out)] == ['long', 'short', 'long']
  (logged,) = request_log.files(str(tmp_path))
  sent = [r.inputs[serving.TEXT_INPUT][0] for r in request_log.read([logged])]
  assert sent[1] == b'Dull.' and {r.signature for r in request_log.read([logged])} == {serving.TEXT}


def test_help_and_bad_input_import_neither_tensorflow_nor_beam(tmp_path):
  import subprocess
  import sys

  code = (
    'import sys; from cli import main; main.main(["predict", "--data", sys.argv[1]]); '
    'print(sorted(m for m in ("tensorflow", "apache_beam") if m in sys.modules))'
  )
  root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  done = subprocess.run(
    [sys.executable, '-c', code, str(tmp_path / 'nope')],
    cwd=root,
    capture_output=True,
    text=True,
    timeout=120,
  )
  assert done.stdout.strip() == '[]' and 'no such file or folder' in done.stderr


def test_beam_shards_and_gzip_records_are_tfrecords(tmp_path):
  import tensorflow as tf

  shard = tmp_path / 'data-00000-of-00001'  # ImageExampleGen's names: no suffix, GZIP inside
  with tf.io.TFRecordWriter(str(shard), options='GZIP') as writer:
    for record in (b'one', b'two'):
      writer.write(record)
  found = inputs.find(str(tmp_path))
  assert found.kind == inputs.TFRECORDS and found.files == ['data-00000-of-00001']
  read = list(inputs.read_tfrecords(0, found.files[0], str(shard)))
  assert [(r.id, r.inputs[serving.EXAMPLES_INPUT]) for r in read] == [
    ('data-00000-of-00001:1', b'one'),
    ('data-00000-of-00001:2', b'two'),
  ]
  plain = tmp_path / 'cut.tfrecord'
  with tf.io.TFRecordWriter(str(plain)) as writer:
    for record in (b'one', b'two'):
      writer.write(record)
  plain.write_bytes(plain.read_bytes()[:-3])  # the second record cut short: listed, not fatal
  first, last = inputs.read_tfrecords(0, 'cut.tfrecord', str(plain))
  assert first.inputs[serving.EXAMPLES_INPUT] == b'one'
  assert isinstance(last, inputs.Unreadable) and 'damaged TFRecord' in last.reason
  assert last.id == 'cut.tfrecord:2'


@pytest.fixture(scope='module')
def trained_image_model(tmp_path_factory) -> str:
  """A Keras model on 48x40 (height x width) RGB images with the trainer's own image
  signatures (trainer/signatures.py), saved as trainer/task.py saves it."""
  import keras
  import tensorflow as tf

  from contracts import image_record
  from trainer import signatures
  from trainer.data_spec import ImageSpec

  spec = ImageSpec(48, 40, 3, ['a', 'b'], image_record.ENCODED, uniform=False)
  pixels = keras.Input((48, 40, 3))
  flat = keras.layers.Flatten()(keras.layers.Rescaling(1 / 255)(pixels))
  built = keras.Model(pixels, keras.layers.Dense(2, activation='softmax')(flat))
  path = str(tmp_path_factory.mktemp('keras_images') / 'serving' / '1')
  tf.saved_model.save(built, path, signatures=signatures.image_signatures(built, spec))
  return path


def test_images_far_smaller_than_the_models_input_are_named(trained_image_model, tmp_path, capsys):
  import PIL.Image

  assert model.load(trained_image_model, inputs.IMAGES)[1].image_size == (48, 40)
  data = tmp_path / 'photos'
  data.mkdir()
  sizes = {'dot.png': (1, 1), 'strip.png': (40, 4), 'small.png': (5, 5), 'thin.png': (4, 48)}
  for name, size in sizes.items():  # (width, height); a tenth of 40x48 is 4x4.8
    PIL.Image.new('RGB', size, (200, 30, 30)).save(data / name)
  out = str(tmp_path / 'p.csv')
  assert _predict('--data', str(data), '--model', trained_image_model, '--out', out) == EXIT_OK
  said = [line for line in capsys.readouterr().out.splitlines() if line.startswith('scaled up')]
  assert said == [
    "scaled up: 2 image(s) smaller than a tenth of the model's 40x48 input, their predictions "
    'rest on few pixels: dot.png (1x1), strip.png (40x4)'
  ]
  assert len(_rows(out)) == 4  # predicted all the same


def test_no_input_predicted_is_an_error_not_an_empty_success(tiny_model, tmp_path, capsys):
  data = tmp_path / 'bad.csv'
  data.write_text('id,payment_type,fare\n' + ''.join(f'{i},Cash,lots\n' for i in range(5)))
  out = tmp_path / 'p.csv'
  assert _predict('--data', str(data), '--output', tiny_model, '--out', str(out)) == EXIT_BAD_INPUT
  err = capsys.readouterr().err
  assert err.startswith('error: none of the 5 input(s) could be predicted (the first: column fare')
  assert err.count('\n') == 1 and not out.exists()
  assert len(_rows(tmp_path / 'p_skipped.csv')) == 5  # the reasons stay


@pytest.fixture(scope='module')
def regression_output(tmp_path_factory) -> str:
  """A run folder whose serving/3 is tests/support/regression_model's."""
  output = tmp_path_factory.mktemp('regression')
  regression_model.save(str(output / 'serving' / '3'))
  return str(output)


def test_a_regression_model_writes_the_predicted_number_per_row(
  regression_output, tmp_path, capsys
):
  data = tmp_path / 'rows.csv'
  data.write_text('fare,payment_type\n1.5,Cash\n,Card\n60000.125,\n')  # no label column
  out, log = str(tmp_path / 'p.csv'), str(tmp_path / 'log')
  argv = ['--data', str(data), '--output', regression_output, '--out', out, '--log', log]
  assert _predict(*argv) == EXIT_OK
  rows = _rows(out)
  assert tuple(rows[0]) == predictions.REGRESSION_HEADER
  assert [(r['id'], r[predictions.PREDICTION]) for r in rows] == [
    ('rows.csv:1', '7.0'),
    ('rows.csv:2', '4.0'),
    ('rows.csv:3', '120000.25'),
  ]
  assert 'predicted numbers: lowest 4, mean 40003.8, highest 120000\n' in capsys.readouterr().out
  assert _predict(*argv) == EXIT_OK  # its own predictions file: replaced without --overwrite

  import tensorflow as tf
  from tensorflow_serving.apis import prediction_log_pb2

  (path,) = request_log.files(log)[:1]
  first = prediction_log_pb2.PredictionLog.FromString(
    next(iter(tf.data.TFRecordDataset(path))).numpy()
  )
  response = tf.make_ndarray(first.predict_log.response.outputs[serving.PREDICTION])
  np.testing.assert_array_equal(response, np.array([7.0], np.float32))
  assert [r.inputs['payment_type'].tolist() for r in request_log.read([path])][:2] == [
    [b'Cash'],
    [b'Card'],
  ]

  records = tmp_path / 'rows.tfrecord'
  with tf.io.TFRecordWriter(str(records)) as writer:
    for fare in (2.0, 3.5):
      writer.write(regression_model.record(fare, 'ab'))
  out = str(tmp_path / 'records.csv')
  assert _predict('--data', str(records), '--output', regression_output, '--out', out) == EXIT_OK
  assert [r[predictions.PREDICTION] for r in _rows(out)] == ['6.0', '9.0']  # serving_default


def test_a_regression_model_without_its_number_output_is_one_line(tmp_path):
  import tensorflow as tf

  class NoNumber(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)])
    def serve(self, examples):
      return {serving.PROBABILITIES: tf.ones([tf.shape(examples)[0], 2]) / 2}

  module = NoNumber()
  path = regression_model.save_module(
    module, str(tmp_path / 'm'), {serving.SERVING_DEFAULT: module.serve}
  )
  with pytest.raises(
    model.Problem, match=f'signature {serving.SERVING_DEFAULT} returns no prediction$'
  ):
    model.load(path, inputs.TFRECORDS)


def test_a_csv_for_a_model_taking_a_list_column_is_one_line(tmp_path):
  """A list column ([B, N] in predict_columns) has no CSV form: TFRecords are the way."""
  import tensorflow as tf

  class Pixels(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 64], tf.float64, name='pixels')])
    def columns(self, pixels):
      return {serving.PROBABILITIES: tf.ones([tf.shape(pixels)[0], 2]) / 2}

  module = Pixels()
  path = str(tmp_path / 'm')
  tf.saved_model.save(module, path, signatures={serving.COLUMNS: module.columns})
  with pytest.raises(model.Problem) as raised:
    model.load(path, inputs.CSV)
  assert str(raised.value) == (
    f"{path}: the model takes column 'pixels' as a list of 64 values a row, which a CSV cell "
    'cannot hold: predict on TFRecords'
  )


def test_tfrecords_without_the_models_columns_are_refused_or_named(tmp_path, capsys):
  """Records holding none of a tabular model's columns (image records) are refused; records
  without one of them, unless --allow-missing-columns, which predicts and says so."""
  import json

  import tensorflow as tf

  output = tmp_path / 'out'
  folder = regression_model.save(str(output / 'serving' / '3'))
  parsed = {'fare': 'float32', 'payment_type': 'string', regression_model.LABEL: 'float32'}
  (output / 'serving' / '3' / 'assets' / serving.COLUMNS_ASSET).write_text(json.dumps(parsed))
  assert model.load(folder, inputs.TFRECORDS)[1].features == ['fare', 'payment_type']

  def write(name, records):
    with tf.io.TFRecordWriter(str(tmp_path / name)) as writer:
      for record in records:
        writer.write(record)
    return str(tmp_path / name)

  image = tf.train.Example()
  image.features.feature['image_raw'].bytes_list.value.append(b'\x89PNG')
  images = write('images.tfrecord', [image.SerializeToString()] * 3)
  out = str(tmp_path / 'p.csv')
  argv = ['--output', str(output), '--out', out]
  assert _predict('--data', images, *argv) == EXIT_BAD_INPUT
  error = capsys.readouterr().err.strip().splitlines()
  assert len(error) == 1 and error[0].startswith(
    f"error: --data {images}: the first 3 record(s) hold none of the model's 2 input columns "
    '(fare, payment_type); their features: image_raw.'
  )
  fares = write('fares.tfrecord', [regression_model.record(fare) for fare in (2.0, 3.5)])
  assert _predict('--data', fares, *argv) == EXIT_BAD_INPUT
  error = capsys.readouterr().err.strip().splitlines()
  assert len(error) == 1 and 'payment_type (their features: fare)' in error[0]
  assert '--allow-missing-columns if they are only sparse' in error[0] and not os.path.exists(out)
  assert _predict('--data', fares, *argv, '--allow-missing-columns') == EXIT_OK
  assert (
    'missing columns: payment_type in none of the first 2 records of fares.tfrecord: predicted '
    'with them missing (a number at its training mean; --allow-missing-columns)\n'
  ) in capsys.readouterr().out
  assert [r[predictions.PREDICTION] for r in _rows(out)] == ['4.0', '7.0']
