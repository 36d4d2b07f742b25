"""Each data kind's input for the Trainer and the Tuner: data_spec read, datasets built, the
batch capped by the train split, the serving signatures and the input check's hint chosen."""

import dataclasses
import logging
import os
from typing import Callable, Dict, List, Optional, Tuple

import keras
import numpy as np
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.components.trainer.fn_args_utils import FnArgs

from contracts import image_record, labels, trainer_options
from contracts.errors import UnusableData
from contracts.trainer_options import TrainerOptions
from records import damage
from trainer import (
  data_spec,
  date_features,
  image_input,
  input_cache,
  label_checks,
  leakage,
  leakage_sample,
  sequence_input,
  shards,
  signatures,
  tabular_input,
  tabular_stats,
)

NUMERIC_SAMPLE_ROWS = leakage_sample.SAMPLE_ROWS  # the train sample the leakage rules read too
_AS_LONG = (
  'the tabular model takes a list of numbers, as long in every row: pad the lists to one length, '
  'or write one column per value'
)


@dataclasses.dataclass
class Setup:
  """What run_fn and tuner_fn train with, built for one data kind."""

  spec: object  # data_spec.ImageSpec, TabularSpec or SequenceSpec: what build_model gets
  train: tf.data.Dataset
  evaluation: tf.data.Dataset
  signatures: Callable[[keras.Model], dict]  # the model → {signature name: function}
  hint: str  # the first thing to try when the input check finds training input-bound
  class_names: List[str]
  cache: input_cache.CacheDecision
  id_columns: List[str] = dataclasses.field(default_factory=list)  # tabular: no model input
  single_feature_scores: dict = dataclasses.field(default_factory=dict)  # tabular: leakage.py
  label_spellings: dict = dataclasses.field(default_factory=dict)  # labels.one_spelling's merges
  dates: str = ''  # tabular: the columns read as dates, in the summary's words
  leakage_note: str = ''  # tabular: leakage.unjudged's columns, on too few eval rows to judge
  label_figures: dict = dataclasses.field(default_factory=dict)  # regression: label_figures.of


def _image_setup(fn_args: FnArgs, train_files, options: TrainerOptions, batch_size, guard) -> Setup:
  spec = data_spec.image_spec(data_spec.examples_root(fn_args.train_files[0]), options)
  eval_files = shards.shard_files(fn_args.eval_files)
  if options.min_eval_class_examples:
    counted = [
      label_checks.label_id_counts(f, image_record.LABEL_KEY, spec.num_classes, guard)
      for f in (train_files, eval_files)
    ]
    label_checks.check_eval_classes('image classes', spec.labels, *counted, options)
  records = shards.record_count(train_files + eval_files, guard)
  cache = _cache_decision(
    options, input_cache.image_bytes(records, spec.height, spec.width, spec.channels)
  )
  logging.info(
    'Image input %dx%dx%d, %d classes, %s records',
    spec.height,
    spec.width,
    spec.channels,
    spec.num_classes,
    spec.encoding,
  )
  train = image_input.image_dataset(
    train_files, spec, batch_size, True, guard, augment=options.augment, cache=cache.used
  )
  evaluation = image_input.image_dataset(
    eval_files, spec, batch_size, False, guard, cache=cache.used
  )
  hint = image_hint(cache.used, options.augment, spec.encoding, train_files)
  return Setup(spec, train, evaluation, signatures.image_signatures, hint, spec.labels, cache)


def image_hint(cached: bool, augment: bool, encoding: str, train_files: List[str]) -> str:
  """What would help image input that cannot keep up: only what this input still pays for every
  epoch (held decoded in memory, it no longer reads, decompresses nor decodes)."""
  if cached:
    work = 'augmentation (--augment) and ' if augment else ''
    return (
      f'more CPU cores for the Trainer: the input is held decoded in memory; {work}batching remain'
    )
  if any(path.endswith('.gz') for path in train_files):
    return 'uncompressed shards (pipeline.py run --compression none): GZIP reads 4-8x slower'
  if encoding == image_record.RAW:
    return 'faster storage for the shards, or more CPU cores for the Trainer'
  return (
    'store raw pixels (pipeline.py run --encoding raw) so that the Trainer does not '
    'decode JPEG/PNG, or give the Trainer more CPU cores'
  )


def _both_splits(fn_args: FnArgs):
  """Label ids are counted over train and eval: an eval label unseen in train must still fit."""
  return list(fn_args.train_files) + list(fn_args.eval_files)


@dataclasses.dataclass
class Table:
  """A table's splits as the project's tabular models read them (read_table)."""

  spec: data_spec.TabularSpec
  features: dict  # the train sample (NUMERIC_SAMPLE_ROWS rows), the model's columns
  sample_labels: tf.Tensor  # its labels
  eval_files: List[str]
  ids: List[str]  # row ids, no model input
  spellings: dict  # labels.one_spelling's merges
  figures: dict  # regression: label_figures.of
  dates_line: str


def read_table(fn_args: FnArgs, train_files, options: TrainerOptions, guard) -> Table:
  """The spec, the train sample and what was found on the way (the label's checks, dates, list
  columns, moments): the tabular setup's reading, which judge_leakage reads too."""
  schema = data_spec.read_schema(fn_args.schema_path)
  label_key = options.label_key
  label = next((f for f in schema.feature if f.name == label_key), None)
  label_type = label.type if label is not None else None
  numbers = label_type in (schema_pb2.INT, schema_pb2.FLOAT)  # every value read: classes or not
  counts = (
    shards.int_label_counts(
      _both_splits(fn_args),
      label_key,
      guard,
      tf.int64 if label_type == schema_pb2.INT else tf.float32,
    )
    if numbers and options.label_threshold is None and options.task != trainer_options.REGRESSION
    else {}
  )
  task = data_spec.resolved_task(options, label_type, counts)
  if task == trainer_options.CLASSIFICATION and counts:
    label_checks.check_classes(label_key, counts)
  names, spellings = labels.one_spelling(  # class names: from the train split, as the text
    shards.label_counts(train_files, label_key, guard)  # vocabulary is; 'Yes ' is 'yes'
    if label_type == schema_pb2.BYTES
    else {}
  )
  ids = data_spec.id_columns(data_spec.examples_root(fn_args.train_files[0]))
  try:
    spec = data_spec.tabular_spec(schema, options, sorted(counts), names, ids, task)
    spec = dataclasses.replace(spec, label_spellings={n: list(s) for n, s in spellings.items()})
  except ValueError as e:
    raise UnusableData(str(e)) from None
  figures = {}
  if spec.regression:
    spec, figures = label_checks.standardized(spec, fn_args.train_files, guard)
  elif options.min_eval_class_examples:  # a pass over the label column of both splits
    counted = [
      tabular_input.class_counts(f, spec, guard) for f in (train_files, fn_args.eval_files)
    ]
    hint = labels.regress_hint(label_key, counts) if options.label_threshold is None else ''
    label_checks.check_eval_classes(
      f'--label {label_key}', spec.class_names, *counted, options, hint
    )
  logging.info(
    'Tabular input: %d numeric, %d categorical columns, label %s (%s), ids %s left out',
    len(spec.numeric),
    len(spec.categorical),
    label_key,
    f'regression, standardized about {spec.label_mean:g} by {spec.label_std:g}'
    if spec.regression
    else f'{spec.num_classes} classes',
    ids,
  )
  eval_files = shards.shard_files(fn_args.eval_files)
  present, lists = _sample_columns(shards.readable_files(fn_args.train_files, guard), spec)
  where = f'the first {NUMERIC_SAMPLE_ROWS:,} train rows'
  spec, present, dates_line = date_features.read_sample(spec, present, options.date_order, where)
  if lists:
    _check_list_lengths(list(train_files) + eval_files, spec, lists, guard)
    logging.info('List columns, fed whole: %s', list_line(lists))
  spec = dataclasses.replace(  # of the values present: a missing value is fed the mean
    spec,
    list_lengths=lists,
    numeric_mean={key: _moment(present, key, np.mean, lists.get(key)) for key in spec.numeric},
    numeric_variance={key: _moment(present, key, np.var, lists.get(key)) for key in spec.numeric},
  )
  graph = fn_args.transform_graph_path or fn_args.transform_output  # the Tuner: the first only
  if options.tabular_stats == trainer_options.TRANSFORM and graph:
    spec = tabular_stats.from_transform(spec, graph, fn_args.train_files, guard)
  sample = tabular_input.tabular_dataset(
    fn_args.train_files, spec, NUMERIC_SAMPLE_ROWS, False, guard
  )
  features, sample_labels = next(iter(sample))
  _log_non_finite(present, [key for key in spec.numeric if key not in spec.date_inputs])
  return Table(spec, features, sample_labels, eval_files, ids, spellings, figures, dates_line)


def judge_leakage(fn_args: FnArgs, table: Table, options: TrainerOptions, guard) -> tuple:
  """(single-feature scores, the note of columns not judged) of the leakage rules
  (trainer/leakage.py) on the table's samples; UnusableData names a column that alone gives
  the label (unless --allow-feature). The project's models and a module file's raw columns."""
  spec, sample_labels = table.spec, table.sample_labels
  leakage_sample.check_one_to_one(
    fn_args.train_files, fn_args.eval_files, spec, options.allowed_features, guard
  )
  scores = leakage_sample.single_feature_scores(
    table.features, sample_labels, table.eval_files, spec, guard
  )
  judged = (scores[0], sample_labels.numpy(), scores[1])
  leakage.check(*judged, options.label_key, options.allowed_features, spec.regression)
  note = leakage.unjudged(*judged, options.allowed_features, spec.regression)
  if note:
    logging.warning('Not judged as leakage: %s', note)
  return scores[0], note


def _tabular_setup(
  fn_args: FnArgs, train_files, options: TrainerOptions, batch_size, guard
) -> Setup:
  table = read_table(fn_args, train_files, options, guard)
  scores, note = judge_leakage(fn_args, table, options, guard)
  spec, eval_files = table.spec, table.eval_files
  serialized = sum(tf.io.gfile.stat(path).length for path in train_files + eval_files)
  cache = _cache_decision(options, input_cache.tabular_bytes(serialized))
  train = tabular_input.tabular_dataset(train_files, spec, batch_size, True, guard, cache.used)
  evaluation = tabular_input.tabular_dataset(eval_files, spec, batch_size, False, guard, cache.used)
  hint = 'a larger --batch-size (tabular steps are short; per-batch overhead dominates)'
  return Setup(
    spec,
    train,
    evaluation,
    signatures.tabular_signatures,
    hint,
    spec.class_names,
    cache,
    table.ids,
    single_feature_scores=scores,
    label_spellings=table.spellings,
    dates=table.dates_line,
    leakage_note=note,
    label_figures=table.figures,
  )


def _sample_columns(train_files: List[str], spec) -> Tuple[dict, Dict[str, int]]:
  """({column: its values in the first NUMERIC_SAMPLE_ROWS train rows, ragged} ({} for none),
  {numeric column: N} of those holding a list of N > 1 values in every row that has them
  (TFRecords: 64 pixels): the model takes them whole). UnusableData for a column whose rows hold
  lists of different lengths (a value or two), a list of text values, or a list in the label."""
  batch = next(iter(shards.serialized_batches(train_files, NUMERIC_SAMPLE_ROWS, False)), None)
  if batch is None:
    return {}, {}
  parsed = tf.io.parse_example(batch, spec.parse_spec())
  lists = {}
  for key in sorted(parsed):
    lengths = parsed[key].row_lengths().numpy()
    held = np.unique(lengths[lengths > 0])
    if held.max(initial=0) <= 1:
      continue
    if len(held) == 1 and key in spec.numeric:
      lists[key] = int(held[0])
      continue
    shown = f'{held.min()}–{held.max()}' if len(held) > 1 else held[0]
    why = (
      'a label is one value a row'
      if key == spec.label_key
      else _AS_LONG
      if len(held) > 1
      else 'the tabular model takes lists of numbers only: write one column per value'
    )
    raise UnusableData(
      f"column '{key}' holds a list of {shown} values a row (the first {len(lengths):,} train "
      f'rows); {why}'
    )
  return parsed, lists


def _check_list_lengths(files: List[str], spec, lists: Dict[str, int], guard) -> None:
  """UnusableData for a list column some row of train or eval past the sample holds with
  another number of values than the sample's N: it would be cut to N or filled with means."""
  counts = shards.row_length_counts(files, {key: spec.parse_spec()[key] for key in lists}, guard)
  for key, length in sorted(lists.items()):
    other = {held: rows for held, rows in counts[key].items() if held not in (0, length)}
    if other:
      seen = ', '.join(f'{held} in {rows:,}' for held, rows in sorted(other.items())[:5])
      more = ', …' if len(other) > 5 else ''
      raise UnusableData(
        f"column '{key}' holds {length} values in {counts[key].get(length, 0):,} of the "
        f'{sum(counts[key].values()):,} train and eval rows, and another number in '
        f'{sum(other.values()):,} ({seen}{more}); {_AS_LONG}'
      )


def list_line(lists: Dict[str, int]) -> str:
  """'pixels (64 values)': the list columns fed whole, for the log and the summary."""
  return ', '.join(f'{key} ({length} values)' for key, length in sorted(lists.items()))


def _moment(parsed: dict, key: str, moment, length: Optional[int] = None):
  """`moment` (np.mean, np.var) of a column's finite values present in the sample (inf and NaN
  are missing); 0 when none is. A list column of `length` values: one per
  position, of the rows holding all of them."""
  if key not in parsed:
    return [0.0] * length if length else 0.0
  if length:
    rows = parsed[key].to_tensor().numpy()[parsed[key].row_lengths().numpy() == length]
    return [_finite_moment(rows[:, i], moment) for i in range(length)]
  return _finite_moment(parsed[key].flat_values.numpy(), moment)


def _finite_moment(values: np.ndarray, moment) -> float:
  values = values.astype(np.float64)
  values = values[np.isfinite(values)]  # inf and NaN: missing (_log_non_finite)
  return float(moment(values)) if len(values) else 0.0


def _log_non_finite(present: dict, numeric: List[str]) -> None:
  """Logs the numeric columns holding inf or NaN in the train sample (rows of `present`): the
  input reads them as missing (tabular_input.feature_or_default), as the CSV reader reads `inf`
  and `nan` cells (docs/data.md)."""
  found = {
    key: int(np.sum(~np.isfinite(present[key].flat_values.numpy())))
    for key in numeric
    if key in present
  }
  found = {key: bad for key, bad in found.items() if bad}
  if found:
    rows = int(present[next(iter(found))].nrows())
    logging.warning(
      'inf or NaN read as missing (the column mean) in the first %s train rows: %s',
      f'{rows:,}',
      ', '.join(f'{key} {bad}' for key, bad in sorted(found.items())),
    )


def _sequence_setup(
  fn_args: FnArgs, train_files, options: TrainerOptions, batch_size, guard
) -> Setup:
  schema = data_spec.read_schema(fn_args.schema_path)
  max_label = shards.max_int_label(_both_splits(fn_args), options.label_key, guard)
  spec = data_spec.sequence_spec(
    data_spec.examples_root(fn_args.train_files[0]), schema, options, max_label
  )
  logging.info(
    'Sequence input: feature list %s (%s%s), label %s (%d classes)',
    spec.tokens_key,
    spec.token_dtype.name,
    ', hashed' if spec.hashed else '',
    spec.label_key,
    spec.num_classes,
  )
  train = sequence_input.sequence_dataset(train_files, spec, batch_size, True, guard)
  evaluation = sequence_input.sequence_dataset(fn_args.eval_files, spec, batch_size, False, guard)
  hint = 'a larger --batch-size, or more CPU cores for the Trainer'
  cache = input_cache.not_cached(options.input_cache, 'sequence windows are cut anew every epoch')
  return Setup(spec, train, evaluation, signatures.sequence_signatures, hint, spec.labels, cache)


def _cache_decision(options: TrainerOptions, decoded_bytes: int) -> input_cache.CacheDecision:
  """Whether to hold the decoded input in memory: never with the tf.data service, whose
  workers read and decode."""
  if options.input_service:
    return input_cache.not_cached(options.input_cache, 'the tf.data service decodes')
  return input_cache.decide(options.input_cache, decoded_bytes)


_SETUP = {
  trainer_options.IMAGE: _image_setup,
  trainer_options.TABULAR: _tabular_setup,
  trainer_options.SEQUENCE: _sequence_setup,
}


@dataclasses.dataclass
class PreparedInput:
  """One data kind's input as this worker reads it (prepare_input)."""

  setup: Setup
  guard: shards.ShardGuard  # what it found in the shards: damage, record counts
  batch_size: int  # the global batch, capped by the train split
  batch_capped: Optional[dict]  # {'asked', 'train_examples'} when it was capped, else None
  damage: dict  # input_damage(): what the splits lost against the records recorded


def prepare_input(fn_args: FnArgs, options: TrainerOptions, plan, scratch: str) -> PreparedInput:
  """The input of one data kind, read by this worker, built in plan.strategy's scope (the
  Trainer's and the Tuner's)."""
  guard = shards.ShardGuard(os.path.join(scratch, 'salvaged'))
  damage_found = input_damage(fn_args, options, guard)
  train_files = shards.shard_files(fn_args.train_files)
  if not options.input_service:  # with the service, every trainer reads the whole split
    train_files = plan.worker_shards(train_files)
  batch_size, capped = _capped_batch(plan.global_batch(options.batch_size), guard, train_files)
  if options.data_kind == trainer_options.TABULAR:
    _check_feature_columns(fn_args, options.label_key)
  if not shards.record_count(shards.shard_files(fn_args.eval_files), guard):
    raise UnusableData(
      'the eval split holds no example: the data has too few distinct examples to split (copies '
      "of one example share a split; the summary's duplicates line counts them): add examples"
    )
  with plan.strategy.scope():
    ready = _SETUP[options.data_kind](fn_args, train_files, options, batch_size, guard)
  return PreparedInput(ready, guard, batch_size, capped, damage_found)


def input_damage(fn_args: FnArgs, options: TrainerOptions, guard) -> dict:
  """What the train and eval splits lost, against the records the ExampleGen recorded
  (records.damage.totals); raises records.damage.DamagedShards above --max-damaged-percent,
  whether or not ShardCheck ran in this run (it may come from TFX's cache, from before the damage)."""
  files = shards.shard_files(fn_args.train_files) + shards.shard_files(fn_args.eval_files)
  guard(files)  # every shard of both splits (a worker of several reads only its own)
  scanned = set(files)
  totals = damage.totals([r for r in guard.reports if r.path in scanned], options.recorded_counts)
  where = os.path.dirname(os.path.dirname(files[0])) if files else str(fn_args.train_files)
  damage.judge(totals, options.max_damaged_percent, where, 'training stopped')
  return totals


def _check_feature_columns(fn_args: FnArgs, label_key: str) -> None:
  """A table of a label and row ids alone has nothing to learn from (and, every row's content
  being the same, no eval split either): one line that says so."""
  schema = data_spec.read_schema(fn_args.schema_path)
  ids = data_spec.id_columns(data_spec.examples_root(fn_args.train_files[0]))
  if all(f.name == label_key or f.name in ids for f in schema.feature):
    left_out = f' (row ids, left out of the inputs: {", ".join(ids)})' if ids else ''
    raise UnusableData(
      f'--label {label_key}: no column besides the label to learn from{left_out}; a table needs '
      'at least one feature column'
    )


def _capped_batch(batch_size: int, guard, train_files: List[str]) -> Tuple[int, Optional[dict]]:
  """A batch no bigger than the train split (whose records the guard counts as it scans): a
  bigger one only costs memory (--batch-size 100000 on 29 examples peaked at 16 GB)."""
  guard(train_files)
  records = sum(r.good for r in guard.reports if r.path in set(train_files))
  if 0 < records < batch_size:
    logging.warning("batch size %d capped at %d, the train split's size", batch_size, records)
    return records, {'asked': batch_size, 'train_examples': records}
  return batch_size, None
