"""TextExampleGen executor: CSV rows (a label and a free-text column) → SequenceExample shards.

Output layout under the Examples artifact's URI:
  Split-train/data-00000-of-0000N   TFRecord shards of SequenceExamples (text.py)
  Split-eval/...
  vocabulary.txt     line i holds the word of token id i (built on the train split only)
  labels.txt         line i holds the name of label id i
  text_meta.json     columns, counts per split, vocabulary size, longest text

One Beam pipeline: rows are read per file in parallel, split by a hash of <file>:<row>, the
vocabulary is counted on the train rows and handed to the encoder as a side input.
"""

import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

import apache_beam as beam
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifact_utils
from tfx.utils import proto_utils

from components import beam_progress, duplicates, file_based, grouped_split
from components.text_example_gen import text
from contracts import artifacts, csv_dialect, splits, text_record
from records import text_codec
from utils import atomic

_Row = Tuple[str, str, List[str]]  # (split, label name, tokens)
REPEATED_HEADERS = 'repeated_headers'  # _read_rows' tag: a 1 per line repeating the header


def input_files(exec_properties: Dict[str, Any]) -> List[str]:
  """The CSV files the driver resolved (input_config's pattern after {SPAN}/{VERSION})."""
  input_config = example_gen_pb2.Input()
  proto_utils.json_to_proto(exec_properties['input_config'], input_config)
  pattern = os.path.join(exec_properties['input_base'], input_config.splits[0].pattern)
  return sorted(fileio.glob(pattern))


def _read_rows(
  path: str, label_column: str, text_column: str, eval_percent: int, by_words: bool
) -> Iterator[_Row]:  # and the REPEATED_HEADERS tag (Beam types the main output)
  """Rows of one CSV file, streamed (_csv_rows). A row's split is decided by its words (by_words:
  rows with the same words share it), else by its file and line. A line repeating the header
  (files joined with their headers) is no row: a 1 tagged REPEATED_HEADERS, as the CSV ExampleGen
  skips and counts it."""
  for number, row in enumerate(_csv_rows(path), start=2):
    if row is None:
      yield beam.pvalue.TaggedOutput(REPEATED_HEADERS, 1)
      continue
    tokens = text.tokenize(row.get(text_column) or '')
    key = ' '.join(tokens) if by_words else f'{os.path.basename(path)}:{number}'
    yield splits.split_of(key, eval_percent), (row.get(label_column) or '').strip(), tokens


def _csv_rows(path: str) -> Iterator[Optional[Dict[str, str]]]:
  """The rows of a CSV file after its header as {column: cell}, read as contracts/csv_dialect.py
  reads it (byte-order mark, delimiter, quoted newlines, header names stripped); None for a line
  repeating the header (csv_dialect.repeats_header)."""
  with fileio.open(path, 'rb') as f:
    dialect = csv_dialect.header(f.readline())[0]
  with fileio.open(path, 'r') as f:
    rows = csv_dialect.stream_rows(f, dialect)
    names = csv_dialect.names(next(rows, (0, []))[1])
    for _, cells in rows:
      yield None if csv_dialect.repeats_header(cells, names) else dict(zip(names, cells))


def _placed(group: Tuple[str, Iterable[_Row]], mode: str, counts: Tuple[int, int]):
  """Rows of the same words → those kept, and (tagged FACTS) what grouped_split.record counts
  (counts: grouped_split.conflict_counts)."""
  words, rows = group
  rows = list(rows)
  labels = sorted({row[1] for row in rows})
  conflict = len(labels) > 1
  shown = words if len(words) <= 60 else words[:57] + '…'
  members = [(row[1], shown, None) for row in rows]
  yield beam.pvalue.TaggedOutput(
    grouped_split.FACTS, grouped_split.facts(members, labels, conflict)
  )
  if not conflict or not duplicates.conflicts_left_out(mode, *counts):
    yield from rows


class _Encode(beam.DoFn):
  """(split, label, tokens) → (split, serialized SequenceExample), ids from the side inputs."""

  def __init__(self):
    self._ids = None
    self._label_ids = None

  def process(self, row: _Row, words: List[str], labels: List[str]) -> Iterator[Tuple[str, bytes]]:
    if self._ids is None:
      self._ids = {word: i for i, word in enumerate(words)}
      self._label_ids = {name: i for i, name in enumerate(labels)}
    split, label_name, tokens = row
    oov = self._ids[text_record.OUT_OF_VOCABULARY]
    example = text_codec.make_sequence_example(
      [self._ids.get(t, oov) for t in tokens], self._label_ids[label_name], label_name
    )
    yield split, example.SerializeToString()


def row_count(paths: List[str]) -> int:
  """The data rows of the CSV files, as _read_rows reads them (_csv_rows)."""
  total = 0
  for path in paths:
    total += sum(1 for row in _csv_rows(path) if row is not None)
  return total


class Executor(beam_progress.CountedBeamExecutor, file_based.ExampleGenExecutor):
  """Writes the CSV rows under `input_base` as train/eval SequenceExample shards; its live
  progress counts the rows encoded (once the vocabulary is counted) of the files' rows."""

  COUNTED_STEPS = ('Encode',)
  PAYLOAD_FORMAT = example_gen_pb2.FORMAT_TF_SEQUENCE_EXAMPLE

  def write(self, examples, exec_properties: Dict[str, Any]) -> None:
    files = input_files(exec_properties)
    if not files:
      raise ValueError(f'no CSV files match {exec_properties["input_config"]}')
    label_column = exec_properties['label_column']
    text_column = exec_properties['text_column']
    total_bytes = sum(fileio.stat(path).length for path in files)
    examples.split_names = standard_artifact_utils.encode_split_names(list(splits.SPLITS))
    scratch = self._get_tmp_dir()
    mode = exec_properties.get('duplicates') or duplicates.GROUP
    by_words = mode != duplicates.OFF

    watch = beam_progress.watch(
      self,
      'TextExampleGen',
      lambda: row_count(files),
      'rows encoded',
      outputs={'examples': [examples]},
    )
    with watch, self._make_beam_pipeline() as pipeline:
      read = (
        pipeline
        | 'ListFiles' >> beam.Create(files)
        | 'ReadRows'
        >> beam.FlatMap(
          _read_rows, label_column, text_column, exec_properties['eval_percent'], by_words
        ).with_outputs(REPEATED_HEADERS, main='rows')
      )
      rows = read.rows
      headers = read[REPEATED_HEADERS] | 'CountHeaders' >> beam.CombineGlobally(sum)
      if by_words:
        groups = (
          rows
          | 'ByWords' >> beam.Map(lambda row: (' '.join(row[2]), row))
          | 'SameWords' >> beam.GroupByKey()
        )
        placed = groups | 'Place' >> beam.FlatMap(
          _placed, mode, grouped_split.conflict_counts(groups, label_of=lambda row: row[1])
        ).with_outputs(grouped_split.FACTS, main='rows')
        rows = placed.rows
        _ = (
          placed[grouped_split.FACTS]
          | 'SumDuplicates' >> beam.CombineGlobally(grouped_split.Facts())
          | 'Json[duplicates]' >> beam.Map(json.dumps)
          | 'Save[duplicates]'
          >> beam.io.WriteToText(
            os.path.join(scratch, 'duplicates'), num_shards=1, shard_name_template=''
          )
        )
      rows = rows | 'Spread' >> beam.Reshuffle()
      words = (
        rows
        | 'TrainOnly' >> beam.Filter(lambda row: row[0] == 'train')
        | 'Words' >> beam.FlatMap(lambda row: row[2])
        | 'CountWords' >> beam.combiners.Count.PerElement()
        | 'AllCounts' >> beam.combiners.ToList()
        | 'Vocabulary'
        >> beam.Map(
          text.vocabulary, exec_properties['max_vocabulary'], exec_properties['min_count']
        )
      )
      labels = (
        rows
        | 'LabelNames' >> beam.Map(lambda row: row[1])
        | 'Distinct' >> beam.Distinct()
        | 'AllLabels' >> beam.combiners.ToList()
        | 'LabelOrder' >> beam.Map(text.label_order)
      )
      encoded = rows | 'Encode' >> beam.ParDo(
        _Encode(), beam.pvalue.AsSingleton(words), beam.pvalue.AsSingleton(labels)
      )
      _write_splits(
        encoded,
        examples,
        {
          split: artifacts.shard_count(total_bytes, exec_properties['shard_size_mb'])
          for split in splits.SPLITS
        },
      )
      facts = (
        rows
        | 'Facts' >> beam.Map(lambda row: (row[0], len(row[2])))
        | 'PerSplit' >> beam.CombinePerKey(_LengthFacts())
        | 'AllFacts' >> beam.combiners.ToDict()
      )
      for name, collection in (
        ('vocabulary', words),
        ('labels', labels),
        ('facts', facts),
        (REPEATED_HEADERS, headers),
      ):
        _ = (
          collection
          | f'Json[{name}]' >> beam.Map(json.dumps)
          | f'Save[{name}]'
          >> beam.io.WriteToText(os.path.join(scratch, name), num_shards=1, shard_name_template='')
        )

    for split in splits.SPLITS:
      file_based.drop_empty_shards(standard_artifact_utils.get_split_uri([examples], split))
    saved = {}
    for name in ('vocabulary', 'labels', 'facts', REPEATED_HEADERS):
      with fileio.open(os.path.join(scratch, name), 'r') as f:
        saved[name] = json.loads(f.read())
    meta = {
      'label_column': label_column,
      'text_column': text_column,
      'split_counts': {
        split: saved['facts'].get(split, {}).get('count', 0) for split in splits.SPLITS
      },
      'vocabulary_size': len(saved['vocabulary']),
      'labels': saved['labels'],
      'longest_text': max((f['longest'] for f in saved['facts'].values()), default=0),
      'empty_texts': sum(f['empty'] for f in saved['facts'].values()),
    }
    atomic.write(
      os.path.join(examples.uri, artifacts.VOCABULARY_FILE),
      ''.join(word + '\n' for word in saved['vocabulary']),
    )
    atomic.write(
      os.path.join(examples.uri, artifacts.LABELS_FILE),
      ''.join(name + '\n' for name in saved['labels']),
    )
    atomic.write(os.path.join(examples.uri, artifacts.TEXT_META_FILE), json.dumps(meta, indent=2))

    examples.set_string_custom_property('compression', 'none')
    examples.set_string_custom_property('split_counts', json.dumps(meta['split_counts']))
    examples.set_string_custom_property('label_vocabulary', json.dumps(saved['labels']))
    examples.set_int_custom_property('vocabulary_size', meta['vocabulary_size'])
    examples.set_int_custom_property(artifacts.REPEATED_HEADERS, saved[REPEATED_HEADERS])
    if by_words:
      with fileio.open(os.path.join(scratch, 'duplicates'), 'r') as f:
        found = json.loads(f.read() or '{}')
      grouped_split.record(examples, found, mode, presplit=False)


def _write_splits(records, examples, shards: Dict[str, int]) -> None:
  """(split, serialized record) pairs → `<examples>/Split-<split>/data-SSSSS-of-NNNNN`, plain
  TFRecords (token ids compress little)."""
  for split, count in shards.items():
    _ = (
      records
      | f'Select[{split}]' >> beam.Filter(lambda item, s=split: item[0] == s)
      | f'Payload[{split}]' >> beam.Map(lambda item: item[1])
      | f'Write[{split}]'
      >> beam.io.WriteToTFRecord(
        os.path.join(standard_artifact_utils.get_split_uri([examples], split), 'data'),
        num_shards=count,
        shard_name_template='-SSSSS-of-NNNNN',
        compression_type=beam.io.filesystem.CompressionTypes.UNCOMPRESSED,
      )
    )


class _LengthFacts(beam.CombineFn):
  """Token counts of one split → {'count', 'longest', 'empty'}."""

  def create_accumulator(self):
    return {'count': 0, 'longest': 0, 'empty': 0}

  def add_input(self, facts, length):
    return {
      'count': facts['count'] + 1,
      'longest': max(facts['longest'], length),
      'empty': facts['empty'] + (length == 0),
    }

  def merge_accumulators(self, accumulators):
    accumulators = list(accumulators)
    return {
      'count': sum(a['count'] for a in accumulators),
      'longest': max(a['longest'] for a in accumulators),
      'empty': sum(a['empty'] for a in accumulators),
    }

  def extract_output(self, facts):
    return facts
