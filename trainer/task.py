"""TFX Trainer entry point, referenced as `run_fn='trainer.task.run_fn'`.

custom_config is a contracts.trainer_options.TrainerOptions (its fields and defaults), written by
pipeline.trainer_config.

Damaged shards lose only their damaged records (input_pipeline.ShardGuard); what was lost is
logged, written to <model_run>/input_damage.json and TensorBoard (`input_damage/*`), and put on
the Model artifact by components/recording_trainer. The per-epoch history and the input check
go to <model_run>/training.json for the run report (metadata/report.py).
"""

import dataclasses
import json
import logging
import math
import os
import shutil
import tempfile
import time
import types
from typing import Callable, List, Optional, Tuple

import keras
import numpy as np
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.components.trainer.fn_args_utils import FnArgs

from contracts import artifacts, image_record, interrupt, trainer_options
from contracts.serving import BULK_INFERENCE, SERVING_DEFAULT
from contracts.trainer_options import IMAGENET, NO_WEIGHTS, TrainerOptions
from records import scan
from trainer import (
  data_spec,
  diagnosis,
  distribution,
  fine_tune,
  input_cache,
  input_pipeline,
  input_service,
  model,
  models,
  multi_worker,
  sequence_pipeline,
  signatures,
)
from trainer.training_progress import TrainingProgress

NUMERIC_SAMPLE_ROWS = 4096
MAX_EPOCHS = 10  # the fit is cut into up to 10 "epochs" so TensorBoard shows curves


@dataclasses.dataclass
class Setup:
  """What run_fn trains with, built for one data kind."""

  spec: object  # data_spec.ImageSpec, TabularSpec or SequenceSpec: what build_model gets
  train: tf.data.Dataset
  evaluation: tf.data.Dataset
  signatures: Callable[[keras.Model], dict]  # the model → {signature name: function}
  hint: str  # the first thing to try when the input check finds training input-bound
  class_names: List[str]
  cache: input_cache.CacheDecision


def _image_setup(fn_args: FnArgs, train_files, config: dict, batch_size: int, guard) -> Setup:
  spec = data_spec.image_spec(data_spec.examples_root(fn_args.train_files[0]), config)
  eval_files = input_pipeline.shard_files(fn_args.eval_files)
  records = input_pipeline.record_count(train_files + eval_files, guard)
  cache = _cache_decision(
    config, input_cache.image_bytes(records, spec.height, spec.width, spec.channels)
  )
  logging.info(
    'Image input %dx%dx%d, %d classes, %s records',
    spec.height,
    spec.width,
    spec.channels,
    spec.num_classes,
    spec.encoding,
  )
  train = input_pipeline.image_dataset(
    train_files, spec, batch_size, True, guard, augment=config['augment'], cache=cache.used
  )
  evaluation = input_pipeline.image_dataset(
    eval_files, spec, batch_size, False, guard, cache=cache.used
  )
  if spec.encoding == image_record.RAW:
    hint = 'faster storage for the shards, or more CPU cores for the Trainer'
  else:
    hint = (
      'store raw pixels (pipeline.py run --encoding raw) so that the Trainer does not '
      'decode JPEG/PNG, or give the Trainer more CPU cores'
    )
  if any(path.endswith('.gz') for path in input_pipeline.shard_files(fn_args.train_files)):
    hint = 'uncompressed shards (pipeline.py run --compression none): GZIP reads 4-8x slower'
  return Setup(spec, train, evaluation, signatures.image_signatures, hint, spec.labels, cache)


def _both_splits(fn_args: FnArgs):
  """Label ids are counted over train and eval: an eval label unseen in train must still fit."""
  return list(fn_args.train_files) + list(fn_args.eval_files)


def _tabular_setup(fn_args: FnArgs, train_files, config: dict, batch_size: int, guard) -> Setup:
  schema = data_spec.read_schema(fn_args.schema_path)
  label_key = config['label_key']
  label = next((f for f in schema.feature if f.name == label_key), None)
  max_label = (
    input_pipeline.max_int_label(_both_splits(fn_args), label_key, guard)
    if label is not None and label.type == schema_pb2.INT
    else 1
  )
  names = (  # class names: from the train split, as the text vocabulary is
    input_pipeline.label_names(train_files, label_key, guard)
    if label is not None and label.type == schema_pb2.BYTES
    else []
  )
  spec = data_spec.tabular_spec(schema, config, max_label, names)
  logging.info(
    'Tabular input: %d numeric, %d categorical columns, label %s (%d classes)',
    len(spec.numeric),
    len(spec.categorical),
    label_key,
    spec.num_classes,
  )
  eval_files = input_pipeline.shard_files(fn_args.eval_files)
  serialized = sum(tf.io.gfile.stat(path).length for path in train_files + eval_files)
  cache = _cache_decision(config, input_cache.tabular_bytes(serialized))
  train = input_pipeline.tabular_dataset(train_files, spec, batch_size, True, guard, cache.used)
  evaluation = input_pipeline.tabular_dataset(
    eval_files, spec, batch_size, False, guard, cache.used
  )
  sample = input_pipeline.tabular_dataset(
    fn_args.train_files, spec, NUMERIC_SAMPLE_ROWS, False, guard
  )
  features, _ = next(iter(sample))
  spec = dataclasses.replace(
    spec,
    numeric_mean={key: float(np.mean(features[key])) for key in spec.numeric},
    numeric_variance={key: float(np.var(features[key])) for key in spec.numeric},
  )
  hint = 'a larger --batch-size (tabular steps are short; per-batch overhead dominates)'
  names = spec.label_names or [str(i) for i in range(spec.num_classes)]
  return Setup(spec, train, evaluation, signatures.tabular_signatures, hint, names, cache)


def _sequence_setup(fn_args: FnArgs, train_files, config: dict, batch_size: int, guard) -> Setup:
  schema = data_spec.read_schema(fn_args.schema_path)
  max_label = input_pipeline.max_int_label(_both_splits(fn_args), config['label_key'], guard)
  spec = data_spec.sequence_spec(
    data_spec.examples_root(fn_args.train_files[0]), schema, config, max_label
  )
  logging.info(
    'Sequence input: feature list %s (%s%s), label %s (%d classes)',
    spec.tokens_key,
    spec.token_dtype.name,
    ', hashed' if spec.hashed else '',
    spec.label_key,
    spec.num_classes,
  )
  train = sequence_pipeline.sequence_dataset(train_files, spec, batch_size, True, guard)
  evaluation = sequence_pipeline.sequence_dataset(
    fn_args.eval_files, spec, batch_size, False, guard
  )
  hint = 'a larger --batch-size, or more CPU cores for the Trainer'
  cache = input_cache.not_cached(config['input_cache'], 'sequence windows are cut anew every epoch')
  return Setup(spec, train, evaluation, signatures.sequence_signatures, hint, spec.labels, cache)


def _cache_decision(config: dict, decoded_bytes: int) -> input_cache.CacheDecision:
  """Whether to hold the decoded input in memory: never with the tf.data service, whose
  workers read and decode."""
  if config['input_service']:
    return input_cache.not_cached(config['input_cache'], 'the tf.data service decodes')
  return input_cache.decide(config['input_cache'], decoded_bytes)


_SETUP = {
  trainer_options.IMAGE: _image_setup,
  trainer_options.TABULAR: _tabular_setup,
  trainer_options.SEQUENCE: _sequence_setup,
}


def prepare_input(fn_args: FnArgs, options: TrainerOptions, plan, scratch: str) -> tuple:
  """(Setup, the shard guard, the batch size, its cap or None): the input of one data kind,
  read by this worker, in plan.strategy's scope (the Trainer's and the Tuner's)."""
  guard = input_pipeline.ShardGuard(os.path.join(scratch, 'salvaged'))
  train_files = input_pipeline.shard_files(fn_args.train_files)
  if not options.input_service:  # with the service, every trainer reads the whole split
    train_files = plan.worker_shards(train_files)
  batch_size, capped = _capped_batch(plan.global_batch(options.batch_size), guard, train_files)
  config = dict(options.to_custom_config(), jit_compile=plan.jit_compile)
  with plan.strategy.scope():
    ready = _SETUP[options.data_kind](fn_args, train_files, config, batch_size, guard)
  return ready, guard, batch_size, capped


def run_fn(fn_args: FnArgs) -> None:
  """Trains for fn_args.train_steps, evaluates, saves a SavedModel with its signatures."""
  options = TrainerOptions.from_custom_config(fn_args.custom_config)
  plan = distribution.plan(options.to_custom_config())
  keras.mixed_precision.set_global_policy(plan.mixed_precision)
  service = options.input_service
  if service:  # before any shard is scanned: an unreachable dispatcher fails in seconds
    input_service.connect(service)
  scratch = tempfile.mkdtemp(prefix='trainer-scratch-')  # salvaged shards, non-chief output
  model_run_dir = distribution.chief_or_scratch(fn_args.model_run_dir, plan, scratch)
  try:
    ready, guard, batch_size, capped = prepare_input(fn_args, options, plan, scratch)
    with plan.strategy.scope():
      chosen = model_file(options, ready.spec, scratch)
      hp = model.hyperparameters(
        chosen.module, chosen.name, options.learning_rate, fn_args.hyperparameters
      )
      trained = model_for(chosen, options, hp, fn_args.train_steps)
    built, train, evaluation, hint = trained.model, ready.train, ready.evaluation, ready.hint
    _record_damage(guard.reports, model_run_dir)
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
        model.compile_model(
          built, phase.learning_rate, plan.jit_compile, xla_asked=options.xla is True
        )
      if not number:
        input_check = _input_check(built, train, batch_size, hint, service, ready.cache, plan)
      logging.info(
        'training phase %s: %d steps at learning rate %g, %d trainable weights',
        phase.name,
        phase.steps,
        phase.learning_rate,
        len(built.trainable_weights),
      )
      started = time.monotonic()
      ran = _fit(
        built, train, evaluation, phase.steps, plan, batch_size, fn_args, model_run_dir, phase.name
      )
      phases.append(fine_tune.record(phase, time.monotonic() - started, built))
      for key, values in ran.items():
        history.setdefault(key, []).extend(float(v) for v in values)
    _write_json(
      model_run_dir,
      artifacts.TRAINING_FILE,
      {
        'class_names': list(ready.class_names),
        'model': trained.name,
        'hyperparameters': trained.hyperparameters,
        'tuned': bool(fn_args.hyperparameters),
        'weights': trained.weights_shown,
        'phases': phases,
        'batch_size': batch_size,
        'batch_capped': capped,
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
    serving = ready.signatures(built, ready.spec)
    serving[BULK_INFERENCE] = signatures.bulk_inference(serving[SERVING_DEFAULT])
    serving_dir = distribution.chief_or_scratch(fn_args.serving_model_dir, plan, scratch)
    signatures.attach_class_names(built, ready.class_names, scratch)
    # A TF1-style loader (TensorFlow Serving, tfx-bsl's BulkInferrer) finds a Keras 3 model's
    # variables only when they are tracked as tf.Variables (tensorflow/tfx#7782).
    built._tf_saved_variables = [getattr(v, 'value', v) for v in built.variables]
    tf.saved_model.save(built, serving_dir, signatures=serving)
    logging.info('Saved model with signatures %s to %s', sorted(serving), serving_dir)
  finally:
    shutil.rmtree(scratch, ignore_errors=True)


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


def _input_check(built, train, batch_size: int, hint: str, service: str, cache, plan):
  """The input check's figures; None under a distribution strategy (its warm-up step runs
  outside the strategy), where only the cache decision is logged."""
  if plan.strategy.num_replicas_in_sync == 1 and plan.num_workers == 1:
    return diagnosis.check_input(built, train, batch_size, hint, service, cache.describe())
  logging.info(
    'input check: skipped under %s; %s', distribution.strategy_name(plan.strategy), cache.describe()
  )
  return None


def _fit(
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
  """A Ctrl-C that Keras swallowed (contracts/interrupt.py) stops training at the next batch."""

  def raise_if_interrupted(batch, logs=None):
    if interrupt.REQUESTED.is_set():
      raise KeyboardInterrupt

  callback = keras.callbacks.LambdaCallback(on_train_batch_end=raise_if_interrupted)
  callback.async_safe = True  # keeps Keras' step dispatch as it was
  return callback


def _capped_batch(batch_size: int, guard, train_files: List[str]) -> Tuple[int, Optional[dict]]:
  """A batch no bigger than the train split (whose records the guard counts as it scans): a
  bigger one only costs memory (--batch-size 100000 on 29 examples peaked at 16 GB)."""
  guard(train_files)
  records = sum(r.good for r in guard.reports if r.path in set(train_files))
  if 0 < records < batch_size:
    logging.warning("batch size %d capped at %d, the train split's size", batch_size, records)
    return records, {'asked': batch_size, 'train_examples': records}
  return batch_size, None


def _record_damage(reports, model_run_dir: str) -> None:
  """input_damage.json (totals and damaged shards) and TensorBoard scalars input_damage/*."""
  totals = scan.totals(reports)
  logging.info(
    'Input shards: %(shards)d scanned, %(damaged_shards)d damaged, %(good)d records '
    'read, %(corrupt)d corrupt skipped, %(lost_bytes)d bytes lost, '
    '%(truncated_bytes)d truncated tail bytes',
    totals,
  )
  _write_json(
    model_run_dir,
    artifacts.DAMAGE_FILE,
    dict(totals, damaged=[r.summary() for r in reports if not r.clean]),
  )
  with tf.summary.create_file_writer(os.path.join(model_run_dir, 'input_damage')).as_default():
    for key in ('corrupt', 'lost_bytes', 'truncated_bytes', 'damaged_shards', 'lost_fraction'):
      tf.summary.scalar(f'input_damage/{key}', totals[key], step=0)


def _write_json(model_run_dir: str, name: str, content: dict) -> None:
  tf.io.gfile.makedirs(model_run_dir)
  with tf.io.gfile.GFile(os.path.join(model_run_dir, name), 'w') as f:
    json.dump(content, f, indent=1)
