"""Image shards → (uint8 images, int64 labels): decoded a batch per call, fitted to the model's
size, augmented when asked, held in memory when the input cache says so (shuffled_from_memory)."""

import dataclasses
import logging
from typing import Dict, List, Optional, Union

import tensorflow as tf

from contracts import image_record
from records import image_codec
from trainer import shards
from trainer.data_spec import ImageSpec

AUTOTUNE = tf.data.AUTOTUNE


def _resize_to_model(image: tf.Tensor, spec: ImageSpec) -> tf.Tensor:
  """Resizes one HxWxC uint8 image to the model's size (a no-op when it already fits).

  Antialiased only when a side shrinks by more than 2x: a plain bilinear resize would alias
  there, and below that it is as good for half the cost (0.71 vs 1.53 ms for 300x225 → 224x224
  on one core; large JPEGs arrive within 2x after decode_jpeg_at_least).
  """
  size = tf.shape(image)[:2]
  same = tf.reduce_all(size == [spec.height, spec.width])
  large = tf.reduce_any(size > [2 * spec.height, 2 * spec.width])

  def resize(antialias: bool) -> tf.Tensor:
    resized = tf.image.resize(image, [spec.height, spec.width], antialias=antialias)
    return tf.cast(tf.clip_by_value(tf.round(resized), 0, 255), tf.uint8)

  resized = lambda: tf.cond(large, lambda: resize(True), lambda: resize(False))
  return tf.ensure_shape(
    tf.cond(same, lambda: image, resized), [spec.height, spec.width, spec.channels]
  )


JPEG_SCALES = (1, 2, 4, 8)  # libjpeg decodes at 1/2, 1/4 or 1/8 scale for less work


def decode_jpeg_at_least(payload: tf.Tensor, spec: ImageSpec) -> tf.Tensor:
  """A JPEG decoded at the smallest of JPEG_SCALES that still covers the model's size (DCT-domain
  downscaling), ready for _resize_to_model: a 1600x1200 photo for a 224x224 model is decoded at
  400x300; with the resize, 1.8x the photos/s of a full decode (docs/benchmarks.md: camera-size
  photos)."""
  shape = tf.io.extract_jpeg_shape(payload)
  covers = [
    tf.logical_and(shape[0] // scale >= spec.height, shape[1] // scale >= spec.width)
    for scale in JPEG_SCALES[1:]
  ]
  index = tf.add_n([tf.cast(c, tf.int32) for c in covers])  # how many halvings still cover it
  decode = lambda scale: lambda: tf.io.decode_jpeg(payload, channels=spec.channels, ratio=scale)
  return tf.switch_case(index, [decode(scale) for scale in JPEG_SCALES])


def decode_encoded(payloads: tf.Tensor, spec: ImageSpec) -> tf.Tensor:
  """A batch of JPEG/PNG bytes → uint8 [batch, height, width, channels]."""

  def one(payload):
    if spec.uniform:
      return tf.io.decode_image(payload, channels=spec.channels, expand_animations=False)
    image = tf.cond(
      tf.io.is_jpeg(payload),
      lambda: decode_jpeg_at_least(payload, spec),
      lambda: tf.io.decode_image(payload, channels=spec.channels, expand_animations=False),
    )
    return _resize_to_model(image, spec)

  shape = [spec.height, spec.width, spec.channels]
  return tf.map_fn(one, payloads, fn_output_signature=tf.TensorSpec(shape, tf.uint8))


def _to_channels(image: tf.Tensor, stored: tf.Tensor, wanted: int) -> tf.Tensor:
  """Raw pixels are stored with 1 or 3 channels (see encode.encode_image)."""
  if wanted == 3:
    return tf.cond(stored == 1, lambda: tf.tile(image, [1, 1, 3]), lambda: image)
  gray = lambda: tf.cast(
    tf.round(tf.reduce_sum(tf.cast(image, tf.float32) * [0.2989, 0.587, 0.114], -1, keepdims=True)),
    tf.uint8,
  )
  return tf.cond(stored == 3, gray, lambda: image)


def decode_raw(parsed: Dict[str, tf.Tensor], spec: ImageSpec) -> tf.Tensor:
  """A batch of raw uint8 pixel records → uint8 [batch, height, width, channels]."""
  shape = [spec.height, spec.width, spec.channels]
  if spec.uniform:
    return tf.reshape(tf.io.decode_raw(parsed[image_record.IMAGE_KEY], tf.uint8), [-1] + shape)

  def one(fields):
    payload, height, width, channels = fields
    image = tf.reshape(tf.io.decode_raw(payload, tf.uint8), tf.stack([height, width, channels]))
    return _resize_to_model(_to_channels(image, channels, spec.channels), spec)

  fields = tuple(
    parsed[key]
    for key in (
      image_record.IMAGE_KEY,
      image_record.HEIGHT_KEY,
      image_record.WIDTH_KEY,
      image_record.CHANNELS_KEY,
    )
  )
  return tf.map_fn(one, fields, fn_output_signature=tf.TensorSpec(shape, tf.uint8))


def decode_images(parsed: Dict[str, tf.Tensor], spec: ImageSpec) -> tf.Tensor:
  if spec.encoding == image_record.RAW:
    return decode_raw(parsed, spec)
  return decode_encoded(parsed[image_record.IMAGE_KEY], spec)


def decode_any_size(parsed: Dict[str, tf.Tensor], spec: ImageSpec) -> tf.Tensor:
  """decode_images for records that may hold images of another size or channels than the
  training shards (a serving client's, --infer-data's): resized one by one (_resize_to_model)
  unless the whole batch has the model's shape, which keeps the uniform fast path."""
  if not spec.uniform:
    return decode_images(parsed, spec)
  as_trained = tf.reduce_all(
    [
      tf.reduce_all(parsed[key] == size)
      for key, size in (
        (image_record.HEIGHT_KEY, spec.height),
        (image_record.WIDTH_KEY, spec.width),
        (image_record.CHANNELS_KEY, spec.channels),
      )
    ]
  )
  return tf.cond(
    as_trained,
    lambda: decode_images(parsed, spec),
    lambda: decode_images(parsed, dataclasses.replace(spec, uniform=False)),
  )


def augment_images(images: tf.Tensor) -> tf.Tensor:
  """Each image of a uint8 batch mirrored left-right with p=0.5 and shifted by up to 1/8 of
  its size (mirrored edges). For training only; labels are unchanged."""
  height, width = images.shape[1], images.shape[2]
  pad_h, pad_w = max(1, height // 8), max(1, width // 8)
  padded = tf.pad(
    tf.image.random_flip_left_right(images),
    [[0, 0], [pad_h, pad_h], [pad_w, pad_w], [0, 0]],
    mode='SYMMETRIC',
  )
  shape = [height, width, images.shape[3]]
  return tf.map_fn(
    lambda image: tf.image.random_crop(image, shape),
    padded,
    fn_output_signature=tf.TensorSpec(shape, tf.uint8),
  )


def image_dataset(
  file_patterns: Union[str, List[str]],
  spec: ImageSpec,
  batch_size: int,
  training: bool,
  guard: Optional[shards.ShardGuard] = None,
  augment: bool = False,
  cache: bool = False,
) -> tf.data.Dataset:
  """(uint8 images [B, H, W, C], int64 labels [B]) from the project's image shards (a
  shards.DatasetBuilder).

  augment: random flips and shifts (augment_images), applied only when training.
  cache: decode every record once and serve every later pass from memory (trainer/input_cache.py
  decides): training decodes into memory here, before its first epoch (CACHED_SHUFFLE below),
  evaluation in its first pass.
  """

  def parse_and_decode(serialized):
    parsed = tf.io.parse_example(serialized, image_codec.parse_spec())
    return decode_images(parsed, spec), parsed[image_record.LABEL_KEY]

  maybe_augment = lambda images, labels: (augment_images(images), labels)
  files = shards.readable_files(file_patterns, guard)
  if not cache:
    dataset = shards.serialized_batches(files, batch_size, training).map(
      parse_and_decode, num_parallel_calls=AUTOTUNE, deterministic=shards.in_order(training)
    )
  elif not training:  # evaluation: the same batches in the same order every pass
    dataset = (
      shards.serialized_batches(files, batch_size, training=False)
      .map(parse_and_decode, num_parallel_calls=AUTOTUNE)
      .cache()
    )
  else:
    decoded = shards.serialized_batches(files, CACHE_DECODE_BATCH, training=False).map(
      parse_and_decode, num_parallel_calls=AUTOTUNE
    )
    dataset = shuffled_from_memory(decoded, batch_size)
  if augment and training:
    dataset = dataset.map(
      maybe_augment, num_parallel_calls=AUTOTUNE, deterministic=shards.in_order(training)
    )
  return dataset.prefetch(AUTOTUNE)


CACHE_DECODE_BATCH = 256


def shuffled_from_memory(decoded: tf.data.Dataset, batch_size: int) -> tf.data.Dataset:
  """Endless batches of `decoded`'s examples, held in memory: every epoch a new permutation,
  each batch one tf.gather of it (parallel over batches), the remainder of each epoch left out.

  decoded: a finite dataset of (images, labels) batches, read once here.
  """
  with tf.device('/CPU:0'):  # host memory, whatever device (or strategy scope) is around
    batches = list(decoded)
    examples = tuple(tf.concat(parts, axis=0) for parts in zip(*batches))
  del batches  # the concatenated copy is what stays
  count = int(examples[1].shape[0])
  logging.info('input cache: %d examples decoded into memory', count)
  if count < batch_size:
    raise ValueError(f'{count} examples cannot fill a batch of {batch_size}')
  steps = count // batch_size

  def epoch(_):
    order = tf.random.shuffle(tf.range(count))[: steps * batch_size]
    return tf.data.Dataset.from_tensor_slices(tf.reshape(order, [steps, batch_size]))

  gather = lambda indices: tuple(tf.gather(tensor, indices) for tensor in examples)
  # Unordered (unless --seed): a batch of the next epoch may overtake the last ones of this epoch. In order, the
  # cached JPEG epoch fell from 1.00x to 0.89x of the in-memory recipe (bench/input_pipeline.py).
  return (
    tf.data.Dataset.range(2**62)
    .flat_map(epoch)
    .map(gather, num_parallel_calls=AUTOTUNE, deterministic=shards.in_order(True))
  )


# CACHED_SHUFFLE: how a cached training set is still shuffled every epoch. Images are decoded
# into one uint8 tensor before training (the pass that would have been the first epoch), and
# every epoch is a new permutation of it, each batch one gather (shuffled_from_memory): the
# least work a new order per epoch needs (every image copied once); augmentation runs after
# it. Tabular rows: trainer/tabular_input.tabular_dataset. Figures: docs/benchmarks.md (Input
# pipeline: the cache).
