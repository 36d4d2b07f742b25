"""ImageExampleGen executor: a class-per-folder image tree → sharded TFRecords, on Beam; or,
with `unlabeled_split`, every image below a folder (any depth), without labels, in that one split.

Output layout under the Examples artifact's URI:
  Split-train/data-00000-of-0000N[.gz]   TFRecord shards (uncompressed unless GZIP asked for)
  Split-eval/...                         (unlabeled: Split-<unlabeled_split>/ only)
  labels.txt            the label vocabulary: line i holds the name of label id i
  excluded_files.csv    path,reason of every file that was not turned into a record
  image_meta.json       encoding, compression, per-split counts, most common image size, channels,
                        images turned upright by their EXIF orientation

The images (sorted by a hash of their path, so classes mix within every shard) are dealt into
N shards; each Beam element is one shard's file list, and the worker that takes it decodes,
encodes and writes that shard's train and eval files itself (bench/example_gen.py: with a Beam
element per image and a sharding GroupByKey, peak memory grew 1.4x from 5k to 20k images).
"""

import collections
import concurrent.futures
import csv
import io
import json
import math
import os
from typing import Any, Dict, Iterator, List, NamedTuple, Tuple
import uuid

import apache_beam as beam
import PIL.Image
from tfx.components.util import examples_utils
from tfx.dsl.components.base import base_beam_executor
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_artifact_utils
from tfx.utils import proto_utils

from components import beam_progress, duplicates, file_based
from components.image_example_gen import encode
from contracts import artifacts, image_record, splits
from contracts.errors import UnusableData
from records import image_folder
from utils import atomic, progress

COMPRESSIONS = ('none', 'gzip')
_RAW_RATIO_SAMPLE = 32  # files opened to estimate raw-pixel size / file size
# At least one shard per this many images, so that Beam workers (one shard each at a time) and
# multi-worker training have several shards; more when shard_size_mb asks for it.
IMAGES_PER_SHARD = 5_000


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


class _WriteShard(beam.DoFn):
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
          image_record.make_example(
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


def images_root(exec_properties: Dict[str, Any]) -> str:
  """The class-folder tree to read: input_base, or its span folder the driver resolved
  (input_config's pattern '<span folder>/*/*' after {SPAN} substitution)."""
  input_config = example_gen_pb2.Input()
  proto_utils.json_to_proto(exec_properties['input_config'], input_config)
  span_folder = os.path.dirname(os.path.dirname(input_config.splits[0].pattern))
  base = exec_properties['input_base']
  return os.path.join(base, span_folder) if span_folder else base


class Executor(base_beam_executor.BaseBeamExecutor):
  """Writes the image tree at `input_base` as train/eval TFRecord shards."""

  def Do(
    self,
    input_dict: Dict[str, List[Any]],
    output_dict: Dict[str, List[Any]],
    exec_properties: Dict[str, Any],
  ) -> None:
    examples = artifact_utils.get_single_instance(output_dict['examples'])
    input_base = images_root(exec_properties)
    encoding = exec_properties['encoding']
    compression = exec_properties['compression']
    eval_percent = exec_properties['eval_percent']
    shard_size_mb = exec_properties['shard_size_mb']
    max_side = exec_properties['max_image_side']
    unlabeled_split = exec_properties.get('unlabeled_split') or ''
    mode = exec_properties.get('duplicates') or duplicates.GROUP
    if encoding not in image_record.ENCODINGS or compression not in COMPRESSIONS:
      raise ValueError(f'bad encoding {encoding!r} or compression {compression!r}')

    if unlabeled_split:
      listing = image_folder.list_unlabeled(input_base)
    else:
      listing = image_folder.list_image_folder(input_base)
    if not listing.images:  # also a missing folder: a listing finds no files there
      raise ValueError(
        f'{input_base}: no images ({image_folder.IMAGE_SUFFIXES})'
        + ('' if unlabeled_split else ' in class folders')
      )
    # A hash order mixes the classes inside every shard and is stable across runs.
    images = sorted(listing.images, key=lambda f: splits.path_hash(f.relpath))
    split_names = [unlabeled_split] if unlabeled_split else list(splits.SPLITS)
    shares = [100] if unlabeled_split else [share for _, share in splits.shares(eval_percent)]
    estimate = estimated_record_bytes(input_base, images, encoding) * max(shares) // 100
    shards = max(
      artifacts.shard_count(estimate, shard_size_mb), math.ceil(len(images) / IMAGES_PER_SHARD)
    )
    # Never more shards than the smaller split should have images: each shard takes every
    # shards-th image, so few are empty (a tiny --shard-size-mb once wrote 126 empty files).
    shards = max(1, min(shards, len(images) * min(shares) // 100))
    examples.split_names = standard_artifact_utils.encode_split_names(split_names)
    facts_prefix = os.path.join(self._get_tmp_dir(), 'facts')
    items_prefix = os.path.join(self._get_tmp_dir(), 'items')

    for split in split_names:
      fileio.makedirs(os.path.join(examples.uri, f'Split-{split}'))
    expected = {f'{items_prefix}-{i:05d}.json': len(images[i::shards]) for i in range(shards)}
    node = beam_progress.node_id(self, 'ImageExampleGen')
    watch = progress.FilesProgress(
      node,
      expected,
      lambda done, total, rate: f'{done:,} of {total:,} image files read, {rate:,.0f} files/s',
    )
    with watch, self._make_beam_pipeline() as pipeline:
      _ = (
        pipeline
        # Plain tuples: Beam's coder encodes them natively, where it pickles each
        # ImageFile one by one (~65 µs each: 1.0 s of a 20,000-image run, in the runner).
        | 'Shards'
        >> beam.Create(
          [(i, [tuple(f) for f in images[i::shards]]) for i in range(shards)], reshuffle=True
        )
        | 'EncodeAndWrite'
        >> beam.ParDo(
          _WriteShard(
            input_base,
            listing.labels,
            encoding,
            eval_percent,
            examples.uri,
            shards,
            compression,
            max_side,
            items_prefix,
            unlabeled_split,
            by_content=mode != duplicates.OFF,
          )
        )
        | 'Count' >> beam.CombinePerKey(sum)
        | 'Gather' >> beam.combiners.ToList()
        | 'ToJson' >> beam.Map(json.dumps)
        | 'WriteFacts' >> beam.io.WriteToText(facts_prefix, num_shards=1, shard_name_template='')
      )

    with fileio.open(facts_prefix, 'r') as f:
      counted = [(tuple(fact), n) for fact, n in json.loads(f.read() or '[]')]
    written = []
    for path in expected:
      with fileio.open(path, 'r') as f:
        written.append(json.loads(f.read()))
    placed = _Placed(written, split_names)
    gzip = compression == 'gzip'
    if not unlabeled_split and mode != duplicates.OFF:
      found = placed.regroup(eval_percent, mode == duplicates.KEEP_CONFLICTS, listing.labels)
      for index, (sources, routes) in placed.moves().items():
        targets = {
          s: artifacts.shard_path(examples.uri, s, index, shards, gzip) for s in split_names
        }
        duplicates.reroute([targets[s] for s in sources], routes, targets)
      for name, value in found.counts.items():
        examples.set_int_custom_property(name, value)
      listing_path = os.path.join(examples.uri, artifacts.DUPLICATES_FILE)
      atomic.write(listing_path, json.dumps(found.listing, indent=1))
      counted += [(('excluded', path, why), 1) for path, why in found.excluded]
    for split in split_names:
      empty = placed.empty_files(examples.uri, shards, gzip, split)
      file_based.drop_empty_shards(os.path.join(examples.uri, f'Split-{split}'), empty)
    meta = _write_side_files(
      examples.uri, listing, counted, placed.counts(), encoding, compression, max_side
    )
    if not unlabeled_split:
      _check_classes(meta, os.path.join(examples.uri, artifacts.EXCLUDED_FILE))

    examples_utils.set_payload_format(examples, example_gen_pb2.FORMAT_TF_EXAMPLE)
    examples_utils.set_file_format(examples, 'tfrecords_gzip')  # tfx_bsl reads either, by suffix
    examples.set_string_custom_property('label_vocabulary', json.dumps(listing.labels))
    examples.set_string_custom_property('image_encoding', encoding)
    examples.set_string_custom_property('compression', compression)
    examples.set_string_custom_property('split_counts', json.dumps(meta['split_counts']))
    examples.set_int_custom_property('num_excluded', len(meta['excluded']))
    examples.set_int_custom_property(artifacts.TURNED_UPRIGHT, meta[artifacts.TURNED_UPRIGHT])
    examples.set_int_custom_property('schema_version', image_record.SCHEMA_VERSION)


class _Placed:
  """Where the shard writers put each image (per shard, per split file, in order), and where
  grouping says it belongs."""

  def __init__(self, written: List[Dict[str, list]], split_names: List[str]):
    self._entries = [  # (shard, split written to, path, label, content, near)
      (index, split, *item)
      for index, by_split in enumerate(written)
      for split in split_names
      for item in by_split[split]
    ]
    self._final = [entry[1] for entry in self._entries]
    self._split_names = split_names

  def regroup(self, eval_percent: int, keep_conflicts: bool, labels: List[str]) -> 'Regrouped':
    """Groups duplicates (duplicates.group); the final split of every image."""
    if not self._entries:
      return Regrouped({}, [], {})
    _, _, paths, label_ids, content, near = zip(*self._entries)
    grouping = duplicates.group(content, label_ids, near)
    self._final = duplicates.assigned_splits(grouping, eval_percent, keep_conflicts)
    names = [labels[i] for i in label_ids]
    reasons = duplicates.conflict_reasons(grouping, paths, names)
    excluded = [] if keep_conflicts else [(paths[i], why) for i, why in sorted(reasons.items())]
    listing = {
      'largest_groups': [
        [{'path': paths[i], 'label': names[i], 'split': self._final[i]} for i in members]
        for members in grouping.largest
      ],
      'conflicts': [
        {'path': paths[i], 'label': names[i], 'reason': why} for i, why in sorted(reasons.items())
      ],
    }
    return Regrouped(duplicates.summary_facts(grouping, keep_conflicts), excluded, listing)

  def moves(self) -> Dict[int, Tuple[List[str], List[List[str]]]]:
    """{shard: (its split files, each record's new split in order)} of the shards where an image
    moves or is left out."""
    changed = {e[0] for e, final in zip(self._entries, self._final) if final != e[1]}
    routes = {i: {s: [] for s in self._split_names} for i in changed}
    for entry, final in zip(self._entries, self._final):
      if entry[0] in changed:
        routes[entry[0]][entry[1]].append(final)
    return {i: (list(by_split), list(by_split.values())) for i, by_split in routes.items()}

  def empty_files(self, uri: str, shards: int, gzip: bool, split: str) -> set:
    """The split's shard files left without a record."""
    used = {e[0] for e, final in zip(self._entries, self._final) if final == split}
    return {artifacts.shard_path(uri, split, i, shards, gzip) for i in range(shards)} - {
      artifacts.shard_path(uri, split, i, shards, gzip) for i in used
    }

  def counts(self) -> Dict[str, Dict]:
    """{'split': {split: images}, 'class': {label id: images}} of the images kept."""
    per_split = collections.Counter(self._final)
    per_class = collections.Counter(
      e[3]
      for e, final in zip(self._entries, self._final)
      if final and e[3] != image_folder.UNLABELED
    )
    return {'split': {s: per_split[s] for s in self._split_names}, 'class': per_class}


class Regrouped(NamedTuple):
  counts: Dict[str, int]  # duplicates.summary_facts: custom properties of the Examples artifact
  excluded: List[Tuple[str, str]]  # (path, reason) of the conflicts left out
  listing: Dict[str, list]  # duplicates.json: the largest groups and the conflicts


def _check_classes(meta: Dict[str, Any], excluded_csv: str) -> None:
  """Raises UnusableData when fewer than two classes kept an image (the rest excluded)."""
  kept = [name for name, n in meta['examples_per_class'].items() if n]
  if len(kept) < 2:
    raise UnusableData(
      f'{"only class " + repr(kept[0]) if kept else "no class"} has images that decode: '
      f'{len(meta["excluded"])} file(s) excluded ({excluded_csv}); '
      'a classifier needs at least two classes'
    )


def _write_side_files(
  uri: str,
  listing: image_folder.FolderListing,
  counted: List[Tuple[tuple, int]],
  kept: Dict[str, Dict],
  encoding: str,
  compression: str,
  max_side: int,
) -> Dict[str, Any]:
  """Writes labels.txt, excluded_files.csv and image_meta.json; returns the meta. kept:
  _Placed.counts()."""
  split_counts = kept['split']
  per_class = {listing.labels[label]: n for label, n in kept['class'].items()}
  sizes, channels = collections.Counter(), collections.Counter()
  turned_upright = 0
  excluded = sorted(listing.others)
  for fact, n in counted:
    kind = fact[0]
    if kind == 'size':
      sizes[(fact[1], fact[2])] = n
    elif kind == 'channels':
      channels[fact[1]] = n
    elif kind == 'turned_upright':
      turned_upright = n
    else:
      excluded.append((fact[1], fact[2]))
  excluded.sort()
  (height, width), _ = sizes.most_common(1)[0] if sizes else ((0, 0), 0)
  meta = {
    'schema_version': image_record.SCHEMA_VERSION,
    'encoding': encoding,
    'compression': compression,
    'max_image_side': max_side,
    'labels': listing.labels,
    'split_counts': split_counts,
    'examples_per_class': {name: per_class.get(name, 0) for name in listing.labels},
    'most_common_size': [height, width],
    'uniform_size': len(sizes) == 1,
    'channels_seen': sorted(channels),
    'excluded': len(excluded),
    artifacts.TURNED_UPRIGHT: turned_upright,  # EXIF-oriented (encode.py)
  }
  table = io.StringIO()
  writer = csv.writer(table)
  writer.writerow(['path', 'reason'])
  writer.writerows(excluded)
  atomic.write(
    os.path.join(uri, artifacts.LABELS_FILE), ''.join(name + '\n' for name in listing.labels)
  )
  atomic.write(os.path.join(uri, artifacts.EXCLUDED_FILE), table.getvalue())
  # Last: the Trainer reads image_meta.json first, so it also marks the artifact as complete.
  atomic.write(os.path.join(uri, artifacts.IMAGE_META_FILE), json.dumps(meta, indent=2))
  return dict(meta, excluded=excluded)
