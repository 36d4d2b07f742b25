"""A module file's functions called as TFX calls them; their failures in one line naming the
file and the function."""

import types

import pytest
from tfx.components.trainer import fn_args_utils
from tfx_bsl.public import tfxio

from contracts.errors import UnusableModel
from tests.support import shards
from trainer import module_file


def _module(tmp_path, text: str, name: str = 'user.py') -> dict:
  path = tmp_path / name
  path.write_text(text)
  return {module_file.MODULE_FILE_KEY: str(path)}


def test_preprocessing_fn_gets_inputs_and_custom_config_when_it_takes_one(tmp_path):
  config = _module(
    tmp_path,
    'import helper\n'
    'def preprocessing_fn(inputs, custom_config):\n'
    '  return {"x": inputs["x"] * helper.SCALE, "file": custom_config["module_file"]}\n',
  )
  (tmp_path / 'helper.py').write_text('SCALE = 3\n')  # beside it, as TFX's wheel packs it
  assert module_file.preprocessing_fn({'x': 2}, config) == {
    'x': 6,
    'file': str(tmp_path / 'user.py'),
  }


def test_an_edit_is_read_anew(tmp_path):
  config = _module(tmp_path, 'def preprocessing_fn(inputs):\n  return 1\n')
  assert module_file.preprocessing_fn({}, config) == 1
  _module(tmp_path, 'def preprocessing_fn(inputs):\n  return 2\n')
  assert module_file.preprocessing_fn({}, config) == 2


def test_an_edit_of_a_file_beside_it_that_it_imports_is_read_anew(tmp_path):
  (tmp_path / 'h5_scale.py').write_text('SCALE = 3\n')
  config = _module(
    tmp_path, 'import h5_scale\ndef preprocessing_fn(inputs):\n  return h5_scale.SCALE\n'
  )
  assert module_file.preprocessing_fn({}, config) == 3
  (tmp_path / 'h5_scale.py').write_text('SCALE = 4\n')  # the module file itself unchanged
  assert module_file.preprocessing_fn({}, config) == 4


def test_failures_name_the_file_and_the_function(tmp_path):
  config = _module(tmp_path, 'def preprocessing_fn(inputs):\n  return inputs["nope"]\n')
  with pytest.raises(UnusableModel, match=r"user.py: preprocessing_fn failed: KeyError: 'nope'"):
    module_file.preprocessing_fn({}, config)
  broken = _module(tmp_path, 'raise RuntimeError("no GPU here")\n', 'broken.py')
  with pytest.raises(UnusableModel, match='broken.py: does not import: no GPU here'):
    module_file.preprocessing_fn({}, broken)


def test_a_keras_2_api_failure_says_how_such_a_file_runs(tmp_path, monkeypatch):
  import tensorflow as tf

  config = _module(
    tmp_path,
    'import tensorflow as tf\n'
    'def preprocessing_fn(inputs):\n'
    '  return tf.keras.layers.DenseFeatures\n',  # Keras 2's, as TFX's airflow workshop uses it
  )
  hint = r'DenseFeatures\' \(tf.keras is Keras 3 here; .* runs with TF_USE_LEGACY_KERAS=1\)$'
  # tf.keras as TensorFlow 2.16 gives it (Keras 3), whatever an earlier test of this process
  # loaded (TF-DF and tf.Transform can leave tf.keras at tf_keras)
  keras_3 = types.ModuleType('keras._tf_keras.keras')
  keras_3.layers = types.ModuleType('keras.layers')
  monkeypatch.setattr(tf, 'keras', keras_3)
  with pytest.raises(UnusableModel, match=hint):
    module_file.preprocessing_fn({}, config)
  legacy = types.ModuleType('tf_keras.api._v2.keras')  # tf.keras under TF_USE_LEGACY_KERAS=1
  legacy.layers = types.ModuleType('keras.layers')
  monkeypatch.setattr(tf, 'keras', legacy)
  with pytest.raises(UnusableModel, match=r"has no attribute 'DenseFeatures'$"):  # no hint
    module_file.preprocessing_fn({}, config)
  monkeypatch.undo()
  other = _module(tmp_path, 'def preprocessing_fn(inputs):\n  return inputs.shape\n', 'o.py')
  with pytest.raises(UnusableModel, match=r"has no attribute 'shape'$"):  # not Keras'
    module_file.preprocessing_fn({}, other)


def test_run_fn_that_writes_no_saved_model(tmp_path):
  config = _module(tmp_path, 'def run_fn(fn_args):\n  fn_args.seen = True\n')
  fn_args = types.SimpleNamespace(
    custom_config=config, serving_model_dir=str(tmp_path / 'm'), eval_steps=5
  )
  with pytest.raises(
    UnusableModel, match='run_fn wrote no SavedModel to fn_args.serving_model_dir$'
  ):
    module_file.run_fn(fn_args)
  assert fn_args.seen
  (tmp_path / 'm').mkdir()
  (tmp_path / 'm' / 'model.pkl').write_bytes(b'')  # TFX's penguin scikit-learn file's
  with pytest.raises(UnusableModel, match=r'serving_model_dir \(it wrote model.pkl: the Evaluator'):
    module_file.run_fn(fn_args)


def test_without_eval_steps_the_eval_split_is_read_once_at_the_batch_size_asked(tmp_path):
  eval_files = [str(tmp_path / 'eval' / '*')]
  (tmp_path / 'eval').mkdir()
  for shard, count in (('a.gz', 40), ('b.gz', 13)):
    shards.write_shard(str(tmp_path / 'eval' / shard), [b'x'] * count, 'GZIP')
  asked = []
  accessor = fn_args_utils.DataAccessor(
    tf_dataset_factory=lambda pattern, options, schema: asked.append(pattern),
    record_batch_factory=None,
    data_view_decode_fn=None,
  )
  fn_args = fn_args_utils.FnArgs(
    eval_files=eval_files, train_files=['train/*'], eval_steps=None, data_accessor=accessor
  )
  module_file.with_eval_steps(fn_args)
  assert fn_args.eval_steps == 2  # 53 records in Keras' batches of 32
  options = tfxio.TensorFlowDatasetOptions(batch_size=10)
  fn_args.data_accessor.tf_dataset_factory(['train/*'], options, None)
  assert fn_args.eval_steps == 2
  fn_args.data_accessor.tf_dataset_factory(eval_files, options, None)
  assert (fn_args.eval_steps, asked) == (6, [['train/*'], eval_files])
  given = fn_args_utils.FnArgs(eval_files=eval_files, eval_steps=5, data_accessor=accessor)
  assert module_file.with_eval_steps(given).data_accessor is accessor and given.eval_steps == 5


def test_the_tuners_printing_goes_to_the_log_and_its_failure_is_one_line(tmp_path, capsys):
  config = _module(
    tmp_path,
    'import types\n'
    'class Tuner:\n'
    '  def search(self, **kwargs):\n'
    '    print("Search: Running Trial #1")\n'
    '    if kwargs["x"] == 2:\n'
    '      raise ValueError("Expected a valid Keras Model instance")\n'
    '    return kwargs\n'
    'def tuner_fn(fn_args):\n'
    '  return types.SimpleNamespace(tuner=Tuner(), fit_kwargs={"x": 1})\n',
  )
  result = module_file.tuner_fn(types.SimpleNamespace(custom_config=config, eval_steps=1))
  assert result.tuner.search(**result.fit_kwargs) == {'x': 1}
  assert 'Running Trial' not in capsys.readouterr().out
  with pytest.raises(
    UnusableModel, match="user.py: tuner_fn's search failed: ValueError: Expected a valid Keras"
  ):
    result.tuner.search(x=2)


def _labels(tmp_path, labels) -> str:
  import tensorflow as tf

  examples = []
  for value in labels:
    example = tf.train.Example()
    example.features.feature['fare_xf'].float_list.value.append(value)
    example.features.feature['x'].float_list.value.append(1.0)
    examples.append(example.SerializeToString())
  return shards.write_shard(str(tmp_path / 'train.gz'), examples, 'GZIP')


def test_the_label_figures_come_from_one_pass_with_a_bounded_sample(tmp_path):
  """label_pass: a split no bigger than the sample gives label_figures.of's figures; a bigger
  one its count, mean, deviation, range and tail rows exact, its median from the sample."""
  import numpy as np
  import tensorflow as tf

  from trainer import label_figures

  rng = np.random.default_rng(7)
  labels = np.concatenate([rng.gamma(2.0, 300.0, 9_994), rng.uniform(1e6, 3e6, 6)])
  labels = labels.astype(np.float32).astype(np.float64)  # as the records hold them
  path = _labels(tmp_path, labels)
  feature = tf.io.FixedLenFeature([], tf.float32)
  small = module_file.label_pass(module_file.split_records([path]).take(700), 'fare_xf', feature)
  assert small == pytest.approx(label_figures.of(labels[:700]), rel=1e-9)
  found = module_file.label_pass(module_file.split_records([path]), 'fare_xf', feature, 1_000)
  exact = label_figures.of(labels)
  for key in ('label_mean', 'label_std', 'label_min', 'label_max'):
    assert found[key] == pytest.approx(exact[key], rel=1e-9), key
  assert found['label_median'] == pytest.approx(exact['label_median'], rel=0.1)
  assert found['label_tail']['rows'] >= 6 and found['label_tail']['of'] == 10_000
  again = module_file.label_pass(module_file.split_records([path]), 'fare_xf', feature, 1_000)
  assert again == found  # the same sample on every run
  none = module_file.label_pass(module_file.split_records([path]).take(0), 'fare_xf', feature)
  assert none == {}


def _leaking_table(root) -> dict:
  """A table's raw splits (x, grade = 3 × label + 1, label) as an ExampleGen writes them, its
  schema: {split: [file]} and the schema's path."""
  import random

  from google.protobuf import text_format
  import tensorflow as tf
  from tensorflow_metadata.proto.v0 import schema_pb2

  from tests.support import tabular_rows

  def example(x, grade, label):
    feature = {
      'x': tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
      'grade': tf.train.Feature(int64_list=tf.train.Int64List(value=[grade])),
      'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

  rng = random.Random(4)
  rows = [(rng.random(), 3 * (i % 2) + 1, i % 2) for i in range(500)]
  files = {}
  for split, part in (('train', rows[:400]), ('eval', rows[400:])):
    (root / f'Split-{split}').mkdir(parents=True)
    files[split] = [tabular_rows.write(str(root / f'Split-{split}' / 'data'), part, example)]
  schema = schema_pb2.Schema()
  schema.feature.add(name='x', type=schema_pb2.FLOAT)
  schema.feature.add(name='grade', type=schema_pb2.INT)
  schema.feature.add(name='label', type=schema_pb2.INT)
  (root / 'schema.pbtxt').write_text(text_format.MessageToString(schema))
  return files, str(root / 'schema.pbtxt')


def test_a_raw_column_that_is_the_label_stops_a_module_files_run_fn_unless_allowed(tmp_path):
  """Leakage on the raw columns (trainer/setup.judge_leakage, as the built-in models), before
  the user's run_fn trains; --allow-feature keeps the column. (After Transform: the raw splits
  from custom_config, the columns preprocessing_fn reads: tests/e2e/test_module_file.py.)"""
  from contracts.errors import UnusableData

  raw, schema = _leaking_table(tmp_path / 'raw')
  marker = tmp_path / 'trained'
  config = _module(tmp_path, f'def run_fn(fn_args):\n  open({str(marker)!r}, "w").close()\n')
  config.update(label_key='label')
  fn_args = fn_args_utils.FnArgs(  # no Transform: the Trainer's splits are the raw ones
    train_files=raw['train'],
    eval_files=raw['eval'],
    schema_path=schema,
    serving_model_dir=str(tmp_path / 'serving'),
    eval_steps=1,
    custom_config=config,
  )
  with pytest.raises(UnusableData, match="column 'grade' maps one-to-one onto the label's 2"):
    module_file.run_fn(fn_args)
  assert not marker.exists()
  fn_args.custom_config = dict(config, allowed_features=['grade'])
  with pytest.raises(UnusableModel, match='run_fn wrote no SavedModel'):
    module_file.run_fn(fn_args)
  assert marker.exists()
