"""The Trainer's tf.data input pipeline.

Shape of the pipeline, and why (2 cores, batch 64; figures from ../shared/NOTES.md and from
`python -m bench.input_pipeline` and isolated variants of it on 2026-11-30):
  list shards → interleave TFRecordDatasets → shuffle *serialized* records → batch → one
  vectorised `parse_example` per batch → decode a batch per map call (parallel over batches)
  → prefetch.
- Local shards are interleaved round-robin in one thread, not with parallel reads: parallel
  interleave hands single records between threads, which costs more than it gives for small
  records (taxi tf.Examples, 0.5 KB: 183k rec/s round-robin vs 87k parallel), ties for 150 KB
  raw-pixel records (13.3–14.4k vs 13.8–14.9k) and loses slightly for 15 KB JPEGs (9.4–9.5k vs
  8.6–9.3k). Object storage (gs://, s3://) keeps 4 parallel reads to hide request latency.
- JPEG decode is mapped over whole batches (tf.map_fn inside one map call, batches in parallel):
  10.3k img/s against 7.6k for a per-image parallel map on the same in-memory bytes
  (docs/input_pipeline.json, ceiling_variants). The whole function: 0.81–0.92× that decode
  ceiling across runs (docs/benchmarks.md: Input pipeline).
- Batch-then-parse is 11× faster than `parse_single_example` per record (319k vs 28k rec/s on
  small Examples): one parser call per batch instead of one per record.
- Parallelism is over whole batches, not records: per-record parallel maps cost more than they
  give on few cores (stock TFX reader 40–90k rec/s vs 385–500k for read→batch→parse→prefetch).
- Images stay uint8 on the host; the model normalises (float32 would move 4× the bytes). The
  seed recipe's float conversion in `map` is most of why it reaches 1.6k img/s vs 4.1k tuned.
- Shards are read uncompressed by default: GZIP costs 4× (JPEG) to 8× (raw pixels) on read.
- The shuffle buffer holds serialized records, sized by bytes (default 64 MB) so that raw-pixel
  records (150 KB at 224×224×3) cannot blow up host memory the way 10,000 records would.
- When every stored image already has the model's shape, raw pixels are decoded for the whole
  batch at once (one `decode_raw` + reshape), and JPEG/PNG skip the resize.
- A training set that fits a quarter of memory is decoded once and served from memory ever
  after (`--input-cache`, trainer/input_cache.py; CACHED_SHUFFLE below says how it is
  still shuffled): 67–75k images/s from memory against 5.5–6.3k decoding JPEGs every epoch,
  1.00× of serving the same decoded images from memory in a new order with nothing else
  (docs/benchmarks.md: Input pipeline, the cache).
- Large JPEGs (stored bigger than the model's input) are decoded at a 1/2, 1/4 or 1/8 DCT scale
  that still covers the model's size: 1600x1200 photos for a 224x224 model, decoded and resized,
  370 photos/s at 1/4 against 204 in full (docs/benchmarks.md: camera-size photos).
- Damaged shards lose only their damaged records (ShardGuard): every shard is scanned once
  (CRCs, ~1 µs per record plus reading the file) and a damaged one is read from a salvaged copy
  of its intact records, so the reading itself is always TensorFlow's native reader at full speed.
  Stock `ignore_errors()` would end a shard at its first bad record.
"""

import dataclasses
import logging
from typing import Dict, List, Optional, Union

import tensorflow as tf

from contracts import image_record
from records import scan
from trainer.data_spec import ImageSpec, TabularSpec

AUTOTUNE = tf.data.AUTOTUNE
SHUFFLE_BUFFER_BYTES = 64 * 1024 * 1024
MAX_SHUFFLE_RECORDS = 10_000
PARALLEL_SHARD_READS = 4


def shard_files(file_patterns: Union[str, List[str]]) -> List[str]:
  """Sorted shard paths behind one or more glob patterns."""
  patterns = [file_patterns] if isinstance(file_patterns, str) else list(file_patterns)
  return sorted(path for pattern in patterns for path in tf.io.gfile.glob(pattern))


class ShardGuard:
  """Scans shards before they are read; damaged ones are read from salvaged copies.

  Each path is scanned once however many datasets read it; `reports` keeps what was found.
  """

  def __init__(self, salvage_dir: str):
    self.salvage_dir = salvage_dir
    self._checked: Dict[str, scan.ShardReport] = {}

  def __call__(self, files: List[str]) -> List[str]:
    """The readable stand-in of each shard (itself if clean), empty ones left out."""
    todo = [path for path in files if path not in self._checked]
    folder = f'{self.salvage_dir}/{len(self._checked)}'
    for report in scan.check_all(todo, salvage_dir=folder):
      self._checked[report.path] = report
      if not report.clean:
        logging.warning(
          'damaged shard %s: %d intact records kept, %d corrupt skipped (%d bytes), %d '
          'truncated tail bytes%s',
          report.path,
          report.good,
          report.corrupt,
          report.lost_bytes,
          report.truncated_bytes,
          ', GZIP stream broken: nothing after the damage is readable'
          if report.gzip_damaged
          else '',
        )
    readable = [self._checked[path] for path in files]
    return [r.salvaged_to or r.path for r in readable if r.good]

  @property
  def reports(self) -> List[scan.ShardReport]:
    return list(self._checked.values())


def _compression(files: List[str]) -> str:
  kinds = {path.endswith('.gz') for path in files}
  if len(kinds) > 1:
    raise ValueError('a split mixes GZIP (.gz) and uncompressed shards')
  return 'GZIP' if kinds.pop() else ''


def shuffle_buffer_size(files: List[str]) -> int:
  """Records that fit in SHUFFLE_BUFFER_BYTES, estimated from shard sizes (capped)."""
  total = sum(tf.io.gfile.stat(path).length for path in files)
  sample = tf.data.TFRecordDataset(files[:1], compression_type=_compression(files)).take(256)
  sizes = [len(r) for r in sample.as_numpy_iterator()]
  mean = (sum(sizes) / len(sizes)) if sizes else max(total, 1)
  return int(max(64, min(MAX_SHUFFLE_RECORDS, SHUFFLE_BUFFER_BYTES // max(mean, 1))))


def serialized_batches(
  files: List[str], batch_size: int, training: bool, repeat: Optional[bool] = None
) -> tf.data.Dataset:
  """Batches of serialized records: shuffled when training, and then repeated forever unless
  `repeat` is False (one shuffled pass, for a cache)."""
  repeat = training if repeat is None else repeat
  dataset = tf.data.Dataset.from_tensor_slices(files)
  if training:
    dataset = dataset.shuffle(len(files), reshuffle_each_iteration=True)
  compression = _compression(files)
  read = lambda path: tf.data.TFRecordDataset(path, compression_type=compression)
  cycle = min(len(files), PARALLEL_SHARD_READS)
  if any('://' in path for path in files):  # object storage: parallel reads hide its latency
    dataset = dataset.interleave(
      read, cycle_length=cycle, num_parallel_calls=cycle, deterministic=not training
    )
  else:  # local files: round-robin in one thread (see the module docstring for why)
    dataset = dataset.interleave(read, cycle_length=cycle)
  if training:
    dataset = (dataset.repeat() if repeat else dataset).shuffle(shuffle_buffer_size(files))
  return dataset.batch(batch_size, drop_remainder=training and repeat)


def _fit(image: tf.Tensor, spec: ImageSpec) -> tf.Tensor:
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
  downscaling), ready for _fit: a 1600x1200 photo for a 224x224 model is decoded at 400x300;
  with the resize, 1.8x the photos/s of a full decode (docs/benchmarks.md: camera-size photos)."""
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
    return _fit(image, spec)

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
    return _fit(_to_channels(image, channels, spec.channels), spec)

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
  training shards (a serving client's, --infer-data's): fitted one by one (_fit) unless the
  whole batch has the model's shape, which keeps the uniform fast path."""
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


def readable_files(file_patterns: Union[str, List[str]], guard: Optional[ShardGuard]) -> List[str]:
  files = shard_files(file_patterns)
  readable = guard(files) if guard else files
  if not readable:
    raise ValueError(f'no readable records in {file_patterns}')
  return readable


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


def record_count(file_patterns: Union[str, List[str]], guard: Optional[ShardGuard] = None) -> int:
  """Readable records behind `file_patterns` (the shards, not their salvaged stand-ins):
  counted by the guard's scan when there is one, else by reading."""
  files = shard_files(file_patterns)
  if guard is not None:
    guard(files)
    readable = set(files)
    return sum(r.good for r in guard.reports if r.path in readable)
  read = tf.data.TFRecordDataset(files, compression_type=_compression(files))
  return int(read.reduce(tf.constant(0, tf.int64), lambda count, _: count + 1))


def image_dataset(
  file_patterns: Union[str, List[str]],
  spec: ImageSpec,
  batch_size: int,
  training: bool,
  guard: Optional[ShardGuard] = None,
  augment: bool = False,
  cache: bool = False,
) -> tf.data.Dataset:
  """(uint8 images [B, H, W, C], int64 labels [B]) from the project's image shards.

  augment: random flips and shifts (augment_images), applied only when training.
  cache: decode every record once and serve every later pass from memory (trainer/input_cache.py
  decides): training decodes into memory here, before its first epoch (CACHED_SHUFFLE below),
  evaluation in its first pass.
  """

  def parse_and_decode(serialized):
    parsed = tf.io.parse_example(serialized, image_record.parse_spec())
    return decode_images(parsed, spec), parsed[image_record.LABEL_KEY]

  maybe_augment = lambda images, labels: (augment_images(images), labels)
  files = readable_files(file_patterns, guard)
  if not cache:
    dataset = serialized_batches(files, batch_size, training).map(
      parse_and_decode, num_parallel_calls=AUTOTUNE, deterministic=not training
    )
  elif not training:  # evaluation: the same batches in the same order every pass
    dataset = (
      serialized_batches(files, batch_size, training=False)
      .map(parse_and_decode, num_parallel_calls=AUTOTUNE)
      .cache()
    )
  else:
    decoded = serialized_batches(files, CACHE_DECODE_BATCH, training=False).map(
      parse_and_decode, num_parallel_calls=AUTOTUNE
    )
    dataset = shuffled_from_memory(decoded, batch_size)
  if augment and training:
    dataset = dataset.map(maybe_augment, num_parallel_calls=AUTOTUNE, deterministic=False)
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
  # Unordered: a batch of the next epoch may overtake the last ones of this epoch. In order, the
  # cached JPEG epoch fell from 1.00x to 0.89x of the in-memory recipe (bench/input_pipeline.py).
  return (
    tf.data.Dataset.range(2**62)
    .flat_map(epoch)
    .map(gather, num_parallel_calls=AUTOTUNE, deterministic=False)
  )


def tabular_label(label: tf.Tensor, spec: TabularSpec) -> tf.Tensor:
  """The class id the model learns: a thresholded float label, a class name's index in
  spec.label_names (-1 for a name the train split did not have), or the int label itself."""
  if spec.label_threshold is not None:
    return tf.cast(label > spec.label_threshold, tf.int64)
  if spec.label_names:
    # A comparison with every name: no lookup table to track in the SavedModel, and classes
    # are few (a [batch, classes] boolean matrix).
    matches = tf.equal(label[:, None], tf.constant(spec.label_names)[None, :])
    found = tf.argmax(tf.cast(matches, tf.int64), axis=1)
    return tf.where(tf.reduce_any(matches, axis=1), found, tf.constant(-1, tf.int64))
  return label


def first_or_default(ragged: tf.RaggedTensor, default=None) -> tf.Tensor:
  """[batch, 0 or 1 values] → [batch], padding empty rows with `default` (None: 0 / '')."""
  if default is None:
    default = '' if ragged.dtype == tf.string else tf.zeros([], ragged.dtype)
  return ragged.to_tensor(default_value=default, shape=[None, 1])[:, 0]


def label_or_default(ragged: tf.RaggedTensor, spec: TabularSpec) -> tf.Tensor:
  """The label column as [batch]: rows without a value (or with NaN) take --label-default."""
  if not spec.label_default:
    return first_or_default(ragged)
  if ragged.dtype == tf.string:
    return first_or_default(ragged, spec.label_default)
  default = tf.constant(float(spec.label_default), tf.float64)  # exact for class ids and floats
  label = first_or_default(ragged, tf.cast(default, ragged.dtype))
  if ragged.dtype.is_floating:
    return tf.where(tf.math.is_nan(label), tf.cast(default, label.dtype), label)
  return label


def parse_tabular(serialized: tf.Tensor, spec: TabularSpec, with_label: bool = True):
  """A batch of serialized rows → the model's columns (model_columns) (+ label).

  A missing or empty value becomes 0 (numeric) or '' (categorical, before hashing).
  """
  parse_spec = spec.parse_spec()
  if not with_label:
    del parse_spec[spec.label_key]
  parsed = tf.io.parse_example(serialized, parse_spec)
  label = label_or_default(parsed.pop(spec.label_key), spec) if with_label else None
  parsed = {key: first_or_default(value) for key, value in parsed.items()}
  features = model_columns(parsed, spec)
  return (features, tabular_label(label, spec)) if with_label else features


def model_columns(columns: Dict[str, tf.Tensor], spec: TabularSpec) -> Dict[str, tf.Tensor]:
  """Column values as the model takes them: numbers as float32, categories as int64 ids in
  [0, spec.hash_bins) (FarmHash of the string, as keras.layers.Hashing), so that the model's
  step holds no string op and XLA can compile it (TPUs need that)."""
  return {
    key: tf.strings.to_hash_bucket_fast(value, spec.hash_bins)
    if key in spec.categorical
    else tf.cast(value, tf.float32)
    for key, value in columns.items()
  }


# CACHED_SHUFFLE: how a cached training set is still shuffled every epoch. Images are decoded
# into one uint8 tensor before training (the pass that would have been the first epoch), and
# every epoch is a new permutation of it, each batch one gather (shuffled_from_memory): the
# least work a new order per epoch needs (every image copied once); augmentation runs after
# it. Tabular rows are cached as parsed batches (one parse per batch is what makes them fast:
# see TABULAR_BATCHES_PER_PARSE) whose rows were shuffled in the first pass; later passes
# shuffle the order of those batches, not their rows. Figures: docs/benchmarks.md (Input
# pipeline: the cache).

# Tabular rows are parsed and densified TABULAR_BATCHES_PER_PARSE batches at a time, then cut
# back into batches (`rebatch`, the same records in the same order): parsing costs a few ops per
# column whatever the batch size, and small rows make that overhead the bottleneck. Taxi rows
# (0.5 KB, 17 columns), batch 64, 2 cores: 244k rec/s (0.83x of read -> batch -> parse) against
# 200k (0.68x) parsing every batch alone; 8 or 16 batches at once gave no more (240k, 248k).
TABULAR_BATCHES_PER_PARSE = 4


def tabular_dataset(
  file_patterns: Union[str, List[str]],
  spec: TabularSpec,
  batch_size: int,
  training: bool,
  guard: Optional[ShardGuard] = None,
  cache: bool = False,
) -> tf.data.Dataset:
  """(feature dict, int64 labels [B]) from tabular tf.Example shards.

  cache: parse every record once, in the first (shuffled) pass, and serve later passes from
  memory as whole batches in a new order every pass (see CACHED_SHUFFLE).
  """
  parse = lambda serialized: parse_tabular(serialized, spec)
  files = readable_files(file_patterns, guard)
  dataset = (
    serialized_batches(
      files, batch_size * TABULAR_BATCHES_PER_PARSE, training, repeat=training and not cache
    )
    .map(parse, num_parallel_calls=AUTOTUNE, deterministic=not training)
    .rebatch(batch_size, drop_remainder=training)
  )
  if cache:
    dataset = dataset.cache()
    if training:
      batches = max(1, record_count(file_patterns, guard) // batch_size)
      dataset = dataset.shuffle(batches, reshuffle_each_iteration=True).repeat()
  return dataset.prefetch(AUTOTUNE)


def label_names(
  file_patterns: Union[str, List[str]], label_key: str, guard: Optional[ShardGuard] = None
) -> List[str]:
  """The sorted distinct values of a string label column (one pass over the split)."""
  spec = {label_key: tf.io.RaggedFeature(tf.string)}
  names = set()
  batches = serialized_batches(readable_files(file_patterns, guard), 4096, training=False).map(
    lambda s: tf.unique(tf.io.parse_example(s, spec)[label_key].flat_values).y
  )
  for values in batches:
    names.update(value.decode('utf-8', errors='replace') for value in values.numpy())
  return sorted(names)


def max_int_label(
  file_patterns: Union[str, List[str]], label_key: str, guard: Optional[ShardGuard] = None
) -> int:
  """Largest value of an int64 label column (one vectorised pass over the split)."""
  spec = {label_key: tf.io.RaggedFeature(tf.int64)}  # a record may hold no value at all
  batches = serialized_batches(readable_files(file_patterns, guard), 4096, training=False).map(
    lambda s: tf.reduce_max(tf.io.parse_example(s, spec)[label_key].flat_values)
  )
  return int(batches.reduce(tf.constant(0, tf.int64), tf.maximum))
