"""The Trainer's TFRecord shards: listed, scanned (damaged ones read from salvaged copies of their
intact records, ShardGuard), read as batches of serialized records, and scanned once for a count or
a label column's values; DatasetBuilder names what each data kind's input module builds from them. Why it reads as it does: docs/benchmarks.md (Input pipeline throughput).
"""

import logging
from typing import Dict, List, Optional, Protocol, Union

import tensorflow as tf

from records import scan
from utils import tf_memory

SHUFFLE_BUFFER_BYTES = 64 * 1024 * 1024
MAX_SHUFFLE_RECORDS = 10_000
PARALLEL_SHARD_READS = 4


def in_order(training: bool) -> bool:
  """`deterministic` of a parallel map or interleave: training takes elements as they are ready
  (faster), unless TensorFlow's op determinism is on (--seed: trainer/task.seeded), which an
  explicit `deterministic=False` would otherwise defeat."""
  # Not public in TensorFlow 2.16 (tf.config.experimental has enable_op_determinism only).
  from tensorflow.python.framework import config

  return not training or config.is_op_determinism_enabled()


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
      read, cycle_length=cycle, num_parallel_calls=cycle, deterministic=in_order(training)
    )
  else:  # local files: round-robin in one thread (docs/benchmarks.md says why)
    dataset = dataset.interleave(read, cycle_length=cycle)
  if training:
    dataset = (dataset.repeat() if repeat else dataset).shuffle(shuffle_buffer_size(files))
  return dataset.batch(batch_size, drop_remainder=training and repeat)


class DatasetBuilder(Protocol):
  """One data kind's shards → tf.data batches of (model inputs, int64 labels [B]):
  image_input.image_dataset, tabular_input.tabular_dataset and sequence_input.sequence_dataset.
  Each reads `file_patterns` through `guard` (readable_files) and batches `batch_size` records;
  `training`: shuffled and repeated, else one pass in order. A builder may take more keywords
  (cache, augment), with defaults."""

  def __call__(
    self,
    file_patterns: Union[str, List[str]],
    spec,  # the kind's data_spec: ImageSpec, TabularSpec or SequenceSpec
    batch_size: int,
    training: bool,
    guard: Optional[ShardGuard] = None,
  ) -> tf.data.Dataset: ...


def readable_files(file_patterns: Union[str, List[str]], guard: Optional[ShardGuard]) -> List[str]:
  files = shard_files(file_patterns)
  readable = guard(files) if guard else files
  if not readable:
    raise ValueError(f'no readable records in {file_patterns}')
  return readable


def record_count(file_patterns: Union[str, List[str]], guard: Optional[ShardGuard] = None) -> int:
  """Readable records behind `file_patterns` (the shards, not their salvaged stand-ins):
  counted by the guard's scan when there is one, else by reading."""
  files = shard_files(file_patterns)
  if guard is not None:
    guard(files)
    readable = set(files)
    return sum(r.good for r in guard.reports if r.path in readable)
  read = tf.data.TFRecordDataset(files, compression_type=_compression(files))
  return int(tf_memory.reduce(read, tf.constant(0, tf.int64), lambda count, _: count + 1))


def label_counts(
  file_patterns: Union[str, List[str]], label_key: str, guard: Optional[ShardGuard] = None
) -> Dict[str, int]:
  """{value: records} of a string label column (one vectorised pass over the split)."""
  spec = {label_key: tf.io.RaggedFeature(tf.string)}
  batches = serialized_batches(readable_files(file_patterns, guard), 4096, training=False).map(
    lambda s: tf.unique_with_counts(tf.io.parse_example(s, spec)[label_key].flat_values)
  )
  counts: Dict[str, int] = {}
  for values, _, found in batches:
    for value, count in zip(values.numpy(), found.numpy().tolist()):
      name = value.decode('utf-8', errors='replace')
      counts[name] = counts.get(name, 0) + count
  return counts


def int_label_counts(
  file_patterns: Union[str, List[str]],
  label_key: str,
  guard: Optional[ShardGuard] = None,
  dtype: tf.dtypes.DType = tf.int64,
) -> Dict[int, int]:
  """{value: records} of an int64 (or `dtype`: float32) label column (one vectorised pass over
  the split)."""
  spec = {label_key: tf.io.RaggedFeature(dtype)}
  batches = serialized_batches(readable_files(file_patterns, guard), 4096, training=False).map(
    lambda s: tf.unique_with_counts(tf.io.parse_example(s, spec)[label_key].flat_values)
  )
  counts: Dict[int, int] = {}
  for values, _, found in batches:
    for value, count in zip(values.numpy().tolist(), found.numpy().tolist()):
      counts[value] = counts.get(value, 0) + count
  return counts


def row_length_counts(
  file_patterns: Union[str, List[str]],
  features: Dict[str, tf.io.RaggedFeature],
  guard: Optional[ShardGuard] = None,
) -> Dict[str, Dict[int, int]]:
  """{column: {values a row: records}} of the ragged `features` over the split (a record
  without the column: 0; one vectorised pass)."""
  batches = serialized_batches(readable_files(file_patterns, guard), 4096, training=False).map(
    lambda s: {
      key: tf.unique_with_counts(value.row_lengths())[::2]
      for key, value in tf.io.parse_example(s, features).items()
    }
  )
  counts: Dict[str, Dict[int, int]] = {key: {} for key in features}
  for batch in batches:
    for key, (lengths, found) in batch.items():
      for length, count in zip(lengths.numpy().tolist(), found.numpy().tolist()):
        counts[key][length] = counts[key].get(length, 0) + count
  return counts


def max_int_label(
  file_patterns: Union[str, List[str]], label_key: str, guard: Optional[ShardGuard] = None
) -> int:
  """Largest value of an int64 label column (one vectorised pass over the split)."""
  spec = {label_key: tf.io.RaggedFeature(tf.int64)}  # a record may hold no value at all
  batches = serialized_batches(readable_files(file_patterns, guard), 4096, training=False).map(
    lambda s: tf.reduce_max(tf.io.parse_example(s, spec)[label_key].flat_values)
  )
  return int(tf_memory.reduce(batches, tf.constant(0, tf.int64), tf.maximum))
