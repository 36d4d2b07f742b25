"""Rows without a label, counted by the ExampleGens over every row they read (the command line
looks at a CSV's first rows only): an empty label, one of contracts.labels.MISSING_WORDS, a NaN,
or (TFRecords) no label feature or no value in it. Such rows are never written with an empty
label: without --label-default the run stops with one line (the count, the first rows), with it
they take the default and are counted (`num_labels_defaulted` on the Examples artifact).

  fill_table()        the Arrow CsvExampleGen's range of string cells, before types are inferred;
  LabelGapsExecutor   TFX's ExampleGens (CsvExampleGen, ImportExampleGen): a mix-in that checks
                      each record after TFX reads it;
  csv_lines()         the first such rows of CSV files by line number (for the refusal);
  settle()            after the pipeline: the refusal, or the count recorded.
"""

import json
import logging
import math
import os
from typing import Dict, List, Sequence, Tuple
import uuid

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils

from components import file_based, grouped_split
from contracts import csv_dialect, labels
from contracts.errors import UnusableData

DEFAULTED = 'num_labels_defaulted'  # Examples artifact: rows that took --label-default
_KINDS = {'int64_list': 'class ids (integers)', 'float_list': 'numbers', 'bytes_list': 'names'}


def fill_table(table: pa.Table, label: str, default: str) -> Tuple[pa.Table, int]:
  """(the table with `default` in the label cells that hold none when there is a default, how
  many hold none); a table without the label column is left as it is."""
  if label not in table.column_names:
    return table, 0
  cells = table.column(label)
  missing = pc.is_in(
    pc.utf8_lower(pc.utf8_trim_whitespace(cells)), value_set=pa.array(labels.MISSING_WORDS)
  )
  count = pc.sum(missing).as_py() or 0
  if count and default:
    filled = pc.if_else(missing, pa.scalar(default), cells)
    table = table.set_column(table.column_names.index(label), label, filled)
  return table, count


def csv_lines(paths: Sequence[str], label: str, missing: int) -> str:
  """'lines 302, 402, …' ('lines a.csv:302, …' for several files): the first
  contracts.labels.SHOWN_ROWS of the `missing` rows of the CSV files whose label holds none,
  read as contracts/csv_dialect.py reads them (blank lines skipped, as CsvExampleGen does)."""
  found = []
  for path in paths:
    with fileio.open(path, 'rb') as f:
      dialect, names = csv_dialect.header(f.readline())
    if label not in names:
      continue
    column = names.index(label)
    with fileio.open(path, 'r') as f:
      rows = csv_dialect.stream_rows(f, dialect)
      next(rows, None)  # the header
      for line, row in rows:
        if len(found) == labels.SHOWN_ROWS:
          break
        if labels.is_missing(row[column] if column < len(row) else ''):
          found.append(f'{os.path.basename(path)}:{line}' if len(paths) > 1 else str(line))
  return f'lines {labels.first_rows(found, missing)}' if found else ''


def _missing_value(feature) -> bool:
  kind = feature.WhichOneof('kind')
  values = getattr(feature, kind).value if kind else []
  if len(values) != 1:
    return not values
  if kind == 'float_list':
    return math.isnan(values[0])
  return kind == 'bytes_list' and labels.is_missing(values[0])


def _typed(kind: str, default: str):
  """--label-default as a value of a `kind` feature (ValueError when it is none)."""
  return {'int64_list': int, 'float_list': float}.get(kind, str.encode)(default)


def _kind_of(text: str) -> str:
  """The feature kind CsvExampleGen would give a column of `text` alone."""
  for kind in ('int64_list', 'float_list'):
    try:
      _typed(kind, text)
      return kind
    except ValueError:
      pass
  return 'bytes_list'


class _FillLabels(beam.DoFn):
  """record → the record (its missing label set to the default when there is one), and a facts
  element: rows, rows with the label feature (`present`), `missing`, the first missing ones."""

  def __init__(self, label: str, default: str, ids: List[str], sequence: bool):
    self._label, self._default, self._sequence = label, default, sequence
    self._describe = grouped_split.Fingerprint(label, ids, sequence)

  def process(self, record, kinds: List[str]):
    import tensorflow as tf

    serialized = isinstance(record, bytes)
    kind = tf.train.SequenceExample if self._sequence else tf.train.Example
    parsed = kind.FromString(record) if serialized else record
    features = (parsed.context if self._sequence else parsed.features).feature
    present = self._label in features
    facts = {'rows': 1, 'present': int(present)}
    if not present or _missing_value(features[self._label]):
      facts.update(missing=1, first=[self._describe(parsed)[1][1]])
      if self._default and kinds:
        kind = (features[self._label].WhichOneof('kind') if present else None) or (
          kinds[0] if kinds else _kind_of(self._default)
        )
        try:
          value = _typed(kind, self._default)
        except ValueError:
          facts['bad_default'] = [kind]
        else:
          features[self._label].Clear()
          getattr(features[self._label], kind).value.append(value)
          record = parsed.SerializeToString() if serialized else parsed
    yield beam.pvalue.TaggedOutput(grouped_split.FACTS, facts)
    yield record


class LabelGapsExecutor:
  """Mix in before a TFX ExampleGen executor: every record TFX reads is checked for a label
  (exec_properties 'label_key', 'label_default'); `CSV = True`: name the first rows by line."""

  CSV = False

  def GetInputSourceToExamplePTransform(self):
    read = super().GetInputSourceToExamplePTransform()
    facts_path = f'{self._label_facts}-{uuid.uuid4().hex}'

    @beam.ptransform_fn
    def ReadAndCheckLabels(pipeline, exec_properties, split_pattern):
      records = pipeline | 'Read' >> read(exec_properties, split_pattern)
      label = exec_properties.get('label_key') or ''
      if not label:
        return records
      sequence = (
        exec_properties.get('output_data_format') == example_gen_pb2.FORMAT_TF_SEQUENCE_EXAMPLE
      )
      kinds = (
        records
        | 'LabelKind' >> beam.FlatMap(_label_kind, label, sequence)
        | 'DistinctKinds' >> beam.Distinct()
      )
      checked = records | 'CheckLabels' >> beam.ParDo(
        _FillLabels(
          label,
          exec_properties.get('label_default') or '',
          json.loads(exec_properties.get('id_columns') or '[]'),
          sequence,
        ),
        beam.pvalue.AsList(kinds),
      ).with_outputs(grouped_split.FACTS, main='records')
      _ = (
        checked[grouped_split.FACTS]
        | 'SumLabelFacts' >> beam.CombineGlobally(grouped_split.Facts())
        | 'LabelFactsToJson' >> beam.Map(json.dumps)
        | 'WriteLabelFacts' >> beam.io.WriteToText(facts_path, num_shards=1, shard_name_template='')
      )
      return checked.records

    return ReadAndCheckLabels

  def Do(self, input_dict, output_dict, exec_properties):
    self._label_facts = os.path.join(self._get_tmp_dir(), 'label-facts')
    super().Do(input_dict, output_dict, exec_properties)
    facts = grouped_split.Facts().create_accumulator()
    for path in fileio.glob(f'{self._label_facts}-*'):
      with fileio.open(path, 'r') as f:
        facts = grouped_split.Facts().add_input(facts, json.loads(f.read() or '{}'))
    label, default = exec_properties.get('label_key') or '', exec_properties.get('label_default')
    files = file_based.input_files(exec_properties)
    where = files[0] if len(files) == 1 else exec_properties['input_base']
    missing = facts.get('missing', 0)
    if self.CSV and missing and not default:
      shown = csv_lines(files, label, missing)
    else:
      shown = labels.first_rows(facts.get('first', []), missing, '; ')
    examples = artifact_utils.get_single_instance(output_dict['examples'])
    settle(examples, facts, label, default or '', where, shown)


def _label_kind(record, label: str, sequence: bool):
  """The kind of a record's label value ('int64_list', …), when it holds one."""
  import tensorflow as tf

  if isinstance(record, bytes):
    record = (tf.train.SequenceExample if sequence else tf.train.Example).FromString(record)
  features = (record.context if sequence else record.features).feature
  if label in features and not _missing_value(features[label]):
    yield features[label].WhichOneof('kind')


def settle(examples, facts: Dict, label: str, default: str, where: str, shown: str) -> None:
  """Raises UnusableData for rows without a label (facts: 'rows', 'present', 'missing') when
  there is no default, or for a default the label's values cannot take; else records how many
  took it. No rows with the label at all: LabelCheck says the data has no such label."""
  missing = facts.get('missing', 0)
  if not missing or not facts.get('present'):
    return
  if facts.get('bad_default'):
    kind = facts['bad_default'][0]
    raise UnusableData(f"--label-default {default!r}: label '{label}' holds {_KINDS[kind]}")
  if not default:
    raise UnusableData(labels.missing_message(label, missing, facts['rows'], where, shown))
  examples.set_int_custom_property(DEFAULTED, missing)
  logging.info(
    "ExampleGen: %d rows without a '%s' value take %r (--label-default)", missing, label, default
  )
