"""Tabular tf.Example shards → (feature dict, class ids or standardized numbers): parsed a few
batches at a time, labels thresholded, named, standardized or defaulted, categories hashed for
the model."""

import dataclasses
from typing import Dict, List, Optional, Union

import numpy as np
import tensorflow as tf

from contracts import labels
from trainer import date_features, shards, tabular_stats
from trainer.data_spec import TabularSpec

AUTOTUNE = tf.data.AUTOTUNE


def tabular_label(label: tf.Tensor, spec: TabularSpec) -> tf.Tensor:
  """What the model learns: regression: the label standardized, float32 [batch] ((label -
  spec.label_mean) / spec.label_std); classes: the class id: a thresholded label, a class name's index in
  spec.label_names, whatever its case and spaces, or any of its spellings (labels.spelling_key:
  -1 for a name the train split did not have), an integer label's index in
  spec.label_values (-1 for a value the splits did not have), or the int label itself."""
  if spec.regression:
    number = tf.cast(label, tf.float64)
    return tf.cast((number - spec.label_mean) / spec.label_std, tf.float32)
  if spec.label_threshold is not None:
    number = tf.cast(label, tf.float64) if label.dtype.is_integer else label
    return tf.cast(number > spec.label_threshold, tf.int64)
  classes, ids = spec.label_values, list(range(len(spec.label_values)))
  if spec.label_names:  # names compared as labels.folded_key does: 'Yes\xa0' is 'yes'
    label = tf.strings.regex_replace(label, labels.SPACES, ' ')
    label = tf.strings.lower(tf.strings.strip(label), encoding='utf-8')
    keys = {
      labels.folded_key(spelling): i  # TensorFlow has no NFKC: every spelling of a class
      for i, name in enumerate(spec.label_names)
      for spelling in (name, *spec.label_spellings.get(name, ()))
    }
    classes, ids = list(keys), list(keys.values())
  if classes:
    # A comparison with every class: no lookup table to track in the SavedModel, and classes
    # are few (a [batch, classes] boolean matrix).
    matches = tf.equal(label[:, None], tf.constant(classes, label.dtype)[None, :])
    found = tf.gather(tf.constant(ids, tf.int64), tf.argmax(tf.cast(matches, tf.int64), axis=1))
    return tf.where(tf.reduce_any(matches, axis=1), found, tf.constant(-1, tf.int64))
  return label


def label_values(file_patterns, spec: TabularSpec, guard=None) -> np.ndarray:
  """Every value of a regression label over a split, float64, rows without a value taking
  --label-default (trainer/label_figures.py's figures are taken of them)."""
  plain = dataclasses.replace(
    spec, numeric=[], categorical=[], integer=[], label_mean=0.0, label_std=1.0
  )
  files = shards.readable_files(file_patterns, guard)
  labels_read = shards.serialized_batches(files, 4096, training=False).map(
    lambda s: tf.cast(parse_tabular(s, plain)[1], tf.float64)
  )
  chunks = [batch.numpy() for batch in labels_read]
  return np.concatenate(chunks) if chunks else np.zeros([0], np.float64)


def class_counts(file_patterns, spec: TabularSpec, guard=None) -> np.ndarray:
  """Records of each class id of a split ([num_classes]; a label the classes lack is not
  counted), the label column alone parsed (one vectorised pass)."""
  plain = dataclasses.replace(spec, numeric=[], categorical=[], integer=[], list_lengths={})
  files = shards.readable_files(file_patterns, guard)
  counts = np.zeros(spec.num_classes, np.int64)
  for batch in shards.serialized_batches(files, 4096, training=False):
    ids = parse_tabular(batch, plain)[1].numpy()
    counts += np.bincount(ids[ids >= 0], minlength=spec.num_classes)[: spec.num_classes]
  return counts


def first_or_default(ragged: tf.RaggedTensor, default=None) -> tf.Tensor:
  """[batch, 0 or 1 values] → [batch], padding empty rows with `default` (None: 0 / '')."""
  if default is None:
    default = '' if ragged.dtype == tf.string else tf.zeros([], ragged.dtype)
  return ragged.to_tensor(default_value=default, shape=[None, 1])[:, 0]


def missing_value(key: str, dtype: tf.dtypes.DType, spec: TabularSpec):
  """What a row without a value in column `key` is fed: a number, the train sample's mean of
  the values present (0 once standardized: a missing latitude is not 800 deviations from
  Chicago's); a list column, its mean at each position [N] (0 before the means are known); a
  category, '' (None: first_or_default's)."""
  if key in spec.list_lengths:
    length = spec.list_lengths[key]
    return tf.constant(spec.numeric_mean.get(key, [0.0] * length), dtype)
  if key not in spec.numeric_mean:
    return None
  mean = spec.numeric_mean[key]
  return tf.constant(round(mean) if dtype.is_integer else mean, dtype)


def list_or_default(ragged: tf.RaggedTensor, default: tf.Tensor) -> tf.Tensor:
  """[batch, N values] → float32 [batch, N] (N: len(default)): a position a row lacks (a row
  without the column, or past the train sample one holding fewer values) or holds NaN or inf at
  (missing, as in feature_or_default) takes `default`'s value there; values past N are left out."""
  length = default.shape[0]
  values = tf.cast(ragged.to_tensor(shape=[None, length]), tf.float32)
  held = (
    tf.range(length, dtype=tf.int64)[None, :] < tf.cast(ragged.row_lengths(), tf.int64)[:, None]
  )
  return tf.where(held & tf.math.is_finite(values), values, tf.cast(default, tf.float32)[None, :])


def feature_or_default(ragged: tf.RaggedTensor, default=None) -> tf.Tensor:
  """A feature column as [batch] (first_or_default); a float value that is NaN or inf takes
  `default` too: a non-finite number is missing, as the CSV reader reads `inf` and `nan` cells
  (docs/data.md), in training and in the serving signatures alike."""
  value = first_or_default(ragged, default)
  if not value.dtype.is_floating:
    return value
  default = tf.zeros([], value.dtype) if default is None else default
  return tf.where(tf.math.is_finite(value), value, default)


def label_or_default(ragged: tf.RaggedTensor, spec: TabularSpec) -> tf.Tensor:
  """The label column as [batch]: rows without a value (or with NaN) take --label-default."""
  if not spec.label_default:
    return first_or_default(ragged)
  if ragged.dtype == tf.string:
    return first_or_default(ragged, spec.label_default)
  default = tf.constant(float(spec.label_default), tf.float64)  # exact for class ids and floats
  label = first_or_default(ragged, tf.cast(default, ragged.dtype))
  if ragged.dtype.is_floating:
    return tf.where(tf.math.is_nan(label), tf.cast(default, label.dtype), label)
  return label


def parse_tabular(serialized: tf.Tensor, spec: TabularSpec, with_label: bool = True):
  """A batch of serialized rows → the model's columns (model_columns) (+ label).

  A missing or empty value, or a number that is NaN or inf, becomes the train sample's mean
  (numeric; 0 before the means are known) or '' (categorical, before hashing); a list column
  (spec.list_lengths) is float32 [batch, N], its missing positions the mean at that position.
  """
  parse_spec = spec.parse_spec()
  if not with_label:
    del parse_spec[spec.label_key]
  parsed = tf.io.parse_example(serialized, parse_spec)
  label = label_or_default(parsed.pop(spec.label_key), spec) if with_label else None
  written = {key: first_or_default(parsed.pop(key)) for key in spec.dates}
  parsed = {
    key: list_or_default(value, missing_value(key, tf.float32, spec))
    if key in spec.list_lengths
    else feature_or_default(value, missing_value(key, value.dtype, spec))
    for key, value in parsed.items()
  }
  parsed.update(date_inputs(written, spec))
  features = model_columns(parsed, spec)
  return (features, tabular_label(label, spec)) if with_label else features


def date_inputs(written: Dict[str, tf.Tensor], spec: TabularSpec) -> Dict[str, tf.Tensor]:
  """Date columns' strings [B] → their features float32 [B] (trainer/date_features.py), a cell
  that is no date fed as a missing number is (the train sample's mean)."""
  return {
    key: feature_or_default(
      tf.RaggedTensor.from_tensor(value[:, None]), missing_value(key, tf.float32, spec)
    )
    for key, value in date_features.add_features(written, spec).items()
  }


def model_columns(columns: Dict[str, tf.Tensor], spec: TabularSpec) -> Dict[str, tf.Tensor]:
  """Column values as the model takes them: numbers as float32 ([B], a list column [B, N]),
  categories as int64 ids in [0, spec.hash_bins) (FarmHash of the string, as
  keras.layers.Hashing, or with spec.vocabularies its vocabulary id), so that the model's step holds no string op and XLA can compile it
  (TPUs need that)."""
  return {
    key: tabular_stats.vocabulary_ids(value, spec.vocabularies[key])
    if key in spec.vocabularies
    else tf.strings.to_hash_bucket_fast(value, spec.hash_bins)
    if key in spec.categorical
    else tf.cast(value, tf.float32)
    for key, value in columns.items()
  }


# Tabular rows are parsed and densified TABULAR_BATCHES_PER_PARSE batches at a time, then cut
# back into batches (`rebatch`, the same records in the same order): parsing costs a few ops per
# column whatever the batch size, and small rows make that overhead the bottleneck. Taxi rows
# (0.5 KB, 17 columns), batch 64, 2 cores: 244k rec/s (0.83x of read -> batch -> parse) against
# 200k (0.68x) parsing every batch alone; 8 or 16 batches at once gave no more (240k, 248k).
TABULAR_BATCHES_PER_PARSE = 4


def tabular_dataset(
  file_patterns: Union[str, List[str]],
  spec: TabularSpec,
  batch_size: int,
  training: bool,
  guard: Optional[shards.ShardGuard] = None,
  cache: bool = False,
) -> tf.data.Dataset:
  """(feature dict, int64 labels [B]) from tabular tf.Example shards (a shards.DatasetBuilder).

  cache: parse every record once, in the first (shuffled) pass, and serve later passes from
  memory as whole batches in a new order every pass: the rows of a batch stay together (one
  parse per batch is what makes them fast), the order of the batches changes (docs/benchmarks.md:
  Input pipeline, the cache).
  """
  parse = lambda serialized: parse_tabular(serialized, spec)
  files = shards.readable_files(file_patterns, guard)
  dataset = (
    shards.serialized_batches(
      files, batch_size * TABULAR_BATCHES_PER_PARSE, training, repeat=training and not cache
    )
    .map(parse, num_parallel_calls=AUTOTUNE, deterministic=shards.in_order(training))
    .rebatch(batch_size, drop_remainder=training)
  )
  if cache:
    dataset = dataset.cache()
    if training:
      batches = max(1, shards.record_count(file_patterns, guard) // batch_size)
      dataset = dataset.shuffle(batches, reshuffle_each_iteration=True).repeat()
  return dataset.prefetch(AUTOTUNE)
