"""TFX's own ExampleGens (CsvExampleGen with `--csv-reader tfx`, ImportExampleGen) with the split
decided by content (components/duplicates.py): a mixin for their executors that replaces TFX's
hash partition (a hash of the whole serialized record, label included) with a GroupByKey on each
record's content fingerprint, every feature but the label and the id columns. A group goes to one
split; a group filed under more than one label is left out while such groups are rare (unless
kept: `duplicates`; contracts/splits.conflicts_left_out), else kept as a noisy label.

Already split input (Split-* TFRecords) keeps its splits: content found in more than one split is
counted and named (the run's summary warns), never moved.

Leaves `duplicates.json` (the largest groups, the conflicts) and `excluded_files.csv` (the rows
left out) in the Examples artifact, and the counts as its custom properties.
"""

import csv
import hashlib
import io
import json
import os
from typing import Any, Dict, Iterable, List, Sequence, Tuple

import apache_beam as beam
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils
from tfx.utils import proto_utils

from components import duplicates, id_columns
from contracts import artifacts, image_record
from utils import atomic

FACTS = 'facts'
SHOWN = 50  # conflicts and groups kept for duplicates.json and excluded_files.csv
# Features that identify an example rather than describe it: never part of its content.
ALWAYS_IGNORED = (image_record.IMAGE_ID_KEY, image_record.LABEL_NAME_KEY)


def _value(feature) -> str:
  kind = feature.WhichOneof('kind')
  values = list(getattr(feature, kind).value) if kind else []
  shown = [v.decode('utf-8', 'replace') if isinstance(v, bytes) else f'{v:g}' for v in values]
  return shown[0] if len(shown) == 1 else '[' + ', '.join(shown[:4]) + ']'


class Fingerprint:
  """record (serialized or not) → (content digest, (label, a short description of the record,
  the serialized record))."""

  def __init__(self, label: str, ignored: Iterable[str], sequence: bool):
    self._label = label
    self._ignored = set(ignored) | set(ALWAYS_IGNORED) | {label}
    self._sequence = sequence

  def parsed(self, record):
    import tensorflow as tf

    if isinstance(record, bytes):
      return (tf.train.SequenceExample if self._sequence else tf.train.Example).FromString(record)
    return record

  def id_values(self, record) -> id_columns.Batch:
    """A tf.Example as one row for id_columns.UniqueColumns: its single integers and texts
    (bytes that are printable UTF-8: an image's bytes are no id)."""
    values = {}
    for name, feature in self.parsed(record).features.feature.items():
      if name not in self._ignored:
        kind = feature.WhichOneof('kind')
        found = list(getattr(feature, kind).value) if kind in ('int64_list', 'bytes_list') else []
        values[name] = found if len(found) == 1 and _id_like(found[0]) else None
    return 1, values

  def __call__(self, record, detected: Sequence[str] = ()) -> Tuple[bytes, Tuple[str, str, Any]]:
    """`detected`: id columns found in the data, left out of its content too."""
    parsed = self.parsed(record)
    features = (parsed.context if self._sequence else parsed.features).feature
    ignored = self._ignored | set(detected)
    digest = hashlib.md5()
    for name in sorted(features):
      if name not in ignored:
        digest.update(name.encode() + b'\0' + features[name].SerializeToString() + b'\0')
    if self._sequence:
      for name in sorted(parsed.feature_lists.feature_list):
        digest.update(name.encode() + b'\1')
        digest.update(parsed.feature_lists.feature_list[name].SerializeToString())
    label = _value(features[self._label]) if self._label in features else ''
    shown = [f'{n}={_value(features[n])}' for n in sorted(features) if n not in ignored]
    description = ', '.join(shown[:4]) + (', …' if len(shown) > 4 else '')
    serialized = record if isinstance(record, bytes) else record.SerializeToString()
    return digest.digest(), (label, description, serialized)


def _id_like(value) -> bool:
  if not isinstance(value, bytes):
    return True
  try:
    text = value.decode('utf-8')
  except UnicodeDecodeError:
    return False
  return text.isprintable() and not id_columns.dated([text])  # a timestamp is no id


def conflict_counts(groups, label_of=lambda member: member[0]):
  """(examples in a group filed under two labels, all examples) of grouped `groups` ((key,
  members) pairs), as a side input: whether conflicts are left out depends on how many there are
  (duplicates.conflicts_left_out)."""

  def counts(group) -> Tuple[int, int]:
    members = list(group[1])
    return (len(members) if len({label_of(m) for m in members}) > 1 else 0), len(members)

  def add(pairs) -> Tuple[int, int]:
    pairs = list(pairs)
    return sum(p[0] for p in pairs), sum(p[1] for p in pairs)

  summed = (
    groups | 'ConflictCounts' >> beam.Map(counts) | 'SumConflicts' >> beam.CombineGlobally(add)
  )
  return beam.pvalue.AsSingleton(summed)


class _Place(beam.DoFn):
  """(content, members) → (split index, record) for each member kept, and a facts element."""

  def __init__(self, buckets: List[int], mode: str):
    self._buckets = buckets  # cumulative hash buckets per split, as TFX's output_config has
    self._mode = mode

  def process(self, group: Tuple[bytes, Iterable[Tuple[str, str, Any]]], counts: Tuple[int, int]):
    content, members = group
    members = list(members)
    labels = sorted({label for label, _, _ in members})
    conflict = len(labels) > 1
    yield beam.pvalue.TaggedOutput(FACTS, facts(members, labels, conflict))
    if conflict and duplicates.conflicts_left_out(self._mode, *counts):
      return
    bucket = int.from_bytes(content[:8], 'big') % self._buckets[-1]
    split = next(i for i, end in enumerate(self._buckets) if bucket < end)
    for _, _, record in members:
      yield split, record


def facts(members: list, labels: list, conflict: bool) -> dict:
  """A group's facts: members (label, description, _), its labels, whether they conflict."""
  count = len(members)
  shown = [{'row': description, 'label': label} for label, description, _ in members[:5]]
  return {
    'examples': count,
    'duplicates': count if count > 1 else 0,
    'conflicts': count if conflict else 0,
    'groups': [shown] if count > 1 and not conflict else [],
    'conflicting': [dict(row, labels=labels) for row in shown] if conflict else [],
  }


def _across(group: Tuple[bytes, Iterable[Tuple[str, str]]]) -> dict:
  """Already split input: (content, (split, description) of each member) → facts."""
  _, members = group
  members = list(members)
  found = sorted({split for split, _ in members})
  if len(found) < 2:
    return {'duplicates': len(members) if len(members) > 1 else 0}
  return {
    'duplicates': len(members),
    'across_splits': len(members),
    'across': [{'row': members[0][1], 'splits': found}],
  }


class Facts(beam.CombineFn):
  """Sums the counts and keeps the first SHOWN groups and conflicts."""

  def create_accumulator(self) -> dict:
    return {}

  def add_input(self, total: dict, facts: dict) -> dict:
    for key, value in facts.items():
      if isinstance(value, list):
        total[key] = (total.get(key, []) + value)[:SHOWN]
      else:
        total[key] = total.get(key, 0) + value
    return total

  def merge_accumulators(self, totals) -> dict:
    merged = {}
    for total in totals:
      merged = self.add_input(merged, total)
    return merged

  def extract_output(self, total: dict) -> dict:
    return total


class GroupedSplitExecutor:
  """Mix in before a TFX ExampleGen executor: its records are split by content."""

  def GenerateExamplesByBeam(self, pipeline, exec_properties: Dict[str, Any]):
    mode = exec_properties.get('duplicates') or duplicates.GROUP
    self._facts_path, self._presplit = '', False
    if mode == duplicates.OFF:
      return super().GenerateExamplesByBeam(pipeline, exec_properties)
    input_config = proto_utils.json_to_proto(
      exec_properties['input_config'], example_gen_pb2.Input()
    )
    output_config = proto_utils.json_to_proto(
      exec_properties['output_config'], example_gen_pb2.Output()
    )
    self._ids = json.loads(exec_properties.get('id_columns') or '[]')
    sequence = (
      exec_properties.get('output_data_format') == example_gen_pb2.FORMAT_TF_SEQUENCE_EXAMPLE
    )
    fingerprint = Fingerprint(exec_properties.get('label_key') or '', self._ids, sequence)
    exec_properties['_beam_pipeline_args'] = self._beam_pipeline_args or []
    input_to_record = self.GetInputSourceToExamplePTransform()
    self._facts_path = os.path.join(self._get_tmp_dir(), 'duplicate-facts')
    split_config = output_config.split_config
    self._presplit = not split_config.splits
    self._ids_path = os.path.join(self._get_tmp_dir(), 'detected-id-columns')
    if split_config.splits:
      buckets, total = [], 0
      for split in split_config.splits:
        total += split.hash_buckets
        buckets.append(total)
      records = pipeline | 'InputToRecord' >> input_to_record(
        exec_properties, input_config.splits[0].pattern
      )
      detected = self._detected([records], fingerprint, sequence)
      groups = (
        records
        | 'Fingerprint' >> beam.Map(fingerprint, beam.pvalue.AsSingleton(detected))
        | 'GroupByContent' >> beam.GroupByKey()
      )
      placed = groups | 'Place' >> beam.ParDo(
        _Place(buckets, mode), conflict_counts(groups)
      ).with_outputs(FACTS, main='records')
      parts = placed.records | 'SplitData' >> beam.Partition(lambda item, n: item[0], len(buckets))
      result = {
        split.name: part | f'Record[{split.name}]' >> beam.Map(lambda item: item[1])
        for split, part in zip(split_config.splits, parts)
      }
      facts = placed[FACTS]
    else:
      result, keyed = {}, []
      for split in input_config.splits:
        result[split.name] = pipeline | f'InputToRecord[{split.name}]' >> input_to_record(
          exec_properties, split.pattern
        )
      detected = beam.pvalue.AsSingleton(
        self._detected(list(result.values()), fingerprint, sequence)
      )
      for split in input_config.splits:
        keyed.append(
          result[split.name]
          | f'Fingerprint[{split.name}]'
          >> beam.Map(
            lambda r, ids, s=split.name: (lambda k, v: (k, (s, v[1])))(*fingerprint(r, ids)),
            detected,
          )
        )
      facts = (
        keyed
        | 'AllSplits' >> beam.Flatten()
        | 'GroupByContent' >> beam.GroupByKey()
        | 'AcrossSplits' >> beam.Map(_across)
      )
    _ = (
      facts
      | 'SumFacts' >> beam.CombineGlobally(Facts())
      | 'FactsToJson' >> beam.Map(json.dumps)
      | 'WriteFacts' >> beam.io.WriteToText(self._facts_path, num_shards=1, shard_name_template='')
    )
    return result

  def _detected(self, records: list, fingerprint: Fingerprint, sequence: bool):
    """The id columns found in `records` (every split's) when none is given (a one-element
    PCollection), also left in self._ids_path."""
    rows = records | 'AllRecords' >> beam.Flatten()
    if not self._ids and not sequence:
      rows = rows | 'IdValues' >> beam.Map(fingerprint.id_values)
    else:
      rows = rows | 'NoIdValues' >> beam.Filter(lambda _: False)
    detected = rows | 'UniqueColumns' >> beam.CombineGlobally(id_columns.UniqueColumns())
    _ = (
      detected
      | 'IdsToJson' >> beam.Map(json.dumps)
      | 'WriteIds' >> beam.io.WriteToText(self._ids_path, num_shards=1, shard_name_template='')
    )
    return detected

  def Do(self, input_dict, output_dict, exec_properties):
    super().Do(input_dict, output_dict, exec_properties)
    if not self._facts_path:
      return
    with fileio.open(self._facts_path, 'r') as f:
      facts = json.loads(f.read() or '{}')
    examples = artifact_utils.get_single_instance(output_dict['examples'])
    with fileio.open(self._ids_path, 'r') as f:
      id_columns.record(examples, self._ids, json.loads(f.read()))
    record(examples, facts, exec_properties.get('duplicates') or duplicates.GROUP, self._presplit)


def record(examples, facts: dict, mode: str, presplit: bool) -> None:
  """The counts as the artifact's custom properties; duplicates.json and excluded_files.csv
  (facts: Facts' sums, with every example counted in 'examples')."""
  conflicts = duplicates.conflict_properties(
    mode, facts.get('conflicts', 0), facts.get('examples', 0)
  )
  keep_conflicts = bool(conflicts['label_conflicts_kept'])
  counts = {
    'num_duplicates': facts.get('duplicates', 0),
    'num_near_duplicate_groups': 0,
    **conflicts,
  }
  if presplit:
    counts['num_across_splits'] = facts.get('across_splits', 0)
  for name, value in counts.items():
    examples.set_int_custom_property(name, int(value))
  listing = {
    'largest_groups': facts.get('groups', []),
    'conflicts': facts.get('conflicting', []),
    'across_splits': facts.get('across', []),
  }
  atomic.write(os.path.join(examples.uri, artifacts.DUPLICATES_FILE), json.dumps(listing, indent=1))
  if keep_conflicts or not listing['conflicts']:
    return
  table = io.StringIO()
  writer = csv.writer(table)
  writer.writerow(['path', 'reason'])
  for row in listing['conflicts']:
    others = ', '.join(label for label in row['labels'] if label != row['label'])
    writer.writerow([row['row'], f'the same row under another label: {others}'])
  atomic.write(os.path.join(examples.uri, artifacts.EXCLUDED_FILE), table.getvalue())
