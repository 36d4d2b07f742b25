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
import copy
import dataclasses
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
from utils import module_reach

MODULE_FILE_KEY = 'module_file'  # custom_config's key: the module file's path
_loaded = {}  # (path, content digest) → module
KERAS_BATCH_SIZE = 32  # Keras' default batch size
LEGACY_KERAS = 'TF_USE_LEGACY_KERAS'  # =1 before TensorFlow loads: tf.keras is tf_keras


def load(path: str):
  """The module file as a module (its folder importable while it loads, as TFX's wheel makes
  every .py file beside it importable). Loaded anew when it or a file beside it that it imports
  changed (a warm `run --watch`): those files are then imported anew too."""
  try:
    beside = _beside(path)
    hashed = hashlib.sha256()
    for name in [path, *beside]:
      with open(name, 'rb') as f:
        hashed.update(f.read())
    digest = hashed.hexdigest()[:12]
  except OSError as e:
    raise UnusableModel(f'--module-file {path}: {e.strerror or e}') from None
  key = (path, digest)
  if key not in _loaded:
    folder = os.path.dirname(os.path.abspath(path))
    for file in beside:  # `import helper` finds the saved helper, not the one imported before
      helper = os.path.splitext(os.path.basename(file))[0]
      if getattr(sys.modules.get(helper), '__file__', None) == file:
        del sys.modules[helper]
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


def _beside(path: str) -> list:
  """The files beside the module file that it imports ([] while it does not parse: its import
  then says why)."""
  try:
    return module_reach.local_imports(path)
  except (SyntaxError, ValueError):
    return []


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

  check_leakage(fn_args)
  call(fn_args.custom_config, 'run_fn', with_eval_steps(fn_args))
  if not tf.io.gfile.exists(os.path.join(fn_args.serving_model_dir, 'saved_model.pb')):
    raise _no_saved_model(fn_args)
  record_label_figures(fn_args)


def check_leakage(fn_args) -> None:
  """The project's leakage rules (trainer/setup.judge_leakage) on a table's raw columns, before
  the user's run_fn trains: the same refusal (UnusableData: a column that alone gives the label)
  and --allow-feature as the built-in models'. The raw splits: fn_args' own without Transform
  (every column may be the model's input), else custom_config's RAW_SPLITS_KEY, judged on the
  columns preprocessing_fn reads (unread_columns are not). Where the project cannot read the table as its models do
  (an UnusableData before the rules: lists of several lengths), the log says leakage was not
  checked and why."""
  import shutil
  import tempfile

  from contracts import trainer_options
  from contracts.errors import UnusableData
  from trainer import setup, shards

  custom_config = fn_args.custom_config or {}
  options = trainer_options.TrainerOptions.from_custom_config(custom_config)
  if options.data_kind != trainer_options.TABULAR or 'label_key' not in custom_config:
    return  # images, text; no label named
  raw = custom_config.get(trainer_options.RAW_SPLITS_KEY) or {}
  if not raw and getattr(fn_args, 'transform_graph_path', None):  # transformed splits alone
    logging.warning('Leakage not checked: the Trainer was given no raw examples')
    return
  train = raw.get('train') or fn_args.train_files
  evaluation = raw.get('eval') or fn_args.eval_files
  if raw:  # after Transform: a raw column preprocessing_fn does not read never reaches the model
    unread = unread_columns(fn_args.transform_graph_path, custom_config)
    logging.info(
      'Leakage: the raw columns preprocessing_fn does not read are not judged: %s', unread
    )
    options = dataclasses.replace(options, allowed_features=[*options.allowed_features, *unread])
  raw_args = copy.copy(fn_args)
  raw_args.train_files, raw_args.eval_files = list(train), list(evaluation)
  scratch = tempfile.mkdtemp(prefix='module-leakage-')
  try:
    guard = shards.ShardGuard(os.path.join(scratch, 'salvaged'))
    try:
      table = setup.read_table(raw_args, shards.shard_files(raw_args.train_files), options, guard)
    except UnusableData as e:
      logging.warning('Leakage not checked on the raw columns: %s', first_line(e))
      return
    setup.judge_leakage(raw_args, table, options, guard)
  finally:
    shutil.rmtree(scratch, ignore_errors=True)


def unread_columns(transform_graph_path: str, custom_config: dict) -> list:
  """The raw columns the module file's preprocessing_fn does not read (tf.Transform's
  get_transform_input_columns on its traced graph, the raw feature spec Transform recorded)."""
  import tensorflow_transform as tft
  from tensorflow_transform import impl_helper

  raw_spec = tft.TFTransformOutput(transform_graph_path).raw_feature_spec()
  specs = impl_helper.get_type_specs_from_feature_specs(raw_spec)
  user = functools.partial(preprocessing_fn, custom_config=custom_config)
  return sorted(set(raw_spec) - set(tft.get_transform_input_columns(user, specs)))


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
  (label_figures.of_split, as the project's run_fn records them in training.json), when the label
  is a float: the baselines and range the Evaluator judges a regression model against. The split
  is read in one tf.data pass that holds a bounded sample (label_pass). Nothing is written into
  the user's SavedModel."""
  import tensorflow as tf
  import tensorflow_transform as tft

  if not fn_args.transform_graph_path:
    return
  spec = tft.TFTransformOutput(fn_args.transform_graph_path).transformed_feature_spec()
  key = serving.transformed_label(spec, fn_args.custom_config.get('label_key', ''))
  if not key or not spec[key].dtype.is_floating:
    return
  figures = label_pass(split_records(fn_args.train_files), key, spec[key])
  if figures:
    with tf.io.gfile.GFile(
      os.path.join(fn_args.model_run_dir, artifacts.LABEL_FIGURES_FILE), 'w'
    ) as f:
      f.write(json.dumps(figures))


LABEL_BATCH = 4096  # records parsed at once
LABEL_SAMPLE = 20_000  # the label's uniform sample: its median and quartiles
SEED = 67  # the sample's random keys: the same rows on every run


def label_pass(records, key: str, feature, sample: int = LABEL_SAMPLE) -> dict:
  """label_figures.of_split's figures of the label `key` (parsed as `feature`) of serialized
  `records` (a tf.data.Dataset): one reduction (Chan's merged count, mean and squared deviations,
  the range, and the `sample` rows of smallest random key: a uniform sample, the same on every
  run), and a second one only when the range passes the heavy tail's fences; {} for no rows."""
  import numpy as np
  import tensorflow as tf

  from utils import tf_memory

  def values(batch):
    parsed = tf.io.parse_example(batch, {key: feature})[key]
    parsed = parsed.values if isinstance(parsed, tf.SparseTensor) else parsed
    return tf.reshape(tf.cast(parsed, tf.float64), [-1])

  def keyed(index, batch):  # in parallel: the batch's values, random keys and moments
    v = values(batch)
    size = tf.cast(tf.size(v), tf.float64)
    mean = tf.math.divide_no_nan(tf.reduce_sum(v), size)
    keys = tf.random.stateless_uniform(
      tf.shape(v), tf.stack([tf.constant(SEED, tf.int64), index]), dtype=tf.float64
    )
    moments = tf.stack([size, mean, tf.reduce_sum((v - mean) ** 2)])
    return v, keys, moments, tf.reduce_min(v), tf.reduce_max(v)

  parallel = tf.data.AUTOTUNE
  batches = records.batch(LABEL_BATCH).enumerate().map(keyed, num_parallel_calls=parallel)
  inf = tf.constant(np.inf, tf.float64)
  empty = tf.zeros([0], tf.float64)
  zero = tf.zeros([3], tf.float64)  # count, mean, squared deviations
  initial = (zero, inf, -inf, empty, empty)

  def step(state, batch):
    (n, mean, m2), low, high, keys, kept = tf.unstack(state[0]), *state[1:]
    v, new_keys, batch_moments, batch_low, batch_high = batch
    size, batch_mean, batch_m2 = tf.unstack(batch_moments)
    total = n + size
    delta = batch_mean - mean
    mean = mean + tf.math.divide_no_nan(delta * size, total)
    m2 = m2 + batch_m2 + tf.math.divide_no_nan(delta**2 * n * size, total)
    keys, kept = tf.concat([keys, new_keys], 0), tf.concat([kept, v], 0)
    chosen = tf.math.top_k(-keys, tf.minimum(sample, tf.size(keys))).indices
    low, high = tf.minimum(low, batch_low), tf.maximum(high, batch_high)
    moments = tf.stack([total, mean, m2])
    return moments, low, high, tf.gather(keys, chosen), tf.gather(kept, chosen)

  moments, low, high, _, kept = tf_memory.reduce(batches, initial, step)
  n, mean, m2 = moments.numpy().tolist()
  labels = records.batch(LABEL_BATCH).map(values, num_parallel_calls=parallel)
  if not n:
    return {}

  def beyond(lowest: float, highest: float):
    def count(state, v):
      inside = (v >= lowest) & (v <= highest)
      outside = tf.reduce_sum(tf.cast(~inside, tf.int64))
      return state[0] + outside, state[1] + tf.reduce_sum(tf.where(inside, v, tf.zeros_like(v)))

    zero = (tf.constant(0, tf.int64), tf.constant(0.0, tf.float64))
    rows, inside_sum = tf_memory.reduce(labels, zero, count)
    return int(rows), float(inside_sum)

  split = label_figures.Split(
    int(n), float(mean), float(np.sqrt(m2 / n)), float(low), float(high), beyond
  )
  return label_figures.of_split(split, kept.numpy())


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
