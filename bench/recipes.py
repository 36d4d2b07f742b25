"""The input pipelines the benchmark compares, each an endless iterator of batches of 64.

ceiling    the work that cannot be skipped, on all cores: JPEG decode of in-memory bytes (per
           image or per batch); read → batch → parse_example → decode_raw for raw pixels
           (`ceiling_parse`); read → batch → parse_example → prefetch for tabular data (reads
           sequential or parallel). The fastest variant is the data set's ceiling.
bare_read  raw pixels only: a bare TFRecord read → batch (what the disk and page cache give).
memory     decoded batches already in memory, each epoch in a new order (the ceiling of a
           cached epoch); memory_in_order: the same in stored order, no copy at all.
seed_000   the 000 seed article's recipe: map(parse_single_example + decode_image + resize + normalise
           to float, AUTOTUNE) → shuffle(10,000) → batch(64) → prefetch(AUTOTUNE).
seed_004   the 004 seed article's recipe: TF1 queue runners in graph mode (string_input_producer →
           TFRecordReader → parse_single_example → decode to uint8 → shuffle_batch, one thread
           per core, min_after_dequeue 1,000).
tfx_stock  TFX's reader (tfx_bsl TFExampleRecord.TensorFlowDataset, what
           DataAccessor.tf_dataset_factory returns) plus the project's decode of the image batch.
tfx_stock_per_record  the same reader with the decode a TFX user writes: unbatch → map(decode
           one image, AUTOTUNE) → batch.
project    trainer.image_input / tabular_input as the Trainer calls them (ShardGuard included);
           project_cached: the same with the in-memory cache (trainer/input_cache.py), after its
           first epoch.
"""

import os
from typing import Iterator

import tensorflow as tf
from tfx_bsl.public import tfxio

from bench.input_data import SIDE, DataSet
from contracts import image_record
from trainer import image_input, shards, tabular_input

BATCH = 64
AUTOTUNE = tf.data.AUTOTUNE
READ_PARSE_DECODE = 'ceiling_read_parse_decode'  # JPEG: the decode ceiling plus reading shards
_IMAGE_FEATURES = {
  image_record.IMAGE_KEY: tf.io.FixedLenFeature([], tf.string),
  image_record.LABEL_KEY: tf.io.FixedLenFeature([], tf.int64),
}


def _decode_one(payload: tf.Tensor, encoding: str) -> tf.Tensor:
  if encoding == image_record.ENCODED:
    return tf.io.decode_jpeg(payload, channels=3)
  return tf.reshape(tf.io.decode_raw(payload, tf.uint8), [SIDE, SIDE, 3])


def _parse_image_batch(serialized: tf.Tensor) -> tf.Tensor:
  return tf.io.parse_example(serialized, _IMAGE_FEATURES)[image_record.IMAGE_KEY]


def _parse_raw_batch(serialized: tf.Tensor):
  parsed = tf.io.parse_example(serialized, _IMAGE_FEATURES)
  pixels = tf.io.decode_raw(parsed[image_record.IMAGE_KEY], tf.uint8)
  return tf.reshape(pixels, [-1, SIDE, SIDE, 3]), parsed[image_record.LABEL_KEY]


def ceilings(data: DataSet) -> dict:
  """name → dataset; the data set's ceiling is the fastest of them."""
  if data.name == 'jpeg':
    payloads = tf.data.Dataset.from_tensor_slices(tf.constant(list(data.payloads))).repeat()
    decode = lambda p: tf.io.decode_jpeg(p, channels=3)
    per_batch = lambda b: tf.map_fn(
      decode, b, fn_output_signature=tf.TensorSpec([SIDE, SIDE, 3], tf.uint8)
    )
    return {
      'ceiling_decode_per_image': payloads.map(decode, AUTOTUNE, deterministic=False)
      .batch(BATCH)
      .prefetch(AUTOTUNE),
      'ceiling_decode_per_batch': payloads.batch(BATCH)
      .map(per_batch, AUTOTUNE, deterministic=False)
      .prefetch(AUTOTUNE),
      # What reading the shards adds to the decode: no shuffle, no checks, nothing else.
      READ_PARSE_DECODE: tf.data.TFRecordDataset(data.files, num_parallel_reads=len(data.files))
      .repeat()
      .batch(BATCH)
      .map(lambda s: per_batch(_parse_image_batch(s)), AUTOTUNE, deterministic=False)
      .prefetch(AUTOTUNE),
    }
  reads = {
    'sequential': tf.data.TFRecordDataset(data.files).repeat(),
    'parallel': tf.data.TFRecordDataset(data.files, num_parallel_reads=len(data.files)).repeat(),
  }
  if data.name == 'raw':
    return {
      f'ceiling_parse_{kind}': read.batch(BATCH).map(_parse_raw_batch, AUTOTUNE).prefetch(AUTOTUNE)
      for kind, read in reads.items()
    }
  spec = data.spec.parse_spec()
  # Parsed columns are ragged (cells can be empty); handing RaggedTensors to Python costs more
  # than parsing them, so the ceiling delivers each column's flat values.
  parse = lambda s: {k: v.flat_values for k, v in tf.io.parse_example(s, spec).items()}
  return {
    f'ceiling_read_parse_{kind}': read.batch(BATCH).map(parse, AUTOTUNE).prefetch(AUTOTUNE)
    for kind, read in reads.items()
  }


def decode_scaled(data: DataSet, scale: int) -> tf.data.Dataset:
  """In-memory JPEGs decoded at 1/scale (libjpeg's DCT-domain downscaling), then resized to
  the model's SIDE x SIDE, a batch per map call on all cores."""

  def one(payload):
    image = tf.io.decode_jpeg(payload, channels=3, ratio=scale)
    resized = tf.image.resize(image, [SIDE, SIDE], antialias=True)
    return tf.cast(tf.clip_by_value(tf.round(resized), 0, 255), tf.uint8)

  per_batch = lambda b: tf.map_fn(
    one, b, fn_output_signature=tf.TensorSpec([SIDE, SIDE, 3], tf.uint8)
  )
  payloads = tf.data.Dataset.from_tensor_slices(tf.constant(list(data.payloads))).repeat()
  return payloads.batch(BATCH).map(per_batch, AUTOTUNE, deterministic=False).prefetch(AUTOTUNE)


def bare_read(data: DataSet) -> tf.data.Dataset:
  files = data.files
  return tf.data.TFRecordDataset(files, num_parallel_reads=len(files)).repeat().batch(BATCH)


def decoded_in_memory(data: DataSet, salvage_dir: str):
  """Every decoded batch of the data set (the project's evaluation pass decodes them once,
  remainder dropped), stacked: [batches, BATCH, ...] tensors."""
  decoded = list(project(data, salvage_dir, training=False).take(data.records // BATCH))
  return tf.nest.map_structure(lambda *parts: tf.stack(parts), *decoded)


def in_memory(stacked, tabular: bool, shuffled: bool) -> tf.data.Dataset:
  """decoded_in_memory()'s batches iterated: the ceiling of a cached epoch.

  shuffled: a new order every epoch with the least work, the order the project's cache gives:
  images one example at a time (a permutation per epoch, each batch one tf.gather: every image
  copied once), tabular rows as whole batches in a new order. Else in stored order, which hands
  out slices of the stacked batches without copying them.
  """
  batches = tf.data.Dataset.from_tensor_slices(stacked)
  batch_count = tf.nest.flatten(stacked)[0].shape[0]
  if not shuffled:
    return batches.repeat().prefetch(AUTOTUNE)
  if tabular:
    return batches.shuffle(batch_count, reshuffle_each_iteration=True).repeat().prefetch(AUTOTUNE)
  # Written out here rather than calling trainer.image_input.shuffled_from_memory: this is the
  # reference the project's cache is judged against, so it must not share its code.
  examples = tf.nest.map_structure(lambda t: tf.reshape(t, [-1] + t.shape[2:].as_list()), stacked)
  epoch = lambda _: tf.data.Dataset.from_tensor_slices(
    tf.reshape(tf.random.shuffle(tf.range(batch_count * BATCH)), [-1, BATCH])
  )
  gather = lambda indices: tf.nest.map_structure(lambda t: tf.gather(t, indices), examples)
  return (
    tf.data.Dataset.range(1 << 62)
    .flat_map(epoch)
    .map(gather, AUTOTUNE, deterministic=False)
    .prefetch(AUTOTUNE)
  )


def seed_000(data: DataSet, shuffle: int = 10_000) -> tf.data.Dataset:
  if data.name == 'tabular':  # per record, every column a VarLenFeature (cells can be empty)
    spec = {k: tf.io.VarLenFeature(v.dtype) for k, v in data.spec.parse_spec().items()}
    parse = lambda s: tf.io.parse_single_example(s, spec)
  else:

    def parse(serialized):
      parsed = tf.io.parse_single_example(serialized, _IMAGE_FEATURES)
      if data.spec.encoding == image_record.ENCODED:
        image = tf.io.decode_image(
          parsed[image_record.IMAGE_KEY], channels=3, expand_animations=False
        )
      else:
        image = _decode_one(parsed[image_record.IMAGE_KEY], image_record.RAW)
      image = tf.image.resize(image, [SIDE, SIDE])
      return (tf.cast(image, tf.float32) - 127.5) / 127.5, parsed[image_record.LABEL_KEY]

  return (
    tf.data.TFRecordDataset(data.files)
    .repeat()
    .map(parse, num_parallel_calls=AUTOTUNE)
    .shuffle(shuffle)
    .batch(BATCH)
    .prefetch(AUTOTUNE)
  )


class QueueRunnerBatches:
  """seed_004 in a tf.compat.v1 graph; next() runs one shuffle_batch dequeue."""

  def __init__(self, data: DataSet):
    self._graph = tf.Graph()
    with self._graph.as_default():
      queue = tf.compat.v1.train.string_input_producer(data.files, shuffle=True)
      _, serialized = tf.compat.v1.TFRecordReader().read(queue)
      parsed = tf.io.parse_single_example(serialized, _IMAGE_FEATURES)
      image = _decode_one(parsed[image_record.IMAGE_KEY], data.spec.encoding)
      image.set_shape([SIDE, SIDE, 3])
      self._batch = tf.compat.v1.train.shuffle_batch(
        [image, parsed[image_record.LABEL_KEY]],
        batch_size=BATCH,
        capacity=1000 + 3 * BATCH,
        min_after_dequeue=1000,
        num_threads=os.cpu_count() or 1,
      )
      self._session = tf.compat.v1.Session(graph=self._graph)
      self._coordinator = tf.compat.v1.train.Coordinator()
      self._threads = tf.compat.v1.train.start_queue_runners(self._session, self._coordinator)

  def __iter__(self):
    return self

  def __next__(self):
    return self._session.run(self._batch)

  def close(self):
    self._coordinator.request_stop()
    self._session.close()  # closes the queues, which ends the runner threads
    self._coordinator.join(self._threads, stop_grace_period_secs=5)


def tfx_stock(data: DataSet) -> tf.data.Dataset:
  label = 'tips' if data.name == 'tabular' else image_record.LABEL_KEY
  dataset = tfxio.TFExampleRecord(
    file_pattern=data.files, schema=data.schema, telemetry_descriptors=['bench']
  ).TensorFlowDataset(tfxio.TensorFlowDatasetOptions(batch_size=BATCH, label_key=label))
  if data.name == 'tabular':
    return dataset
  encoding = data.spec.encoding

  def decode(features, labels):
    payloads = tf.reshape(features[image_record.IMAGE_KEY], [-1])
    images = tf.map_fn(
      lambda p: _decode_one(p, encoding),
      payloads,
      fn_output_signature=tf.TensorSpec([SIDE, SIDE, 3], tf.uint8),
    )
    return images, labels

  return dataset.map(decode, AUTOTUNE).prefetch(AUTOTUNE)


def tfx_stock_per_record(data: DataSet) -> tf.data.Dataset:
  """TFX's reader, then one image decoded per map call, as a TFX user writes it."""
  encoding = data.spec.encoding
  reader = tfxio.TFExampleRecord(
    file_pattern=data.files, schema=data.schema, telemetry_descriptors=['bench']
  ).TensorFlowDataset(
    tfxio.TensorFlowDatasetOptions(batch_size=BATCH, label_key=image_record.LABEL_KEY)
  )
  decode = lambda features, label: (
    _decode_one(tf.reshape(features[image_record.IMAGE_KEY], []), encoding),
    label,
  )
  return reader.unbatch().map(decode, AUTOTUNE).batch(BATCH).prefetch(AUTOTUNE)


def project(
  data: DataSet,
  salvage_dir: str,
  batch: int = BATCH,
  training: bool = True,
  cache: bool = False,
) -> tf.data.Dataset:
  guard = shards.ShardGuard(salvage_dir)
  if data.name == 'tabular':
    return tabular_input.tabular_dataset(data.files, data.spec, batch, training, guard, cache)
  return image_input.image_dataset(data.files, data.spec, batch, training, guard, cache=cache)


# tf.data's autotuning may grow each pipeline's buffers up to half of the machine's memory: one
# pipeline alone, as in training, but a dozen open side by side here ran out of memory (24 GB).
RAM_BUDGET_PER_PIPELINE = 512 * 1024 * 1024


def endless(dataset: tf.data.Dataset) -> Iterator:
  """An iterator over `dataset` with its autotuned buffers capped (RAM_BUDGET_PER_PIPELINE)."""
  options = tf.data.Options()
  options.autotune.ram_budget = RAM_BUDGET_PER_PIPELINE
  return iter(dataset.with_options(options))


def always_ready(element) -> tf.data.Dataset:
  """`element` again and again, prefetched: no input work, so stalling on it measures only what
  calling next() costs (the stall's floor)."""
  return tf.data.Dataset.from_tensors(element).repeat().prefetch(AUTOTUNE)


def batches(name: str, data: DataSet, salvage_dir: str, seed_shuffle: int = 10_000) -> Iterator:
  """An endless iterator of BATCH-sized batches for one pipeline (call .close() if present).
  seed_shuffle: seed_000's shuffle buffer (the recipe's 10,000; --quick runs take less)."""
  if name == 'seed_004':
    return QueueRunnerBatches(data)
  if name == 'seed_000':
    return endless(seed_000(data, seed_shuffle))
  dataset = {
    'tfx_stock': tfx_stock,
    'tfx_stock_per_record': tfx_stock_per_record,
    'bare_read': bare_read,
  }.get(name)
  if dataset is not None:
    return endless(dataset(data))
  if name == 'project':
    return endless(project(data, salvage_dir))
  if name == 'project_cached':
    return endless(project(data, salvage_dir, cache=True))
  return endless(ceilings(data)[name])
