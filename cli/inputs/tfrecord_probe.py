"""A TFRecord input's first records looked at: GZIP-compressed or not, tf.Examples or
SequenceExamples (damage further on is salvaged later)."""

import struct
from typing import Dict, Iterator

from cli.inputs import data_paths
import config as cfg
from contracts.errors import UserError

FIRST_RECORDS = 200  # records whose features and label values the command line looks at


def reads_as_gzip_tfrecords(path: str) -> bool:
  """Whether a .gz file (TFX names shards `data_tfrecord-….gz`) reads as GZIP TFRecords."""
  import tensorflow as tf

  try:
    for _ in tf.data.TFRecordDataset(path, compression_type='GZIP').take(1):
      return True  # at least one intact record
  except (tf.errors.DataLossError, tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError):
    pass
  return False


def uncompressed_tfrecords(path: str) -> bool:
  """Whether the file starts with an uncompressed TFRecord header (its length's CRC checks): a
  shard without a TFRecord suffix, as TFX and this project name them (data-00000-of-00001)."""
  from records import scan

  with (data_paths.gfile().GFile if cfg.is_remote(path) else open)(path, 'rb') as f:
    header = f.read(scan.HEADER)
  if len(header) < scan.HEADER:
    return False
  (crc,) = struct.unpack_from('<I', header, 8)
  return scan.masked_crc(header[:8]) == crc


def holds_sequence_examples(tfrecord_path: str) -> bool:
  """Whether the file's first record is a SequenceExample with feature lists; raises UserError
  when there is no first record or it is not a tf.Example / SequenceExample."""
  import tensorflow as tf

  compression = 'GZIP' if tfrecord_path.endswith('.gz') else ''
  try:
    first = next(iter(tf.data.TFRecordDataset(tfrecord_path, compression_type=compression)), None)
    first = None if first is None else first.numpy()
  except (tf.errors.DataLossError, tf.errors.InvalidArgumentError):
    first = _first_intact_record(tfrecord_path, compression)  # damage further on: salvaged
  if first is None:
    raise UserError(f'--data {tfrecord_path}: holds no records')
  sequence = _parsed(tf.train.SequenceExample, first)
  if sequence is not None and sequence.feature_lists.feature_list:
    return True
  example = _parsed(tf.train.Example, first)
  if example is None or not example.features.feature:
    raise UserError(
      f'--data {tfrecord_path}: its first record is not a tf.Example or tf.SequenceExample '
      'with features'
    )
  return False


def first_records(tfrecord_path: str, records: int = FIRST_RECORDS) -> Iterator[bytes]:
  """The file's first `records` records (GZIP by the name's .gz or the file's first bytes); a
  damaged file gives fewer."""
  import tensorflow as tf

  with data_paths.gfile().GFile(tfrecord_path, 'rb') as f:
    gzipped = tfrecord_path.endswith('.gz') or f.read(2) == b'\x1f\x8b'
  dataset = tf.data.TFRecordDataset(tfrecord_path, compression_type='GZIP' if gzipped else '')
  try:
    for record in dataset.take(records):
      yield record.numpy()
  except (tf.errors.DataLossError, tf.errors.InvalidArgumentError):
    pass  # damage: what was read before it decides


def first_values(tfrecord_path: str, records: int = FIRST_RECORDS) -> Dict[str, list]:
  """{feature: its first value in each of the file's first `records` tf.Examples that has one,
  as text ('': none)}; a damaged file gives fewer."""
  import tensorflow as tf

  values: Dict[str, list] = {}
  for record in first_records(tfrecord_path, records):
    example = _parsed(tf.train.Example, record)
    for name, feature in example.features.feature.items() if example else ():
      kind = feature.WhichOneof('kind')
      held = values.setdefault(name, [])
      for value in getattr(feature, kind).value[:1] if kind else ():
        held.append(value.decode('utf-8', 'replace') if isinstance(value, bytes) else repr(value))
  return values


def label_values(tfrecord_path: str, label: str, records: int = FIRST_RECORDS) -> list:
  """The label's values in the file's first `records` tf.Examples, as text (first_values)."""
  return first_values(tfrecord_path, records).get(label, [])


def _first_intact_record(tfrecord_path: str, compression: str) -> bytes:
  """The first record whose CRCs check (the project's scan), or UserError when none does."""
  from records import scan

  report, data = scan.scan(tfrecord_path)
  if report.good and report.spans:
    start, end = report.spans[0]
    if data is None:
      with data_paths.gfile().GFile(tfrecord_path, 'rb') as f:
        f.seek(start)
        data, start = f.read(end - start), 0
    (length,) = struct.unpack_from('<Q', data, start)
    return bytes(data[start + scan.HEADER : start + scan.HEADER + length])
  with data_paths.gfile().GFile(tfrecord_path, 'rb') as f:
    gzipped = f.read(2) == b'\x1f\x8b'
  raise UserError(
    f'--data {tfrecord_path}: '
    + (
      'GZIP-compressed; name it *.tfrecord.gz or *.gz so that it is read as such'
      if gzipped and not compression
      else 'not a TFRecord file (no record in it checks)'
    )
  )


def _parsed(proto_class, record: bytes):
  import warnings

  from google.protobuf.message import DecodeError

  try:
    with warnings.catch_warnings():  # "Unexpected end-group tag": not this proto, said below
      warnings.simplefilter('ignore', RuntimeWarning)
      return proto_class.FromString(record)
  except DecodeError:
    return None
