"""One shard of the ImageExampleGen: the worker that takes a shard's file list reads, decodes,
encodes and writes its train and eval files itself (WriteShard), reading object storage several
files at a time; and the bytes the records will take, which set the shard count."""

import collections
import concurrent.futures
import json
import os
from typing import Iterator, List, Tuple
import uuid

import apache_beam as beam
import PIL.Image
from tfx.dsl.io import fileio

from components import duplicates
from components.image_example_gen import encode
from contracts import artifacts, image_record, splits
from records import image_codec, image_folder
from utils import atomic

_RAW_RATIO_SAMPLE = 32  # files opened to estimate raw-pixel size / file size


def estimated_record_bytes(
  input_base: str, images: List[image_folder.ImageFile], encoding: str
) -> int:
  """Bytes the records of `images` will take: file sizes, scaled for raw pixels."""
  total = sum(f.size for f in images)
  if encoding == image_record.ENCODED or not images:
    return total
  sample = images[:: max(1, len(images) // _RAW_RATIO_SAMPLE)][:_RAW_RATIO_SAMPLE]
  raw = stored = 0
  for image_file in sample:
    path = os.path.join(input_base, image_file.relpath)
    try:
      with fileio.open(path, 'rb') as f, PIL.Image.open(f) as image:  # header only
        raw += (
          image.width * image.height * (1 if image.mode in ('L', 'LA', '1', 'I', 'I;16') else 3)
        )
      stored += image_file.size
    except Exception:  # an unreadable file: excluded later, ignored for the estimate
      continue
  return int(total * (raw / stored if stored else 1.0))


class WriteShard(beam.DoFn):
  """One shard's share of the images → its train and eval shard files, written by the worker
  that holds it: records never travel back to the runner, so memory stays flat however many
  images there are. An image's split is its content's (duplicates.split_key), so exact copies
  land together whatever their names; Do then moves near-duplicates to their group's split.
  Leaves `<items>-<shard>.json`: per split file, its images in order (path, label, content,
  near hash). Yields (fact, count) pairs: image sizes (upright), channels, images turned
  upright, exclusions."""

  def __init__(
    self,
    input_base: str,
    labels: List[str],
    encoding: str,
    eval_percent: int,
    uri: str,
    shards: int,
    compression: str,
    max_side: int,
    items: str,
    unlabeled_split: str = '',
    by_content: bool = True,
  ):
    self._input_base = input_base
    self._unlabeled_split = unlabeled_split
    self._splits = (unlabeled_split,) if unlabeled_split else splits.SPLITS
    self._max_side = max_side
    self._labels = labels
    self._encoding = encoding
    self._eval_percent = eval_percent
    self._uri = uri
    self._shards = shards
    self._gzip = compression == 'gzip'
    self._items = items
    self._by_content = by_content and not unlabeled_split

  def _path(self, split: str, index: int) -> str:
    return artifacts.shard_path(self._uri, split, index, self._shards, self._gzip)

  def _split(self, image_file: image_folder.ImageFile, stored: encode.Stored) -> str:
    if self._unlabeled_split:
      return self._unlabeled_split
    key = duplicates.split_key(stored.content) if self._by_content else image_file.relpath
    return splits.split_of(key, self._eval_percent)

  def process(self, shard: Tuple[int, List[Tuple[str, int, int]]]) -> Iterator[Tuple[tuple, int]]:
    import tensorflow as tf

    index, files = shard
    image_files = [image_folder.ImageFile(*fields) for fields in files]
    facts = collections.Counter()
    written = {split: [] for split in self._splits}
    partial = {
      split: f'{self._path(split, index)}.partial-{uuid.uuid4().hex}' for split in self._splits
    }
    options = tf.io.TFRecordOptions(compression_type='GZIP' if self._gzip else '')
    writers = {split: tf.io.TFRecordWriter(path, options) for split, path in partial.items()}
    try:
      for image_file, data in _read_in_order(self._input_base, image_files):
        try:
          stored = encode.encode_file(data, self._encoding, self._max_side, self._by_content)
        except ValueError as e:
          facts[('excluded', image_file.relpath, str(e))] += 1
          continue
        image = stored.image
        if stored.turned_upright:
          facts[('turned_upright',)] += 1
        split = self._split(image_file, stored)
        labeled = image_file.label != image_folder.UNLABELED
        writers[split].write(
          image_codec.make_example(
            image,
            image_file.label if labeled else None,
            self._labels[image_file.label] if labeled else '',
            image_file.relpath,
          ).SerializeToString()
        )
        written[split].append((image_file.relpath, image_file.label, stored.content, stored.near))
        facts[('size', image.height, image.width)] += 1
        facts[('channels', image.channels)] += 1
    finally:
      for writer in writers.values():
        writer.close()
    for split, path in partial.items():  # complete files only, under their final names
      fileio.rename(path, self._path(split, index), overwrite=True)
    # Last: its presence says the shard is done (progress counts it).
    atomic.write(f'{self._items}-{index:05d}.json', json.dumps(written))
    yield from facts.items()


# Reads in flight per worker on object storage, where a read waits on a request (~12 ms on a
# loopback S3 server, more on a real one) rather than on the disk or the CPU.
REMOTE_READS_IN_FLIGHT = 16


def _read(path: str) -> bytes:
  with fileio.open(path, 'rb') as f:
    return f.read()


def _read_in_order(
  input_base: str, image_files: List[image_folder.ImageFile]
) -> Iterator[Tuple[image_folder.ImageFile, bytes]]:
  """(file, bytes) in order; gs:// and s3:// files read REMOTE_READS_IN_FLIGHT at a time, at
  most that many held in memory."""
  paths = [os.path.join(input_base, f.relpath) for f in image_files]
  if not input_base.startswith(('gs://', 's3://')):
    yield from ((f, _read(path)) for f, path in zip(image_files, paths))
    return
  with concurrent.futures.ThreadPoolExecutor(REMOTE_READS_IN_FLIGHT) as pool:
    pending = collections.deque()
    for image_file, path in zip(image_files, paths):
      pending.append((image_file, pool.submit(_read, path)))
      if len(pending) >= REMOTE_READS_IN_FLIGHT:
        done, future = pending.popleft()
        yield done, future.result()
    while pending:
      done, future = pending.popleft()
      yield done, future.result()
