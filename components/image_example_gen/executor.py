"""ImageExampleGen executor: a class-per-folder image tree → sharded TFRecords, on Beam.

Output layout under the Examples artifact's URI:
  Split-train/data-00000-of-0000N[.gz]   TFRecord shards (uncompressed unless GZIP asked for)
  Split-eval/...
  labels.txt            the label vocabulary: line i holds the name of label id i
  excluded_files.csv    path,reason of every file that was not turned into a record
  image_meta.json       encoding, compression, per-split counts, most common image size, channels
"""
import collections
import csv
import io
import json
import math
import os
from typing import Any, Dict, Iterator, List, Tuple

import apache_beam as beam
import PIL.Image
from tfx.components.util import examples_utils
from tfx.dsl.components.base import base_beam_executor
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_artifact_utils
from tfx.utils import proto_utils

from components import file_based
from components.image_example_gen import folder, record

SPLITS = ('train', 'eval')
COMPRESSIONS = ('none', 'gzip')
_RAW_RATIO_SAMPLE = 32  # files opened to estimate raw-pixel size / file size


def estimated_record_bytes(input_base: str, images: List[folder.ImageFile],
                           encoding: str) -> int:
  """Bytes the records of `images` will take: file sizes, scaled for raw pixels."""
  total = sum(fileio.stat(os.path.join(input_base, f.relpath)).length for f in images)
  if encoding == record.ENCODED or not images:
    return total
  sample = images[::max(1, len(images) // _RAW_RATIO_SAMPLE)][:_RAW_RATIO_SAMPLE]
  raw = stored = 0
  for image_file in sample:
    path = os.path.join(input_base, image_file.relpath)
    try:
      with fileio.open(path, 'rb') as f, PIL.Image.open(f) as image:  # header only
        raw += image.width * image.height * (1 if image.mode in ('L', 'LA', '1', 'I', 'I;16') else 3)
      stored += fileio.stat(path).length
    except Exception:  # an unreadable file: excluded later, ignored for the estimate
      continue
  return int(total * (raw / stored if stored else 1.0))


def shard_count(total_bytes: int, shard_size_mb: float) -> int:
  return max(1, math.ceil(total_bytes / (shard_size_mb * 1024 * 1024)))


class _EncodeImage(beam.DoFn):
  """Reads one image file and emits (split, serialized Example) or an exclusion."""

  EXCLUDED = 'excluded'

  def __init__(self, input_base: str, labels: List[str], encoding: str, eval_percent: int):
    self._input_base = input_base
    self._labels = labels
    self._encoding = encoding
    self._eval_percent = eval_percent

  def process(self, image_file: folder.ImageFile) -> Iterator[Any]:
    with fileio.open(os.path.join(self._input_base, image_file.relpath), 'rb') as f:
      data = f.read()
    try:
      image = record.encode_image(data, self._encoding)
    except ValueError as e:
      yield beam.pvalue.TaggedOutput(self.EXCLUDED, (image_file.relpath, str(e)))
      return
    split = 'eval' if folder.is_eval(image_file.relpath, self._eval_percent) else 'train'
    example = record.make_example(image, image_file.label, self._labels[image_file.label],
                                  image_file.relpath)
    yield split, example.SerializeToString(), (image.height, image.width, image.channels)


def _facts(item: Tuple[str, bytes, Tuple[int, int, int]]) -> Iterator[Tuple]:
  split, _, (height, width, channels) = item
  yield ('split', split)
  yield ('size', height, width)
  yield ('channels', channels)


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

  def Do(self, input_dict: Dict[str, List[Any]], output_dict: Dict[str, List[Any]],
         exec_properties: Dict[str, Any]) -> None:
    examples = artifact_utils.get_single_instance(output_dict['examples'])
    input_base = images_root(exec_properties)
    encoding = exec_properties['encoding']
    compression = exec_properties['compression']
    eval_percent = exec_properties['eval_percent']
    shard_size_mb = exec_properties['shard_size_mb']
    if encoding not in record.ENCODINGS or compression not in COMPRESSIONS:
      raise ValueError(f'bad encoding {encoding!r} or compression {compression!r}')

    listing = folder.list_image_folder(input_base)
    # A hash order mixes the classes inside every shard and is stable across runs.
    images = sorted(listing.images, key=lambda f: folder.path_hash(f.relpath))
    by_split = {split: [f for f in images if folder.is_eval(f.relpath, eval_percent) == (split == 'eval')]
                for split in SPLITS}
    shards = {split: shard_count(estimated_record_bytes(input_base, files, encoding), shard_size_mb)
              for split, files in by_split.items()}
    examples.split_names = standard_artifact_utils.encode_split_names(list(SPLITS))
    facts_prefix = os.path.join(self._get_tmp_dir(), 'facts')

    with self._make_beam_pipeline() as pipeline:
      encoded = (pipeline
                 | 'ListImages' >> beam.Create(images, reshuffle=True)
                 | 'Encode' >> beam.ParDo(_EncodeImage(input_base, listing.labels, encoding, eval_percent))
                 .with_outputs(_EncodeImage.EXCLUDED, main='records'))
      records = encoded.records
      file_based.write_splits(records, examples, shards, gzip=compression == 'gzip')
      excluded = encoded[_EncodeImage.EXCLUDED] | 'Excluded' >> beam.Map(lambda e: ('excluded',) + e)
      _ = ((records | 'Facts' >> beam.FlatMap(_facts), excluded)
           | 'AllFacts' >> beam.Flatten()
           | 'Count' >> beam.combiners.Count.PerElement()
           | 'Gather' >> beam.combiners.ToList()
           | 'ToJson' >> beam.Map(json.dumps)
           | 'WriteFacts' >> beam.io.WriteToText(facts_prefix, num_shards=1, shard_name_template=''))

    with fileio.open(facts_prefix, 'r') as f:
      counted = [(tuple(fact), n) for fact, n in json.loads(f.read() or '[]')]
    meta = _write_side_files(examples.uri, listing, counted, encoding, compression)

    examples_utils.set_payload_format(examples, example_gen_pb2.FORMAT_TF_EXAMPLE)
    examples_utils.set_file_format(examples, 'tfrecords_gzip')  # tfx_bsl reads either, by suffix
    examples.set_string_custom_property('label_vocabulary', json.dumps(listing.labels))
    examples.set_string_custom_property('image_encoding', encoding)
    examples.set_string_custom_property('compression', compression)
    examples.set_string_custom_property('split_counts', json.dumps(meta['split_counts']))
    examples.set_int_custom_property('num_excluded', len(meta['excluded']))
    examples.set_int_custom_property('schema_version', record.SCHEMA_VERSION)


def _write_side_files(uri: str, listing: folder.FolderListing, counted: List[Tuple[tuple, int]],
                      encoding: str, compression: str) -> Dict[str, Any]:
  """Writes labels.txt, excluded_files.csv and image_meta.json; returns the meta."""
  split_counts = {split: 0 for split in SPLITS}
  sizes, channels = collections.Counter(), collections.Counter()
  excluded = sorted(listing.others)
  for fact, n in counted:
    kind = fact[0]
    if kind == 'split':
      split_counts[fact[1]] = n
    elif kind == 'size':
      sizes[(fact[1], fact[2])] = n
    elif kind == 'channels':
      channels[fact[1]] = n
    else:
      excluded.append((fact[1], fact[2]))
  excluded.sort()
  (height, width), _ = sizes.most_common(1)[0] if sizes else ((0, 0), 0)
  meta = {
      'schema_version': record.SCHEMA_VERSION,
      'encoding': encoding,
      'compression': compression,
      'labels': listing.labels,
      'split_counts': split_counts,
      'most_common_size': [height, width],
      'uniform_size': len(sizes) == 1,
      'channels_seen': sorted(channels),
      'excluded': len(excluded),
  }
  table = io.StringIO()
  writer = csv.writer(table)
  writer.writerow(['path', 'reason'])
  writer.writerows(excluded)
  publish(os.path.join(uri, record.LABELS_FILE), ''.join(name + '\n' for name in listing.labels))
  publish(os.path.join(uri, record.EXCLUDED_FILE), table.getvalue())
  # Last: the Trainer reads image_meta.json first, so it also marks the artifact as complete.
  publish(os.path.join(uri, record.META_FILE), json.dumps(meta, indent=2))
  return dict(meta, excluded=excluded)


def publish(path: str, text: str) -> None:
  """Writes under a temporary name, then renames: a reader sees all of the file or none."""
  temporary = f'{path}.tmp-{os.getpid()}'
  with fileio.open(temporary, 'w') as f:
    f.write(text)
  fileio.rename(temporary, path, overwrite=True)
