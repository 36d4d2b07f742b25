"""A module file's `fn_args.data_accessor` on the project's input pipeline: `tf_dataset_factory`
gives what TFXIO's `TFExampleRecord.TensorFlowDataset` gives for the same arguments (records,
order, structure, dtypes, shapes) from a faster pipeline: records read in one thread, whole
batches parsed in parallel, dense batches parsed a few at a time (docs/design/module_files_input.md).
`record_batch_factory` and `data_view_decode_fn` are TFX's own.
"""

import os
from typing import Dict, List, Tuple, Union

import tensorflow as tf
from tfx.components.trainer import fn_args_utils
from tfx.components.util import tfxio_utils
from tfx.proto import example_gen_pb2
from tfx_bsl.tfxio import dataset_options, dataset_util, tensor_representation_util

from contracts import trainer_options

AUTOTUNE = tf.data.AUTOTUNE
# Dense batches (every feature FixedLen) are parsed BATCHES_PER_PARSE at a time, then cut back
# to the batch size (the same records in the same order): parsing costs a few ops per feature
# whatever the batch size (trainer/tabular_input.py does the same). Sparse and ragged batches are
# parsed one by one: a SparseTensor's dense shape is its own batch's longest row.
BATCHES_PER_PARSE = 4
# The prefix TFXIO names a multi-column parse config with (SparseFeature, RaggedFeature); any
# name serves, as features are renamed to their tensor names after parsing.
MULTI_COLUMN_PREFIX = '_tfx_bsl_'
# tf.data's parallel interleave prefetches this many future files per file it reads; with an
# autotuned cycle length it reads cores / (this + 1) files at once (kDefaultCyclePrefetchFactor).
CYCLE_PREFETCH_FACTOR = 2


def parser_config(schema) -> Tuple[Dict[str, object], Dict[str, str]]:
  """({feature name: tf.io feature}, {feature name: tensor name}) as TFXIO derives them from the
  schema's tensor representations (given or inferred)."""
  if schema is None:
    raise ValueError('Unable to create a parsing config because no schema is provided.')
  types = {f.name: f.type for f in schema.feature}
  representations = tensor_representation_util.InferTensorRepresentationsFromMixedSchema(schema)
  config, names = {}, {}
  for tensor_name, representation in representations.items():
    paths = tensor_representation_util.GetSourceColumnsFromTensorRepresentation(representation)
    if len(paths) == 1:
      column = paths[0].initial_step()
      value_type = types[column]
    else:
      column = tensor_name
      source = tensor_representation_util.GetSourceValueColumnFromTensorRepresentation(
        representation
      )
      value_type = types[source.initial_step()]
    feature = tensor_representation_util.CreateTfExampleParserConfig(representation, value_type)
    multi_column = isinstance(feature, (tf.io.SparseFeature, tf.io.RaggedFeature))
    name = f'{MULTI_COLUMN_PREFIX}{tensor_name}_{column}' if multi_column else column
    if name in names:
      raise ValueError(f'Unable to create a valid parsing config: {name} is a duplicate')
    config[name] = feature
    names[name] = tensor_name
  return config, names


def stock_cycle_length(reader_num_threads: int) -> int:
  """The files TFXIO's reader interleaves (tf.data's parallel interleave with its default cycle
  length): AUTOTUNE threads, a third of the schedulable cores (rounded up), else one per thread
  up to the cores."""
  cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
  if reader_num_threads == AUTOTUNE:
    return -(-cores // (CYCLE_PREFETCH_FACTOR + 1))
  return min(reader_num_threads, cores)


def dataset(
  file_pattern: Union[str, List[str]],
  options: dataset_options.TensorFlowDatasetOptions,
  schema,
) -> tf.data.Dataset:
  """TFXIO's TensorFlowDataset of tf.Examples for these arguments, read as the project reads."""
  config, names = parser_config(schema)
  if options.label_key is not None and options.label_key not in names.values():
    raise ValueError(
      f'The `label_key` provided ({options.label_key}) must be one of the following tensors'
      f'names: {sorted(names.values())}.'
    )
  patterns = [file_pattern] if isinstance(file_pattern, str) else list(file_pattern)
  remote = any('://' in str(pattern) for pattern in patterns)
  patterns = tf.convert_to_tensor(patterns)
  in_order = not options.sloppy_ordering
  # TFXIO's file order (list_files, shuffled with its seed) and interleave order (its cycle
  # length, a record of each file in turn), read in one thread: parallel reads of single records
  # cost more than they bring on a local disk; object storage is read in parallel.
  files = tf.data.Dataset.list_files(patterns, shuffle=options.shuffle, seed=options.shuffle_seed)
  compression = dataset_util.detect_compression_type(patterns)
  cycle = stock_cycle_length(options.reader_num_threads)
  read = lambda path: tf.data.TFRecordDataset(path, compression)
  if remote:
    records = files.interleave(read, cycle, num_parallel_calls=cycle, deterministic=in_order)
  else:
    records = files.interleave(read, cycle)
  if options.shuffle:
    records = records.shuffle(options.shuffle_buffer_size, options.shuffle_seed)
  if options.num_epochs != 1:
    records = records.repeat(options.num_epochs)
  drop = options.drop_final_batch or options.num_epochs is None
  dense = all(isinstance(f, tf.io.FixedLenFeature) for f in config.values())
  label_key = options.label_key

  def parse(serialized):
    parsed = tf.io.parse_example(serialized, config)
    features = {names[name]: value for name, value in parsed.items()}
    return features if label_key is None else (features, features.pop(label_key))

  if dense:
    batches = (
      records.batch(options.batch_size * BATCHES_PER_PARSE)
      .map(parse, num_parallel_calls=AUTOTUNE, deterministic=in_order)
      .rebatch(options.batch_size, drop_remainder=drop)
    )
  else:
    batches = records.batch(options.batch_size, drop_remainder=drop).map(
      parse, num_parallel_calls=AUTOTUNE, deterministic=in_order
    )
  return batches.prefetch(AUTOTUNE)


def tuned(examples: list, stock: fn_args_utils.DataAccessor) -> fn_args_utils.DataAccessor:
  """`stock` (TFX's accessor of these Examples artifacts) whose tf_dataset_factory is `dataset`
  where the payload is tf.Example without a DataView (else TFX's, unchanged)."""
  payload, data_view = tfxio_utils.resolve_payload_format_and_data_view_uri(examples)
  if payload != example_gen_pb2.PayloadFormat.FORMAT_TF_EXAMPLE or data_view:
    return stock
  return stock._replace(tf_dataset_factory=dataset)


def for_run_fn(fn_args: fn_args_utils.FnArgs, examples: list) -> fn_args_utils.FnArgs:
  """fn_args with the accessor its custom_config's `input_accessor` names (TrainerOptions'
  default when absent): TUNED, the project's (`tuned`); TFX_ACCESSOR, TFXIO's as it was."""
  choice = (fn_args.custom_config or {}).get(
    'input_accessor', trainer_options.TrainerOptions.input_accessor
  )
  if choice == trainer_options.TUNED:
    fn_args.data_accessor = tuned(examples, fn_args.data_accessor)
  return fn_args
