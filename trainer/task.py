"""TFX Trainer entry point, referenced as `run_fn='trainer.task.run_fn'`.

custom_config is a contracts.trainer_options.TrainerOptions (its fields and defaults), built by
the command line as PipelineConfig.trainer and written by pipeline.trainer_options.

Each data kind's input is built by trainer/setup.py. Damaged shards lose only their damaged
records (shards.ShardGuard); more than --max-damaged-percent of the records damaged or missing
(against the counts the ExampleGen recorded) stops training; what was lost is logged, written to <model_run>/input_damage.json and
TensorBoard (`input_damage/*`), and put on the Model artifact by components/recording_trainer.
The per-epoch history and the input check go to <model_run>/training.json for the run report
(reporting/report.py).
"""

import contextlib
import dataclasses
import json
import logging
import math
import os
import shutil
import tempfile
import time
import types
from typing import List, Optional

import keras
import tensorflow as tf
from tfx.components.trainer.fn_args_utils import FnArgs

from contracts import artifacts, labels
from contracts.serving import BULK_INFERENCE, SERVING_DEFAULT
from contracts.trainer_options import (
  CLASSIFICATION,
  IMAGENET,
  NO_WEIGHTS,
  TABULAR,
  TrainerOptions,
)
from trainer import (
  data_spec,
  diagnosis,
  distribution,
  fine_tune,
  input_service,
  model,
  models,
  multi_worker,
  setup,
  shards,
  signatures,
  trees,
)
from trainer.training_progress import TrainingProgress
from utils import interrupt, tf_memory

MAX_EPOCHS = 10  # the fit is cut into up to 10 "epochs" so TensorBoard shows curves


def run_fn(fn_args: FnArgs) -> None:
  """Trains for fn_args.train_steps, evaluates, saves a SavedModel with its signatures."""
  options = TrainerOptions.from_custom_config(fn_args.custom_config)
  with seeded(options.seed), tf_memory.custom_gradients_dropped():  # a warm process stays flat
    _train_and_save(fn_args, options)


@contextlib.contextmanager
def seeded(seed: Optional[int]):
  """With a seed (--seed): Python's, NumPy's and TensorFlow's random seeds set to it, so the
  initial weights, the shard order and every shuffle are the same each time, and TensorFlow's
  ops deterministic (docs/benchmarks.md: what it costs). Op determinism is process-wide: it is
  turned off again afterwards, so the components after the Trainer in the same process keep
  their speed. Without a seed, nothing is set."""
  if seed is None:
    yield
    return
  # The switch back is not public in TensorFlow 2.16 (tf.config.experimental has only enable).
  from tensorflow.python.framework import config as tf_config

  already = tf_config.is_op_determinism_enabled()
  keras.utils.set_random_seed(seed)
  tf.config.experimental.enable_op_determinism()
  logging.info('seed %d: random seeds set, TensorFlow ops deterministic', seed)
  try:
    yield
  finally:
    if not already:
      tf_config.disable_op_determinism()


def _train_and_save(fn_args: FnArgs, options: TrainerOptions) -> None:
  plan = distribution.plan(options)
  keras.mixed_precision.set_global_policy(plan.mixed_precision)
  service = options.input_service
  if service:  # before any shard is scanned: an unreachable dispatcher fails in seconds
    input_service.connect(service)
  scratch = tempfile.mkdtemp(prefix='trainer-scratch-')  # salvaged shards, non-chief output
  model_run_dir = distribution.chief_or_scratch(fn_args.model_run_dir, plan, scratch)
  try:
    prepared = setup.prepare_input(fn_args, options, plan, scratch)
    if model.model_name(options) == trees.NAME:
      _grow_and_save(fn_args, options, prepared, model_run_dir, plan, scratch)
      return
    ready, guard, batch_size = prepared.setup, prepared.guard, prepared.batch_size
    with plan.strategy.scope():
      chosen = model_file(options, ready.spec, scratch)
      hp = model.hyperparameters(
        chosen.module, chosen.name, options.learning_rate, fn_args.hyperparameters
      )
      trained = model_for(chosen, options, hp, fn_args.train_steps)
    regression = getattr(ready.spec, 'regression', False)
    loss = model.regression_loss(chosen.module, chosen.name, options.loss) if regression else ''
    built, train, evaluation, hint = trained.model, ready.train, ready.evaluation, ready.hint
    _record_damage(prepared.damage, guard.reports, model_run_dir)
    if service:
      train = input_service.distribute(
        train, service, input_service.job_name(fn_args.model_run_dir)
      )
      hint = input_service.HINT
      input_service.warn_salvaged(guard.reports)
    if plan.num_workers > 1:
      train = distribution.without_auto_shard(train)
    history, phases, input_check = {}, [], None
    for number, phase in enumerate(trained.phases):
      with plan.strategy.scope():
        fine_tune.prepare(built, phase)
        model.compile_model(built, phase.learning_rate, plan.jit_compile, options.xla is True, loss)
      if not number:
        key = _input_key(fn_args, options, prepared)
        input_check = _input_check(
          built, train, batch_size, hint, service, ready.cache, plan, options.seed, key
        )
      logging.info(
        'training phase %s: %d steps at learning rate %g, %d trainable weights',
        phase.name,
        phase.steps,
        phase.learning_rate,
        len(built.trainable_weights),
      )
      started = time.monotonic()
      ran = _train_phase(
        built, train, evaluation, phase.steps, plan, batch_size, fn_args, model_run_dir, phase.name
      )
      phases.append(fine_tune.record(phase, time.monotonic() - started, built))
      for key, values in ran.items():
        history.setdefault(key, []).extend(float(v) for v in values)
    if regression:  # the mean absolute error in the label's units
      for key in (model.REGRESSION_METRIC, f'val_{model.REGRESSION_METRIC}'):
        history[key] = [v * ready.spec.label_std for v in history.get(key, [])]
    _write_json(
      model_run_dir,
      artifacts.TRAINING_FILE,
      {
        **_data_facts(ready, options),
        **({'loss': loss} if regression else {}),
        'model': trained.name,
        'hyperparameters': trained.hyperparameters,
        'tuned': bool(fn_args.hyperparameters),
        'weights': trained.weights_shown,
        'phases': phases,
        'batch_size': batch_size,
        'batch_capped': prepared.batch_capped,
        'epochs': len(next(iter(history.values()), [])),
        'train_steps': fn_args.train_steps,
        'history': history,
        'input_check': input_check,
        'input_cache': ready.cache.to_json(),
        'distribution': plan.reason,
        'replicas': plan.strategy.num_replicas_in_sync,
        'xla': bool(built.jit_compile),
      },
    )
    # A TF1-style loader (TensorFlow Serving, tfx-bsl's BulkInferrer) finds a Keras 3 model's
    # variables only when they are tracked as tf.Variables (tensorflow/tfx#7782).
    built._tf_saved_variables = [getattr(v, 'value', v) for v in built.variables]
    _save(built, ready, fn_args, plan, scratch)
  finally:
    shutil.rmtree(scratch, ignore_errors=True)


def _data_facts(ready: setup.Setup, options: TrainerOptions) -> dict:
  """What training.json says of the data, whatever the model."""
  regression = getattr(ready.spec, 'regression', False)
  facts = {
    'class_names': list(ready.class_names),
    'single_feature_scores': ready.single_feature_scores,
    'task': ready.spec.task if regression else CLASSIFICATION,
    'seed': options.seed,
  }
  if getattr(ready, 'dates', ''):
    facts['dates'] = ready.dates
  if regression:
    facts.update(ready.label_figures)  # label_mean, label_std, median, range, tail
  if ready.leakage_note:
    facts['leakage'] = ready.leakage_note
  if options.data_kind == TABULAR:
    spellings, lists = ready.label_spellings, ready.spec.list_lengths
    facts['label'] = (
      labels.task_line(options.label_key, ready.spec.task, options.label_threshold)
      + (f'; spellings read as one: {labels.spellings_line(spellings)}' if spellings else '')
      + (f'; list columns, fed whole: {setup.list_line(lists)}' if lists else '')
    )
  return facts


def _save(built, ready: setup.Setup, fn_args: FnArgs, plan, scratch: str) -> None:
  """The model (Keras', or the trees' tf.Module) saved with its signatures and assets."""
  serving = ready.signatures(built, ready.spec)
  serving[BULK_INFERENCE] = signatures.bulk_inference(serving[SERVING_DEFAULT])
  serving_dir = distribution.chief_or_scratch(fn_args.serving_model_dir, plan, scratch)
  regression = getattr(ready.spec, 'regression', False)
  signatures.attach_assets(built, ready.class_names, ready.id_columns, scratch, regression)
  signatures.attach_columns(built, ready.spec, scratch)
  tf.saved_model.save(built, serving_dir, signatures=serving)
  logging.info('Saved model with signatures %s to %s', sorted(serving), serving_dir)


def _grow_and_save(
  fn_args: FnArgs, options: TrainerOptions, prepared, model_run_dir, plan, scratch
):
  """--model gbt: the trees grown by YDF (trainer/trees.py), not fit by Keras, then saved as
  the Keras models are."""
  ready = prepared.setup
  _record_damage(prepared.damage, prepared.guard.reports, model_run_dir)
  grown = trees.grow(fn_args, ready.spec, prepared.guard, options.seed, options.loss)
  rounds = grown.hyperparameters['rounds_kept']
  _write_json(
    model_run_dir,
    artifacts.TRAINING_FILE,
    {
      **_data_facts(ready, options),
      **({'loss': grown.loss} if grown.loss else {}),
      'model': trees.NAME,
      'hyperparameters': grown.hyperparameters,
      'tuned': bool(fn_args.hyperparameters),
      'weights': '',
      'phases': [],
      'batch_size': grown.train_rows,
      'batch_capped': None,
      'epochs': 1,
      'train_steps': rounds,  # a boosting round: a step on every row
      'trees': {'rounds': rounds, 'train_rows': grown.train_rows, 'seconds': grown.seconds},
      'history': grown.history,
      'input_check': None,
      'input_cache': None,
      'distribution': 'none: gradient-boosted trees are grown by YDF, not fit by Keras',
      'replicas': 1,
      'xla': False,
    },
  )
  _save(grown.model, ready, fn_args, plan, scratch)


@dataclasses.dataclass
class Trained:
  """The model run_fn trains, and how."""

  model: keras.Model
  name: str  # the built-in's name or the model file as given
  hyperparameters: dict  # hp.values
  weights_shown: str  # what the backbone started from ('' : no backbone)
  phases: List[fine_tune.Phase]


@dataclasses.dataclass
class ModelFile:
  """The model file run_fn and tuner_fn build from, loaded once, and the spec it builds for."""

  module: types.ModuleType
  name: str  # the built-in's name or the model file as given
  weights: str  # what the backbone starts from: IMAGENET, NO_WEIGHTS or a weights file
  spec: object  # the data's spec; images: with the weights file copied here (spec.weights)


def model_file(options: TrainerOptions, spec, scratch: str) -> ModelFile:
  name = model.model_name(options)
  weights = options.weights or (IMAGENET if name in models.BACKBONES else NO_WEIGHTS)
  if isinstance(spec, data_spec.ImageSpec):
    spec = dataclasses.replace(spec, weights=_local_weights(weights, scratch))
  return ModelFile(model.load(name, options.model_source), name, weights, spec)


def model_for(chosen: ModelFile, options: TrainerOptions, hp, train_steps: int) -> Trained:
  """The model file's model at `hp`, checked (trainer/model.py), with its training phases
  (trainer/fine_tune.py)."""
  built = model.build(chosen.module, chosen.name, chosen.spec, hp)
  rate = hp.get(model.LEARNING_RATE)
  phases = fine_tune.phases(built, options, chosen.weights, train_steps, rate)
  shown = chosen.weights if fine_tune.backbone_of(built) is not None else ''
  return Trained(built, chosen.name, dict(hp.values), shown, phases)


def _local_weights(weights: str, scratch: str) -> str:
  """A weights file in object storage is copied here first (Keras reads local files)."""
  if weights in (IMAGENET, NO_WEIGHTS) or os.path.exists(weights):
    return weights
  local = os.path.join(scratch, os.path.basename(weights))
  tf.io.gfile.copy(weights, local, overwrite=True)
  return local


def _input_key(fn_args: FnArgs, options: TrainerOptions, prepared: setup.PreparedInput) -> tuple:
  """What the input alone's rate depends on (diagnosis.check_input's input_key): the train
  shards (an Examples artifact's files are written once) with the records read of each, and how
  they are batched, decoded and cached."""
  good = {report.path: report.good for report in prepared.guard.reports}
  files = shards.shard_files(fn_args.train_files)
  ready = prepared.setup
  return (
    tuple((path, good.get(path)) for path in files),
    prepared.batch_size,
    repr(ready.spec),
    ready.cache.used,
    options.augment,
    options.input_service,
  )


def _input_check(
  built, train, batch_size: int, hint: str, service: str, cache, plan, seed, input_key=None
):
  """The input check's figures; None under a distribution strategy (its warm-up step runs
  outside the strategy) or a seed (it reads the input for a measured time, which would move the
  seeded shuffles that the training's reads share), where only the cache decision is logged.
  input_key: what the input alone's rate depends on (diagnosis.check_input)."""
  if seed is not None:
    logging.info('input check: skipped under --seed %d; %s', seed, cache.describe())
    return None
  if plan.strategy.num_replicas_in_sync == 1 and plan.num_workers == 1:
    return diagnosis.check_input(
      built, train, batch_size, hint, service, cache.describe(), input_key
    )
  logging.info(
    'input check: skipped under %s; %s', distribution.strategy_name(plan.strategy), cache.describe()
  )
  return None


def _train_phase(
  built, train, evaluation, steps: int, plan, batch_size: int, fn_args, model_run_dir, phase: str
):
  """`steps` training steps cut into up to MAX_EPOCHS epochs (curves in TensorBoard), with
  live progress (trainer/training_progress.py); the per-epoch history."""
  epochs = max(1, min(MAX_EPOCHS, steps))
  steps_per_epoch = math.ceil(steps / epochs)
  if plan.num_workers > 1:
    return multi_worker.fit(built, train, plan, epochs, steps_per_epoch, batch_size, model_run_dir)
  # Epoch metrics go to the log (the terminal shows one line per component), and TensorBoard.
  log_epoch = keras.callbacks.LambdaCallback(
    on_epoch_end=lambda epoch, logs: logging.info(
      'epoch %d/%d: %s',
      epoch + 1,
      epochs,
      ', '.join(f'{k} {v:.4f}' for k, v in sorted((logs or {}).items())),
    )
  )
  return built.fit(
    train,
    epochs=epochs,
    steps_per_epoch=steps_per_epoch,
    validation_data=evaluation,
    validation_steps=fn_args.eval_steps or None,  # None: the whole eval split
    verbose=0,
    callbacks=[
      keras.callbacks.TensorBoard(log_dir=model_run_dir),
      log_epoch,
      stop_on_interrupt(),
      TrainingProgress(epochs * steps_per_epoch, batch_size, phase),
    ],
  ).history


def stop_on_interrupt() -> keras.callbacks.Callback:
  """A Ctrl-C that Keras swallowed (utils/interrupt.py) stops training at the next batch."""

  def raise_if_interrupted(batch, logs=None):
    if interrupt.REQUESTED.is_set():
      raise KeyboardInterrupt

  callback = keras.callbacks.LambdaCallback(on_train_batch_end=raise_if_interrupted)
  callback.async_safe = True  # keeps Keras' step dispatch as it was
  return callback


def _record_damage(totals: dict, reports, model_run_dir: str) -> None:
  """input_damage.json (totals and damaged shards) and TensorBoard scalars input_damage/*."""
  logging.info(
    'Input shards: %(shards)d scanned, %(damaged_shards)d damaged, %(good)d records '
    'read, %(corrupt)d corrupt skipped, %(lost_bytes)d bytes lost, '
    '%(truncated_bytes)d truncated tail bytes, %(missing)d recorded records missing',
    totals,
  )
  _write_json(
    model_run_dir,
    artifacts.DAMAGE_FILE,
    dict(totals, damaged=[r.summary() for r in reports if not r.clean]),
  )
  writer = tf.summary.create_file_writer(os.path.join(model_run_dir, 'input_damage'))
  with writer.as_default():
    for key in (
      'corrupt',
      'lost_bytes',
      'truncated_bytes',
      'damaged_shards',
      'missing',
      'lost_fraction',
    ):
      tf.summary.scalar(f'input_damage/{key}', totals[key], step=0)
  writer.close()


def _write_json(model_run_dir: str, name: str, content: dict) -> None:
  tf.io.gfile.makedirs(model_run_dir)
  with tf.io.gfile.GFile(os.path.join(model_run_dir, name), 'w') as f:
    json.dump(content, f, indent=1)
