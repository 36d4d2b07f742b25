"""TFX Trainer entry point, referenced as `run_fn='trainer.task.run_fn'`.

custom_config keys (set by pipeline.create_pipeline):
  data_kind        'image' or 'tabular'
  batch_size       per-step batch (default 64)
  learning_rate    Adam learning rate (default 1e-3)
  image_height, image_width, image_channels   model input; 0 = taken from the data
  label_key, label_threshold                  tabular label column; float labels become > threshold
"""
import logging
import math

import keras
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.components.trainer.fn_args_utils import FnArgs

from trainer import data_spec, input_pipeline, model, signatures

NUMERIC_SAMPLE_ROWS = 4096
MAX_EPOCHS = 10  # the fit is cut into up to 10 "epochs" so TensorBoard shows curves


def _image_setup(fn_args: FnArgs, config: dict, batch_size: int):
  spec = data_spec.image_spec(data_spec.examples_root(fn_args.train_files[0]), config)
  logging.info('Image input %dx%dx%d, %d classes, %s records', spec.height, spec.width,
               spec.channels, spec.num_classes, spec.encoding)
  train = input_pipeline.image_dataset(fn_args.train_files, spec, batch_size, training=True)
  evaluation = input_pipeline.image_dataset(fn_args.eval_files, spec, batch_size, training=False)
  built = model.build_image_model(spec, config.get('learning_rate', 1e-3))
  return built, train, evaluation, signatures.image_signatures(built, spec)


def _tabular_setup(fn_args: FnArgs, config: dict, batch_size: int):
  schema = data_spec.read_schema(fn_args.schema_path)
  label_key = config['label_key']
  label = next((f for f in schema.feature if f.name == label_key), None)
  max_label = (input_pipeline.max_int_label(fn_args.train_files, label_key)
               if label is not None and label.type == schema_pb2.INT else 1)
  spec = data_spec.tabular_spec(schema, config, max_label)
  logging.info('Tabular input: %d numeric, %d categorical columns, label %s (%d classes)',
               len(spec.numeric), len(spec.categorical), label_key, spec.num_classes)
  train = input_pipeline.tabular_dataset(fn_args.train_files, spec, batch_size, training=True)
  evaluation = input_pipeline.tabular_dataset(fn_args.eval_files, spec, batch_size, training=False)
  sample = input_pipeline.tabular_dataset(fn_args.train_files, spec, NUMERIC_SAMPLE_ROWS,
                                          training=False)
  features, _ = next(iter(sample))
  built = model.build_tabular_model(spec, features, config.get('learning_rate', 1e-3))
  return built, train, evaluation, signatures.tabular_signatures(built, spec)


def run_fn(fn_args: FnArgs) -> None:
  """Trains for fn_args.train_steps, evaluates, saves a SavedModel with its signatures."""
  config = fn_args.custom_config or {}
  batch_size = int(config.get('batch_size', 64))
  setup = _image_setup if config.get('data_kind') == data_spec.IMAGE else _tabular_setup
  built, train, evaluation, serving = setup(fn_args, config, batch_size)

  epochs = max(1, min(MAX_EPOCHS, fn_args.train_steps))
  eval_steps = fn_args.eval_steps or None  # None: the whole eval split
  built.fit(train, epochs=epochs, steps_per_epoch=math.ceil(fn_args.train_steps / epochs),
            validation_data=evaluation, validation_steps=eval_steps, verbose=2,
            callbacks=[keras.callbacks.TensorBoard(log_dir=fn_args.model_run_dir)])
  tf.saved_model.save(built, fn_args.serving_model_dir, signatures=serving)
  logging.info('Saved model with signatures %s to %s', sorted(serving), fn_args.serving_model_dir)
