"""ArrowCsvExampleGen executor: CSV files → tf.Example TFRecord shards (csv_ranges.py,
type_inference.py and example_encoding.py do the work).

Output layout under the Examples artifact's URI, as every ExampleGen of the project writes it:
  Split-train/data-00000-of-0000N[.gz]   one shard per byte range of the input (csv_ranges.ranges)
  Split-eval/...

Each file's dialect (contracts/csv_dialect.py) is found from its header line; the files of one run
share its delimiter. One Beam pipeline over the byte ranges: each range is read once to infer its
column types (combined per input split: CsvExampleGen infers per split), and again to encode and
write its own shard of every output split, with the types as a side input. An example's split is
decided by a hash of its serialized bytes into the output config's hash buckets, as CsvExampleGen
decides it (it hashes the serialized tf.Example with farmhash; the C++ encoder's bytes are not
stable across processes, so this hashes the row's cells: example_encoding.row_hashes), so equal
rows share a split; already split input (one input split per output split) keeps its splits.
"""

import io
import json
import os
from typing import Any, Dict, List, Optional, Tuple
import uuid

import apache_beam as beam
import numpy as np
import pyarrow as pa
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifact_utils
from tfx.utils import proto_utils

from components import (
  beam_progress,
  duplicates,
  file_based,
  grouped_split,
  id_columns,
  label_gaps,
  regroup,
)
from components.csv_example_gen import (
  csv_ranges,
  example_encoding,
  range_tasks,
  type_inference,
)
from contracts import artifacts, csv_dialect
from contracts.errors import UnusableData
from utils import atomic, progress


def _read(
  task: range_tasks.Task, names: List[str], errors: str, label: str, default: str, dialect
) -> Optional[Tuple[pa.Table, int, int]]:
  """(a task's range of a file of `dialect` as a table of strings, its rows without a label, the
  rows repeating the header it left out), their label cells holding `default` when there is one
  (components/label_gaps.py); or None when it cannot be read as CSV: the reason (one line) is
  then left in `<errors>-<split>-<shard>.txt` for `write` to raise as UnusableData (an exception
  raised in a Beam worker reaches `write` as another type, with Beam's words added)."""
  split, path, begin, end, line, index, _ = task
  with fileio.open(path, 'rb') as f:
    f.seek(begin)
    data = f.read(end - begin)
  try:
    table, headers = csv_ranges.without_header_rows(
      csv_ranges.read_range(data, names, path, line, dialect)
    )
    return (*label_gaps.fill_table(table, label, default), headers)
  except csv_ranges.CsvError as e:
    atomic.write(f'{errors}-{split}-{index:05d}.txt', str(e))
    return None


_VALUES = 'values'  # _Infer's second output: a range's cells for id_columns.UniqueColumns
# the types of id columns (floats are measurements)
_ID_TYPES = (type_inference.ColumnType.INT, type_inference.ColumnType.STRING)


class _Infer(beam.DoFn):
  """task → (input split, (it again, its range's column types, the census of its STRING columns
  that may be numbers written as text: type_inference.text_census)), labels defaulted first; with
  `candidates`,
  also the range's rows (id_columns.Batch) on _VALUES: the hashed cells of those integer or string
  columns that have a value in every row (id-like columns are looked for)."""

  def __init__(
    self,
    names: Dict[str, List[str]],
    errors: str,
    candidates: bool,
    label: str,
    default: str,
    dialect,
  ):
    self._names, self._errors, self._candidates = names, errors, candidates
    self._label, self._default, self._dialect = label, default, dialect

  def process(self, task: range_tasks.Task):
    read = _read(
      task, self._names[task[0]], self._errors, self._label, self._default, self._dialect
    )
    if read is None:
      return
    table = read[0]
    numbers = _numbers(table, self._dialect)
    types = type_inference.column_types(numbers)
    census = type_inference.text_census(numbers, types)
    yield task[0], (task[0], [int(kind) for kind in types], census)
    if self._candidates:
      values = {}
      for name, kind in zip(table.column_names, types):
        cells = table.column(name)
        hashes = None
        if (
          kind in _ID_TYPES
          and name != self._label
          and type_inference.all_filled(cells)
          and not _dated(cells, kind)
        ):
          hashes = example_encoding.row_hashes(table.select([name]))
        # a value twice within the range: no id (sent as None, not as every cell)
        values[name] = hashes.tolist() if hashes is not None and _distinct(hashes) else None
      yield beam.pvalue.TaggedOutput(_VALUES, (table.num_rows, values))


def _numbers(table: pa.Table, dialect: csv_dialect.Dialect) -> pa.Table:
  """The cells numbers are read from: with decimal commas (a `;` or tab file), 12,5 as 12.5."""
  return csv_ranges.decimal_points(table) if dialect.decimal_comma else table


def _dated(cells, kind) -> bool:
  """A STRING column of dates (id_columns.dated on its first cells): a timestamp is no id."""
  if kind != type_inference.ColumnType.STRING:
    return False
  first = cells.slice(0, id_columns.DATE_SAMPLE).combine_chunks().cast(pa.string())
  return id_columns.dated(first.to_pylist())


def _distinct(hashes: np.ndarray) -> bool:
  return len(np.unique(hashes)) == len(hashes)


def _detected(unique: List[str], types: Dict[str, List[int]], names) -> List[str]:
  """The columns unique in every row that are integers or strings in every input split."""
  return [
    column
    for column in unique
    if all(
      column in names[s] and kinds[names[s].index(column)] in _ID_TYPES
      for s, kinds in types.items()
    )
  ]


class _MergeTypes(beam.CombineFn):
  """Column types and text census of an input split's ranges → the split's column types
  (type_inference.numbers_from_text)."""

  def __init__(self, names: Dict[str, List[str]], label: str):
    self._names, self._label = names, label

  def create_accumulator(self):
    return []

  def add_input(self, typings, types):
    return typings + [types]

  def merge_accumulators(self, accumulators):
    return [types for typings in accumulators for types in typings]

  def extract_output(self, typings):
    names = self._names[typings[0][0]]
    types = type_inference.numbers_from_text(
      [t for _, t, _ in typings], [c for _, _, c in typings], names, self._label
    )
    return [int(kind) for kind in types]


class _WriteRange(beam.DoFn):
  """task → its range's records in its shard of each output split, and the count of each split
  with the column types in `<facts>-<split>-<shard>.json` (no Beam sink: 6 stages fewer, ~1 s
  of a 200,000-row run). A row's split is decided by a hash of its content: every cell but the
  label's and the id columns' (`ignored`), so rows that differ only there share a split; its
  numbers as read (a `;` file's `12,5` as `12.5`: the same rows saved with commas split alike).
  With `rows`, also leaves each row's content hash and label in `<rows>-<split>-<shard>.npz`, for
  `write` to find the same content under two labels. Rows without a label take `default` (none:
  they are counted, and `write` refuses them)."""

  def __init__(
    self,
    uri: str,
    names,
    buckets,
    gzip: bool,
    facts: str,
    errors: str,
    label,
    default,
    ids,
    rows,
    dialect,
  ):
    self._uri, self._names, self._buckets, self._gzip = uri, names, buckets, gzip
    self._dialect = dialect
    self._facts, self._errors, self._rows = facts, errors, rows
    self._label, self._default, self._ignored = label, default, {label, *ids}

  def process(
    self, task: range_tasks.Task, types: Dict[str, List[int]], unique: List[str]
  ) -> List[None]:
    import tensorflow as tf

    split, index, count = task[0], task[5], task[6]
    read = _read(task, self._names[split], self._errors, self._label, self._default, self._dialect)
    if read is None:
      return []
    table, unlabelled, headers = read
    non_finite = []  # inf / nan cells of FLOAT columns, left out
    from_text = {}  # NUMBER_TEXT columns: {column: [placeholders, other cells, forms]}
    kinds = [type_inference.ColumnType(t) for t in types[split]]
    numbers = _numbers(table, self._dialect)
    if self._dialect.decimal_comma:
      table = example_encoding.as_read(table, numbers, kinds)
    records = example_encoding.to_examples(table, kinds, non_finite, from_text)
    outputs = [name for name, _ in self._buckets] if self._buckets else [split]
    detected = _detected(unique, types, self._names)
    ignored = self._ignored | set(detected)
    unread = type_inference.unread_numbers(numbers, kinds, ignored)
    content = example_encoding.row_hashes(
      table.select([name for name in table.column_names if name not in ignored])
    )
    if self._buckets:
      bucket_split = np.array([i for i, (_, n) in enumerate(self._buckets) for _ in range(n)])
      chosen = bucket_split[content % np.uint64(len(bucket_split))]
    else:
      chosen = np.zeros(len(records), dtype=np.int64)
    final = {s: artifacts.shard_path(self._uri, s, index, count, self._gzip) for s in outputs}
    partial = {s: f'{path}.partial-{uuid.uuid4().hex}' for s, path in final.items()}
    options = tf.io.TFRecordOptions(compression_type='GZIP' if self._gzip else '')
    counts = {}
    for number, s in enumerate(outputs):
      rows = np.flatnonzero(chosen == number)
      with tf.io.TFRecordWriter(partial[s], options) as writer:
        for row in rows:
          writer.write(records[row])
      counts[s] = len(rows)
    for s, path in partial.items():  # complete files only, under their final names
      fileio.rename(path, final[s], overwrite=True)
    if self._rows:
      labels = _labels(table, self._label)
      atomic.write(f'{self._rows}-{split}-{index:05d}.npz', _saved(content, chosen, labels))
    facts = {
      'split': split,
      'types': types[split],
      'counts': counts,
      'unlabelled': unlabelled,
      'repeated_headers': headers,
      'non_finite': sum(non_finite),
      'from_text': from_text,
      'unread': unread,
      'detected': detected,
    }
    atomic.write(f'{self._facts}-{split}-{index:05d}.json', json.dumps(facts))
    return []  # nothing downstream


def _labels(table: pa.Table, label: str) -> np.ndarray:
  """Each row's label cell ('' for all without that column)."""
  if label not in table.column_names:
    return np.full(table.num_rows, '', dtype=object)
  return np.array(table.column(label).to_pylist(), dtype=object)


def _saved(content: np.ndarray, chosen: np.ndarray, labels: np.ndarray) -> bytes:
  buffer = io.BytesIO()
  np.savez(buffer, content=content, chosen=chosen, labels=labels.astype(str))
  return buffer.getvalue()


class Executor(file_based.ExampleGenExecutor):
  """Writes the CSV files under `input_base` as tf.Example shards of the configured splits."""

  def write(self, examples, exec_properties: Dict[str, Any]) -> None:
    input_config = example_gen_pb2.Input()
    proto_utils.json_to_proto(exec_properties['input_config'], input_config)
    output_config = example_gen_pb2.Output()
    proto_utils.json_to_proto(exec_properties['output_config'], output_config)
    buckets = [(s.name, s.hash_buckets) for s in output_config.split_config.splits]
    if buckets and len(input_config.splits) != 1:
      raise ValueError('a hash split takes one input split')
    tasks, names, sizes, dialect = range_tasks.numbered_tasks(
      exec_properties['input_base'], input_config, not buckets
    )
    gzip = exec_properties.get('compression') == 'gzip'
    outputs = [name for name, _ in buckets] or [s.name for s in input_config.splits]
    examples.split_names = standard_artifact_utils.encode_split_names(outputs)
    for split in outputs:
      fileio.makedirs(os.path.join(examples.uri, f'Split-{split}'))
    node = beam_progress.node_id(self, 'CsvExampleGen')
    first_output = {t: outputs[0] if buckets else t[0] for t in tasks}
    expected = {
      artifacts.shard_path(examples.uri, first_output[t], t[5], t[6], gzip): size
      for t, size in zip(tasks, sizes)
    }
    watch = progress.FilesProgress(
      node,
      expected,
      lambda done, total, rate: (
        f'{done / 2**20:,.1f} of {total / 2**20:,.1f} MB of CSV written '
        f'as tf.Examples, {rate / 2**20:,.1f} MB/s'
      ),
    )
    facts = os.path.join(self._get_tmp_dir(), 'facts')
    errors = os.path.join(self._get_tmp_dir(), 'errors')
    mode = exec_properties.get('duplicates') or duplicates.GROUP
    label, ids = (
      exec_properties.get('label_key') or '',
      json.loads(exec_properties.get('id_columns') or '[]'),
    )
    default = exec_properties.get('label_default') or ''
    rows = '' if mode == duplicates.OFF else os.path.join(self._get_tmp_dir(), 'rows')
    with beam_progress.job_guard(self, node), watch, self._make_beam_pipeline() as pipeline:
      ranges = pipeline | 'Ranges' >> beam.Create(tasks, reshuffle=True)
      inferred = ranges | 'InferTypes' >> beam.ParDo(
        _Infer(names, errors, not ids, label, default, dialect)
      ).with_outputs(_VALUES, main='types')
      types = inferred.types | 'TypesPerSplit' >> beam.CombinePerKey(_MergeTypes(names, label))
      unique = inferred[_VALUES] | 'UniqueColumns' >> beam.CombineGlobally(
        id_columns.UniqueColumns()
      )
      _ = ranges | 'EncodeAndWrite' >> beam.ParDo(
        _WriteRange(
          examples.uri, names, buckets, gzip, facts, errors, label, default, ids, rows, dialect
        ),
        beam.pvalue.AsDict(types),
        beam.pvalue.AsSingleton(unique),
      )

    refused = sorted(fileio.glob(f'{errors}-*.txt'))
    if refused:
      for split in outputs:  # nothing half-written
        fileio.rmtree(os.path.join(examples.uri, f'Split-{split}'))
      with fileio.open(refused[0], 'r') as f:
        raise UnusableData(f.read())
    counts, column_types, unlabelled, detected = dict.fromkeys(outputs, 0), {}, 0, []
    headers = non_finite = 0
    from_text = {}  # {column: [placeholders, other cells, forms]}
    unread = {}  # {column: [cells that look like numbers, cells, shown]}
    for path in fileio.glob(f'{facts}-*.json'):
      with fileio.open(path, 'r') as f:
        written = json.loads(f.read())
      unlabelled += written['unlabelled']
      headers += written['repeated_headers']
      non_finite += written['non_finite']
      for column, (placeholders, odd, forms) in written['from_text'].items():
        total = from_text.setdefault(column, [0, 0, set()])
        total[0], total[1] = total[0] + placeholders, total[1] + odd
        total[2].update(forms)
      type_inference.add_unread(unread, written['unread'])
      detected = written['detected']
      for split, count in written['counts'].items():
        counts[split] += count
      kinds = [type_inference.ColumnType(t) for t in written['types']]
      column_types[written['split']] = type_inference.types_json(kinds, names[written['split']])
    _settle_labels(
      examples, outputs, tasks, names, (sum(counts.values()), unlabelled), label, default
    )
    examples.set_string_custom_property('compression', 'gzip' if gzip else 'none')
    examples.set_string_custom_property('split_counts', json.dumps(counts))
    examples.set_string_custom_property('column_types', json.dumps(column_types))
    examples.set_int_custom_property(artifacts.REPEATED_HEADERS, headers)
    examples.set_int_custom_property(artifacts.NON_FINITE_CELLS, non_finite)
    if dialect.described():
      examples.set_string_custom_property(artifacts.CSV_DIALECT, dialect.described())
    if from_text:
      examples.set_string_custom_property(
        artifacts.NUMBERS_FROM_TEXT,
        json.dumps(
          {
            c: {'placeholders': p, 'other': o, 'forms': sorted(f)}
            for c, (p, o, f) in sorted(from_text.items())
          }
        ),
      )
    unread = type_inference.looks_numeric(unread)
    if unread:
      examples.set_string_custom_property(artifacts.NUMBERS_UNREAD, json.dumps(unread))
    id_columns.record(examples, ids, detected)
    if rows:
      found = regroup.csv_rows(
        examples.uri, tasks, outputs, gzip, rows, mode, label, ids + detected, not buckets
      )
      for split, left_out in found.pop('left_out').items():
        counts[split] -= left_out
      examples.set_string_custom_property('split_counts', json.dumps(counts))
      grouped_split.record(examples, found, mode, not buckets)


def _settle_labels(examples, outputs, tasks, names, rows_unlabelled, label, default) -> None:
  """label_gaps.settle for the rows read (rows_unlabelled: all of them, those without a label);
  a refusal leaves no split behind."""
  rows, unlabelled = rows_unlabelled
  files = sorted({task[1] for task in tasks})
  present = rows if any(label in header for header in names.values()) else 0
  facts = {'rows': rows, 'present': present, 'missing': unlabelled}
  refused = unlabelled and not default
  shown = label_gaps.csv_lines(files, label, unlabelled) if refused else ''
  try:
    label_gaps.settle(
      examples,
      facts,
      label,
      default,
      files[0] if len(files) == 1 else os.path.dirname(files[0]),
      shown,
    )
  except UnusableData:
    for split in outputs:
      fileio.rmtree(os.path.join(examples.uri, f'Split-{split}'))
    raise
