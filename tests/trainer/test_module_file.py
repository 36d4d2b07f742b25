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
