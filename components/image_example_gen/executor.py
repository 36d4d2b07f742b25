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
encodes and writes that shard's train and eval files itself (shard_writer.py;
bench/example_gen.py: with a Beam element per image and a sharding GroupByKey, peak memory grew
1.4x from 5k to 20k images). Then copies and near-copies are moved to their group's split
(components/regroup.py) and the side files written (side_files.py): this module holds the listing, the
shard count, the Beam pipeline and the artifact's properties.
"""

import json
import math
import os
from typing import Any, Dict

import apache_beam as beam
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifact_utils
from tfx.utils import proto_utils

from components import beam_progress, duplicates, file_based, regroup
from components.image_example_gen import shard_writer, side_files
from contracts import artifacts, image_record, splits
from records import image_folder
from utils import atomic, progress

COMPRESSIONS = ('none', 'gzip')
# At least one shard per this many images, so that Beam workers (one shard each at a time) and
# multi-worker training have several shards; more when shard_size_mb asks for it.
IMAGES_PER_SHARD = 5_000


def images_root(exec_properties: Dict[str, Any]) -> str:
  """The class-folder tree to read: input_base, or its span folder the driver resolved
  (input_config's pattern '<span folder>/*/*' after {SPAN} substitution)."""
  input_config = example_gen_pb2.Input()
  proto_utils.json_to_proto(exec_properties['input_config'], input_config)
  span_folder = os.path.dirname(os.path.dirname(input_config.splits[0].pattern))
  base = exec_properties['input_base']
  return os.path.join(base, span_folder) if span_folder else base


class Executor(file_based.ExampleGenExecutor):
  """Writes the image tree at `input_base` as train/eval TFRecord shards."""

  def write(self, examples, exec_properties: Dict[str, Any]) -> None:
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
    estimate = (
      shard_writer.estimated_record_bytes(input_base, images, encoding) * max(shares) // 100
    )
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
    with beam_progress.job_guard(self, node), watch, self._make_beam_pipeline() as pipeline:
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
          shard_writer.WriteShard(
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
    placed = regroup.Placed(written, split_names)
    gzip = compression == 'gzip'
    if not unlabeled_split and mode != duplicates.OFF:
      found = placed.regroup(eval_percent, mode, listing.labels)
      placed.reroute(examples.uri, shards, gzip)
      for name, value in found.counts.items():
        examples.set_int_custom_property(name, value)
      listing_path = os.path.join(examples.uri, artifacts.DUPLICATES_FILE)
      atomic.write(listing_path, json.dumps(found.listing, indent=1))
      counted += [(('excluded', path, why), 1) for path, why in found.excluded]
    for split in split_names:
      empty = placed.empty_files(examples.uri, shards, gzip, split)
      file_based.drop_empty_shards(os.path.join(examples.uri, f'Split-{split}'), empty)
    meta = side_files.write_side_files(
      examples.uri, listing, counted, placed.counts(), encoding, compression, max_side
    )
    if not unlabeled_split:
      side_files.check_classes(meta, os.path.join(examples.uri, artifacts.EXCLUDED_FILE))

    examples.set_string_custom_property('label_vocabulary', json.dumps(listing.labels))
    examples.set_string_custom_property('image_encoding', encoding)
    examples.set_string_custom_property('compression', compression)
    examples.set_string_custom_property('split_counts', json.dumps(meta['split_counts']))
    examples.set_int_custom_property('num_excluded', len(meta['excluded']))
    examples.set_int_custom_property(artifacts.TURNED_UPRIGHT, meta[artifacts.TURNED_UPRIGHT])
    examples.set_int_custom_property('schema_version', image_record.SCHEMA_VERSION)
