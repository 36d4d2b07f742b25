"""The serving check: real SavedModels of every data kind pass; broken ones fail, each with the
one line that says why; the check runs in its own process and writes TFX's InfraBlessing files."""

import json
import math
import os

import numpy as np
import pytest
import tensorflow as tf

from components.image_example_gen import encode
from components.serving_check import executor, probe, probe_process
from contracts import artifacts, image_record, serving, trainer_options
from records import image_codec, text_codec
from tests.conftest import image_bytes
from tests.support import built_models, regression_model
from trainer import image_input, signatures
from trainer.data_spec import ImageSpec, TabularSpec

LABELS = ['zero', 'one', 'two']


def _image_records(encoding: str, count: int = 6) -> list:
  rng = np.random.default_rng(0)
  records = []
  for i in range(count):
    pixels = rng.integers(0, 256, size=(8, 8), dtype=np.uint8)
    if encoding == image_record.RAW:
      image = image_record.EncodedImage(pixels.tobytes(), 8, 8, 1)
    else:
      image = encode.encode_image(image_bytes(pixels, 'PNG', 'L'))
    label = i % len(LABELS)
    records.append(
      image_codec.make_example(image, label, LABELS[label], f'{i}.png').SerializeToString()
    )
  return records


def _saved(tmp_path, built, served) -> str:
  path = str(tmp_path / 'model')
  tf.saved_model.save(built, path, signatures=served)
  return path


def _image_model(encoding: str = image_record.ENCODED):
  spec = ImageSpec(8, 8, 1, LABELS, encoding, True)
  return built_models.built_in('cnn', spec), spec


@pytest.mark.parametrize('encoding', image_record.ENCODINGS)
def test_an_image_model_serves_on_every_signature(tmp_path, encoding):
  built, spec = _image_model(encoding)
  path = _saved(tmp_path, built, signatures.image_signatures(built, spec))
  report = probe.check(path, _image_records(encoding), requests=20)
  assert report['problems'] == []
  assert set(report['signatures']) == {
    serving.SERVING_DEFAULT,
    serving.IMAGE_BYTES,
    serving.TRANSFORM,
  }
  for timing in report['signatures'].values():
    assert 0 < timing['p50_ms'] <= timing['p99_ms']
  assert report['load_seconds'] > 0 and report['examples'] == 6


def test_a_raw_input_signature_that_disagrees_with_serving_default_fails(tmp_path):
  built, spec = _image_model()
  served = signatures.image_signatures(built, spec)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.IMAGE_BYTES_INPUT)])
  def unscaled(image_bytes):  # the skew the check exists for: pixels inverted on one path only
    images = 255 - image_input.decode_encoded(image_bytes, spec)
    probabilities = built(images, training=False)
    return {serving.PROBABILITIES: probabilities, serving.CLASS_IDS: tf.argmax(probabilities, -1)}

  served[serving.IMAGE_BYTES] = unscaled
  report = probe.check(_saved(tmp_path, built, served), _image_records(image_record.ENCODED))
  (problem,) = report['problems']
  assert problem.startswith(
    f"{serving.IMAGE_BYTES}: probabilities differ from {serving.SERVING_DEFAULT}'s by up to "
  )
  assert problem.endswith('on the same 6 eval examples')
  assert serving.SERVING_DEFAULT in report['signatures']  # the good one was still timed


class _Logits(tf.Module):
  """A model whose signatures answer scores that are not probabilities, or fail."""

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)])
  def scores(self, examples):
    length = tf.cast(tf.strings.length(examples), tf.float32)[:, None]
    return {serving.PROBABILITIES: tf.concat([length, length], axis=1)}

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)])
  def probabilities(self, examples):
    return {serving.PROBABILITIES: tf.nn.softmax(self.scores(examples)[serving.PROBABILITIES])}

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.IMAGE_BYTES_INPUT)])
  def undecodable(self, image_bytes):
    return {serving.PROBABILITIES: tf.cast(tf.io.decode_raw(image_bytes, tf.float64), tf.float32)}


def test_scores_that_do_not_sum_to_one_and_a_failing_signature_are_named(tmp_path):
  module = _Logits()
  path = str(tmp_path / 'model')
  tf.saved_model.save(module, path, signatures={serving.SERVING_DEFAULT: module.scores})
  (problem,) = probe.check(path, _image_records(image_record.ENCODED))['problems']
  assert problem.startswith(f'{serving.SERVING_DEFAULT}: probabilities sum to ')
  assert problem.endswith(', not 1')

  tf.saved_model.save(
    module,
    path,
    signatures={
      serving.SERVING_DEFAULT: module.probabilities,
      serving.IMAGE_BYTES: module.undecodable,
    },
  )
  (problem,) = probe.check(path, _image_records(image_record.ENCODED))['problems']
  assert problem.startswith(f'{serving.IMAGE_BYTES}: InvalidArgumentError: ')
  assert '\n' not in problem


def test_a_folder_without_a_model_does_not_load(tmp_path):
  (problem,) = probe.check(str(tmp_path), _image_records(image_record.ENCODED))['problems']
  assert problem.startswith('the model did not load: ')


def test_a_tabular_model_answers_raw_columns_with_missing_values(tmp_path):
  # 'payment (type)' is not a TensorFlow name: its input is payment__type_.
  spec = TabularSpec(
    'tips',
    0.0,
    2,
    ['fare', 'trips', 'pixels'],
    ['payment (type)'],
    integer=['trips'],
    numeric_mean={'fare': 1.5, 'trips': 2.0, 'pixels': [0.0, 1.0]},
    numeric_variance={'fare': 0.25, 'trips': 1.0, 'pixels': [1.0, 1.0]},
    list_lengths={'pixels': 2},  # a list column: [B, 2]
  )
  built = built_models.built_in('mlp', spec)
  path = _saved(tmp_path, built, signatures.tabular_signatures(built, spec))
  rows = [
    {'fare': 2.5, 'trips': 3, 'payment (type)': b'cash', 'pixels': [0.5, 1.5]},
    {'payment (type)': b'card', 'pixels': [0.25]},
    {'fare': 1.0},
    {},
  ]
  records = []
  for row in rows:
    feature = {}
    for key, value in row.items():
      if isinstance(value, list):
        feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=value))
      elif isinstance(value, bytes):
        feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
      elif isinstance(value, int):
        feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))
      else:
        feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
    records.append(
      tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
    )
  columns = probe.request(
    serving.COLUMNS, tf.saved_model.load(path).signatures[serving.COLUMNS], records, path
  )
  assert columns['trips'].numpy().tolist()[0] == 3.0 and math.isnan(columns['trips'].numpy()[1])
  assert columns['payment__type_'].numpy().tolist() == [b'cash', b'card', b'', b'']
  np.testing.assert_equal(
    columns['pixels'].numpy(), [[0.5, 1.5], [0.25, math.nan], [math.nan] * 2, [math.nan] * 2]
  )
  report = probe.check(path, records, requests=10)
  assert report['problems'] == [] and serving.COLUMNS in report['signatures']


def test_a_text_model_gets_its_records_back_as_text(tmp_path):
  built, spec = built_models.text_model(tmp_path)
  path = _saved(tmp_path, built, signatures.sequence_signatures(built, spec))
  ids = [[2, 5, 1, 3], [], [1, 1], [4, 4, 2]]  # 1: a word outside the vocabulary
  records = [text_codec.make_sequence_example(i, 0, 'neg').SerializeToString() for i in ids]
  text_signature = tf.saved_model.load(path).signatures[serving.TEXT]
  texts = probe.request(serving.TEXT, text_signature, records, path)[serving.TEXT_INPUT]
  texts = texts.numpy().tolist()
  assert texts[0].split()[:2] == [b'good', b'film'] and texts[0].split()[3] == b'bad'
  assert texts[0].split()[2] not in [w.encode() for w in built_models.TEXT_WORDS]
  assert texts[1] == b''
  report = probe.check(path, records, requests=10)
  assert report['problems'] == [] and serving.TEXT in report['signatures']


def test_the_check_runs_in_its_own_process_and_writes_the_infra_blessing(tmp_path):
  built, spec = _image_model()
  path = _saved(tmp_path, built, signatures.image_signatures(built, spec))
  examples = tmp_path / 'examples' / 'Split-eval'
  examples.mkdir(parents=True)
  with tf.io.TFRecordWriter(str(examples / 'data-00000-of-00001.gz'), 'GZIP') as writer:
    for record in _image_records(image_record.ENCODED, count=80):
      writer.write(record)
  blessing = str(tmp_path / 'blessing')
  worker = probe_process.start()  # as a local run does when the Evaluator executes
  assert probe_process.start() is worker  # one worker at most
  report = executor.check(path, str(tmp_path / 'examples'), True, blessing)
  assert report['checked'] and report['serves'] and report['problems'] == []
  assert report['examples'] == serving.CHECK_EXAMPLES  # the first 64 of 80
  assert report['pid'] == worker.pid != os.getpid()  # the started worker took the request
  # The worker imported none of the project's model code: the check's own modules alone.
  assert report['project_modules'] and all(
    name.startswith(('components.serving_check', 'contracts', 'utils')) or name == 'components'
    for name in report['project_modules']
  )
  with open(os.path.join(blessing, artifacts.SERVING_CHECK_FILE)) as f:
    assert json.load(f) == report
  assert sorted(os.listdir(blessing)) == [executor.BLESSED_FILE, artifacts.SERVING_CHECK_FILE]

  # The next candidate: the same worker, the model loaded anew; a run's end ends the worker.
  again = executor.check(path, str(tmp_path / 'examples'), True, str(tmp_path / 'again'))
  assert again['serves'] and again['pid'] == worker.pid and again['load_seconds'] > 0
  bad = probe_process.ask(['--model', path], str(tmp_path), timeout=60)  # no --records
  assert bad == 'the check did not run: SystemExit: 2' and worker.poll() is None
  probe_process.release()
  assert worker.returncode is not None

  # A model the Evaluator did not bless is not loaded at all, and not blessed here either.
  unblessed = str(tmp_path / 'unblessed')
  assert executor.check(path, str(tmp_path / 'examples'), False, unblessed)['checked'] is False
  assert executor.NOT_BLESSED_FILE in os.listdir(unblessed)


def test_a_started_worker_ends_with_the_run_or_when_its_stdin_closes():
  worker = probe_process.start()
  probe_process.release()
  assert worker.returncode is not None  # ended at once, its TensorFlow import not waited for
  probe_process.stop()  # nothing started: nothing to stop
  orphan = probe_process.launch()  # as if the process that launched it had died
  orphan.stdin.close()
  assert orphan.wait(timeout=60) == 0


def test_a_kept_worker_outlives_each_run_and_ends_with_the_watch():
  with pytest.raises(KeyboardInterrupt):
    with probe_process.kept():  # run --watch
      worker = probe_process.start()
      probe_process.release()  # a watched run's end
      assert probe_process.start() is worker and worker.poll() is None
      raise KeyboardInterrupt  # Ctrl-C
  assert worker.returncode is not None
  probe_process.release()
  assert probe_process.start() is not worker  # a later run starts its own
  probe_process.stop()


def test_a_worker_that_dies_is_its_last_line_of_error_and_the_next_check_starts_another(tmp_path):
  worker = probe_process.start()
  gone = str(tmp_path / 'gone')  # a working folder that is not there: the worker dies on it
  problem = probe_process.ask(['--model', gone], gone, timeout=120)
  assert problem.startswith('the serving process failed (exit 1): FileNotFoundError: ')
  assert worker.returncode == 1 and probe_process.start() is not worker
  probe_process.stop()


def test_a_check_that_does_not_answer_in_time_is_one_line(tmp_path):
  report = executor.run_probe(str(tmp_path / 'missing'), [b'x'], timeout=0.01)
  (problem,) = report['problems']
  assert problem.startswith('no answer within 0.01 s')


def _fare_records(fares) -> list:
  return [regression_model.record(fare, 'cash', tips=1.0) for fare in fares]


def test_a_regression_model_serves_on_every_signature(tmp_path):
  path = regression_model.save(str(tmp_path / 'model'))
  report = probe.check(path, _fare_records([1.5, None, 120000.25]), requests=5)
  assert report['problems'] == []
  assert set(report['signatures']) == {
    serving.SERVING_DEFAULT,
    serving.COLUMNS,
    serving.BULK_INFERENCE,
    serving.TRANSFORM,
  }


class _BadRegression(tf.Module):
  """A regression model whose signatures each break the contract in one way."""

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)])
  def numbers(self, examples):
    fare = tf.io.parse_example(examples, {'fare': tf.io.FixedLenFeature([], tf.float32)})['fare']
    return {serving.PREDICTION: tf.where(fare > 100, fare / 0.0 * 0.0, fare)}  # NaN above 100

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)])
  def flat(self, examples):  # bulk_inference must answer [batch, 1]
    return self.numbers(examples)

  @tf.function(input_signature=[{'fare': tf.TensorSpec([None], tf.float64, name='fare')}])
  def skewed(self, values):  # scaled on the raw-input path only
    return {serving.PREDICTION: tf.cast(values['fare'] * 1.01, tf.float32)}

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)])
  def probabilities(self, examples):
    return {serving.PROBABILITIES: tf.ones([tf.shape(examples)[0], 2]) / 2}


def test_a_regression_models_bad_numbers_shapes_and_skew_are_named(tmp_path):
  module = _BadRegression()
  path = regression_model.save_module(
    module,
    str(tmp_path / 'model'),
    {
      serving.SERVING_DEFAULT: module.numbers,
      serving.BULK_INFERENCE: module.flat,
      serving.COLUMNS: module.skewed,
    },
  )
  assert sorted(probe.check(path, _fare_records([1.5, 2.0]), requests=5)['problems']) == [
    f'{serving.BULK_INFERENCE}: {serving.PREDICTION} of shape [2], not [2, 1]',
    f"{serving.COLUMNS}: predictions differ from {serving.SERVING_DEFAULT}'s by up to 0.01 "
    '(relative) on the same 2 eval examples',
  ]
  (problem,) = probe.check(path, _fare_records([1.5, 200.0, 300.0]), requests=5)['problems']
  assert problem == (
    f'{serving.SERVING_DEFAULT}: 2 of 3 predictions are not finite numbers (the first: nan, '
    'eval example 2)'
  )
  path = regression_model.save_module(
    module, str(tmp_path / 'classes'), {serving.SERVING_DEFAULT: module.probabilities}
  )
  (problem,) = probe.check(path, _fare_records([1.5]), requests=5)['problems']
  assert problem == f'{serving.SERVING_DEFAULT}: no {serving.PREDICTION} output (has probabilities)'


def test_the_trainers_regression_signatures_pass_at_a_label_in_the_hundreds_of_thousands(tmp_path):
  spec = TabularSpec(
    'price',
    None,
    1,
    ['fare'],
    ['payment_type'],
    numeric_mean={'fare': 1.5},
    numeric_variance={'fare': 0.25},
    task=trainer_options.REGRESSION,
    label_mean=250_000.0,
    label_std=80_000.0,
  )
  built = built_models.built_in('mlp', spec)
  served = signatures.tabular_signatures(built, spec)
  served[serving.BULK_INFERENCE] = signatures.bulk_inference(served[serving.SERVING_DEFAULT])
  signatures.attach_assets(built, [], [], str(tmp_path), regression=True)
  path = _saved(tmp_path, built, served)
  report = probe.check(path, _fare_records([1.5, None, 3.25, 0.5]), requests=5)
  assert report['problems'] == [] and len(report['signatures']) == 4
