"""The input pipelines the benchmark compares, each an endless iterator of batches of 64.

ceiling    what the hardware delivers with nothing else to do: JPEG decode of in-memory bytes on
           all cores (per image or per batch); a bare TFRecord read for raw pixels; read → batch
           → parse_example → prefetch for tabular data (reads sequential or parallel). The
           fastest variant is the data set's ceiling.
seed_000   the 000 seed article's recipe: map(parse_single_example + decode_image + resize + normalise
           to float, AUTOTUNE) → shuffle(10,000) → batch(64) → prefetch(AUTOTUNE).
seed_004   the 004 seed article's recipe: TF1 queue runners in graph mode (string_input_producer →
           TFRecordReader → parse_single_example → decode to uint8 → shuffle_batch, one thread
           per core, min_after_dequeue 1,000).
tfx_stock  TFX's reader (tfx_bsl TFExampleRecord.TensorFlowDataset, what
           DataAccessor.tf_dataset_factory returns) plus the project's decode of the image batch.
project    trainer.input_pipeline exactly as the Trainer calls it (ShardGuard included).
"""

import os
from typing import Iterator

import tensorflow as tf
from tfx_bsl.public import tfxio

from bench.input_data import SIDE, DataSet
from contracts import image_record
from trainer import input_pipeline

BATCH = 64
AUTOTUNE = tf.data.AUTOTUNE
_IMAGE_FEATURES = {
  image_record.IMAGE_KEY: tf.io.FixedLenFeature([], tf.string),
  image_record.LABEL_KEY: tf.io.FixedLenFeature([], tf.int64),
}


def _decode_one(payload: tf.Tensor, encoding: str) -> tf.Tensor:
  if encoding == image_record.ENCODED:
    return tf.io.decode_jpeg(payload, channels=3)
  return tf.reshape(tf.io.decode_raw(payload, tf.uint8), [SIDE, SIDE, 3])


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
    }
  reads = {
    'sequential': tf.data.TFRecordDataset(data.files).repeat(),
    'parallel': tf.data.TFRecordDataset(data.files, num_parallel_reads=len(data.files)).repeat(),
  }
  if data.name == 'raw':
    return {
      f'ceiling_read_{kind}': read.batch(BATCH).prefetch(AUTOTUNE) for kind, read in reads.items()
    }
  spec = data.spec.parse_spec()
  # Parsed columns are ragged (cells can be empty); handing RaggedTensors to Python costs more
  # than parsing them, so the ceiling delivers each column's flat values.
  parse = lambda s: {k: v.flat_values for k, v in tf.io.parse_example(s, spec).items()}
  return {
    f'ceiling_read_parse_{kind}': read.batch(BATCH).map(parse, AUTOTUNE).prefetch(AUTOTUNE)
    for kind, read in reads.items()
  }


def seed_000(data: DataSet) -> tf.data.Dataset:
  if data.name == 'tabular':  # per record, every column a VarLenFeature (cells can be empty)
    spec = {k: tf.io.VarLenFeature(v.dtype) for k, v in data.spec.parse_spec().items()}
    parse = lambda s: tf.io.parse_single_example(s, spec)
  else:

    def parse(serialized):
      parsed = tf.io.parse_single_example(serialized, _IMAGE_FEATURES)
      if data.name == 'jpeg':
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
    .shuffle(10_000)
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


def project(data: DataSet, salvage_dir: str) -> tf.data.Dataset:
  guard = input_pipeline.ShardGuard(salvage_dir)
  if data.name == 'tabular':
    return input_pipeline.tabular_dataset(data.files, data.spec, BATCH, True, guard)
  return input_pipeline.image_dataset(data.files, data.spec, BATCH, True, guard)


def batches(name: str, data: DataSet, salvage_dir: str) -> Iterator:
  """An endless iterator of BATCH-sized batches for one pipeline (call .close() if present)."""
  if name == 'seed_004':
    return QueueRunnerBatches(data)
  dataset = {'seed_000': seed_000, 'tfx_stock': tfx_stock}.get(name)
  if dataset is not None:
    return iter(dataset(data))
  if name == 'project':
    return iter(project(data, salvage_dir))
  return iter(ceilings(data)[name])
