"""A TFX module file's functions (--module-file), called as TFX calls them, by the project's
names: pipeline.py gives TFX's Transform `preprocessing_fn='trainer.module_file.preprocessing_fn'`
(and `stats_options_updater_fn`), the Trainer `run_fn` and the Tuner `tuner_fn` of this module.
Each loads the user's file from `custom_config['module_file']` (its content decides the module's
name, so an edited file in a warm `run --watch` is read anew) and calls its function with what
TFX passed. Why not TFX's own `module_file=`: its cache key is every .py file of the folder, so an
edit of run_fn would run Transform again (docs/design/module_files.md).

A failure of the user's code is one line naming the file and the function (UnusableModel: exit
code 2); a run_fn that writes no SavedModel to fn_args.serving_model_dir is one too.
"""

import contextlib
import functools
import hashlib
import importlib.machinery
import importlib.util
import inspect
import io
import json
import logging
import os
import sys
from typing import Any, Callable

from contracts import artifacts, serving
from contracts.errors import UnusableModel, first_line
from trainer import label_figures

MODULE_FILE_KEY = 'module_file'  # custom_config's key: the module file's path
_loaded = {}  # (path, content digest) → module
KERAS_BATCH_SIZE = 32  # Keras' default batch size
LEGACY_KERAS = 'TF_USE_LEGACY_KERAS'  # =1 before TensorFlow loads: tf.keras is tf_keras


def load(path: str):
  """The module file as a module (its folder importable while it loads, as TFX's wheel makes
  every .py file beside it importable)."""
  try:
    with open(path, 'rb') as f:
      digest = hashlib.sha256(f.read()).hexdigest()[:12]
  except OSError as e:
    raise UnusableModel(f'--module-file {path}: {e.strerror or e}') from None
  key = (path, digest)
  if key not in _loaded:
    folder = os.path.dirname(os.path.abspath(path))
    name = f'user_module_{digest}'
    loader = importlib.machinery.SourceFileLoader(name, path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    if folder not in sys.path:
      sys.path.append(folder)
    try:
      loader.exec_module(module)
    except Exception as e:
      del sys.modules[name]
      raise UnusableModel(f'--module-file {path}: does not import: {first_line(e)}') from None
    _loaded[key] = module
  return _loaded[key]


def user_function(custom_config: dict, name: str) -> Callable:
  """The module file's `name` function."""
  path = (custom_config or {}).get(MODULE_FILE_KEY, '')
  fn = getattr(load(path), name, None)
  if not callable(fn):
    raise UnusableModel(f'--module-file {path}: defines no {name}')
  return fn


class LogLines(io.TextIOBase):
  """What the user's code prints (Keras' progress bars), as lines of the run log: the terminal
  keeps the project's one progress line per component."""

  def __init__(self):
    self._pending = ''

  def write(self, text: str) -> int:
    lines = (self._pending + text).split('\n')
    self._pending = lines.pop()
    for line in lines:
      if line.strip():
        logging.info('%s', line.split('\r')[-1].rstrip())
    return len(text)


def call(custom_config: dict, name: str, *args, **kwargs) -> Any:
  """The user's `name`(*args), custom_config passed on where it takes one (as TFX binds it), its
  printing to the run log; its failure one line naming the file and the function."""
  fn = user_function(custom_config, name)
  if 'custom_config' in inspect.signature(fn).parameters:
    kwargs['custom_config'] = custom_config
  return _run(custom_config, name, fn, *args, **kwargs)


def _run(custom_config: dict, name: str, fn: Callable, /, *args, **kwargs) -> Any:
  """fn(*args), its printing to the run log; its failure one line naming the file and `name`."""
  try:
    with contextlib.redirect_stdout(LogLines()):
      return fn(*args, **kwargs)
  except UnusableModel:
    raise
  except Exception as e:
    path = custom_config[MODULE_FILE_KEY]
    said = f'{type(e).__name__}: {first_line(e)}{keras_2_hint(e)}'
    raise UnusableModel(f'--module-file {path}: {name} failed: {said}') from e


def keras_2_hint(error: Exception) -> str:
  """For a Keras 2 API that Keras 3 (TensorFlow 2.16's tf.keras) lacks, e.g. the airflow
  workshop's tf.keras.layers.DenseFeatures: how such a file runs (tf_keras, Keras 2, is in the
  lock); '' otherwise, or when tf.keras is tf_keras already. Read from tf.keras itself, not the
  environment: tensorflow_transform sets LEGACY_KERAS on import, after TensorFlow chose."""
  if not isinstance(error, AttributeError) or 'keras' not in str(error):
    return ''
  import tensorflow as tf

  if not tf.keras.__name__.startswith('keras.'):  # tf_keras.api._v2.keras: Keras 2 already
    return ''
  return (
    f' (tf.keras is Keras 3 here; a module file written for Keras 2 runs with {LEGACY_KERAS}=1)'
  )


def preprocessing_fn(inputs, custom_config):
  """Transform's: the user's preprocessing_fn(inputs)."""
  return call(custom_config, 'preprocessing_fn', inputs)


def stats_options_updater_fn(stats_type, stats_options, custom_config):
  """Transform's statistics options: the user's stats_options_updater_fn."""
  return call(custom_config, 'stats_options_updater_fn', stats_type, stats_options)


def run_fn(fn_args):
  """The Trainer's: the user's run_fn(fn_args) with TFX's FnArgs, then its SavedModel checked."""
  import tensorflow as tf

  call(fn_args.custom_config, 'run_fn', with_eval_steps(fn_args))
  if not tf.io.gfile.exists(os.path.join(fn_args.serving_model_dir, 'saved_model.pb')):
    raise _no_saved_model(fn_args)
  record_label_figures(fn_args)


def _no_saved_model(fn_args) -> UnusableModel:
  """The refusal of a run_fn that wrote no SavedModel, naming what it wrote instead (TFX's
  scikit-learn penguin file pickles its model)."""
  import tensorflow as tf

  folder = fn_args.serving_model_dir
  found = sorted(tf.io.gfile.listdir(folder)) if tf.io.gfile.isdir(folder) else []
  wrote = ''
  if found:
    wrote = (
      f' (it wrote {", ".join(found[:5])}: the Evaluator, ServingCheck and the Pusher need a'
      ' SavedModel)'
    )
  path = fn_args.custom_config[MODULE_FILE_KEY]
  return UnusableModel(
    f'--module-file {path}: run_fn wrote no SavedModel to fn_args.serving_model_dir{wrote}'
  )


def with_eval_steps(fn_args):
  """fn_args with a number of eval steps when the run has none (no --eval-steps: the whole eval
  split). TFX's templates read the eval split `.repeat()`ed and fit `validation_steps=
  fn_args.eval_steps` batches of it: None would evaluate forever. One pass it is: the eval
  split's records over the batch size the run_fn asks `data_accessor` for (Keras' default, 32,
  until it asks)."""
  if fn_args.eval_steps is not None:
    return fn_args
  records = int(split_records(fn_args.eval_files).reduce(0, lambda n, _: n + 1))
  factory = fn_args.data_accessor.tf_dataset_factory

  def one_pass(records_per_step: int) -> None:
    fn_args.eval_steps = max(1, -(-records // records_per_step))
    logging.info('eval_steps: %d, one pass over %d eval records', fn_args.eval_steps, records)

  def counting_factory(file_pattern, dataset_options, *args, **kwargs):
    patterns = [file_pattern] if isinstance(file_pattern, str) else list(file_pattern)
    if patterns == list(fn_args.eval_files):
      one_pass(dataset_options.batch_size)
    return factory(file_pattern, dataset_options, *args, **kwargs)

  one_pass(KERAS_BATCH_SIZE)
  fn_args.data_accessor = fn_args.data_accessor._replace(tf_dataset_factory=counting_factory)
  return fn_args


def record_label_figures(fn_args) -> None:
  """LABEL_FIGURES_FILE in model_run: the transformed train split's label figures
  (label_figures.of, as the project's run_fn records them in training.json), when the label is a
  float: the baselines and range the Evaluator judges a regression model against. Nothing is
  written into the user's SavedModel."""
  import numpy as np
  import tensorflow as tf
  import tensorflow_transform as tft

  if not fn_args.transform_graph_path:
    return
  spec = tft.TFTransformOutput(fn_args.transform_graph_path).transformed_feature_spec()
  key = serving.transformed_label(spec, fn_args.custom_config.get('label_key', ''))
  if not key or not spec[key].dtype.is_floating:
    return
  found = []
  for batch in split_records(fn_args.train_files).batch(1024):
    values = tf.io.parse_example(batch, {key: spec[key]})[key]
    values = values.values if isinstance(values, tf.SparseTensor) else values
    found.append(np.asarray(values, dtype=np.float64).reshape(-1))
  values = np.concatenate(found) if found else np.zeros([0])
  if values.size:
    with tf.io.gfile.GFile(
      os.path.join(fn_args.model_run_dir, artifacts.LABEL_FIGURES_FILE), 'w'
    ) as f:
      f.write(json.dumps(label_figures.of(values)))


def split_records(patterns):
  """A split's serialized records, file after file, as FnArgs' train_files/eval_files name it."""
  import tensorflow as tf

  files = sorted(f for pattern in patterns for f in tf.io.gfile.glob(pattern))
  compression = 'GZIP' if files and files[0].endswith('.gz') else ''
  return tf.data.TFRecordDataset(files, compression)


TUNER_PRINTS = ('search_space_summary', 'search', 'results_summary')  # what TFX's Tuner calls


def tuner_fn(fn_args):
  """The Tuner's: the user's tuner_fn(fn_args) (a TunerFnResult); the calls TFX's Tuner makes of
  its tuner print to the run log and fail in one line as the user's functions do (TFX's TF-DF
  penguin tuner: keras_tuner refuses its tf_keras models in `search`)."""
  config = fn_args.custom_config
  result = call(config, 'tuner_fn', with_eval_steps(fn_args))
  for name in TUNER_PRINTS:
    method = getattr(result.tuner, name, None)
    if callable(method):
      setattr(result.tuner, name, functools.partial(_run, config, f"tuner_fn's {name}", method))
  return result
