"""What the Trainer needs to know about its data, gathered before the graph is built."""

import dataclasses
import json
import os
from typing import Dict, List, Optional

import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2

from contracts import artifacts, dates, labels, serving, text_record
from contracts.trainer_options import AUTO, CLASSIFICATION, NO_WEIGHTS, REGRESSION, TrainerOptions

# Imported SequenceExamples' token values are hashed into HASH_BUCKETS ids from FIRST_ID on.
HASH_BUCKETS = 20_000
FIRST_ID = 2  # 0: padding, 1: unknown


@dataclasses.dataclass(frozen=True)
class ImageSpec:
  """The model's input: every image is decoded and brought to height×width×channels."""

  height: int
  width: int
  channels: int
  labels: List[str]
  encoding: str
  uniform: bool  # every stored image already has the model's input shape
  weights: str = NO_WEIGHTS  # --weights: IMAGENET, NO_WEIGHTS or a local weights file

  @property
  def num_classes(self) -> int:
    return len(self.labels)


@dataclasses.dataclass(frozen=True)
class TabularSpec:
  """Columns of a tabular data set, split by how the model treats them."""

  label_key: str
  label_threshold: Optional[float]  # set: the label becomes the binary (label > threshold)
  num_classes: int
  numeric: List[str]  # INT and FLOAT columns, all fed to the model as float32
  categorical: List[str]  # BYTES columns, hashed
  integer: List[str] = dataclasses.field(default_factory=list)  # the INT ones among numeric
  label_names: List[str] = dataclasses.field(default_factory=list)  # set: a string label's
  # class names, sorted (id = index; from the train split)
  label_default: str = ''  # the label of rows without one (--label-default; '': 0 / '')
  hash_bins: int = 64  # categorical values are fed as ids in [0, hash_bins) (hashed strings)
  vocabularies: Dict[str, List[str]] = dataclasses.field(default_factory=dict)  # set
  # (--tabular-stats transform): a category's id is its index in its column's vocabulary, an
  # unknown one's past it (trainer/tabular_stats.vocabulary_ids), all below hash_bins
  numeric_mean: Dict[str, float] = dataclasses.field(default_factory=dict)  # the train split's,
  numeric_variance: Dict[str, float] = dataclasses.field(default_factory=dict)  # per column (a
  # list column: a list, one per position)
  list_lengths: Dict[str, int] = dataclasses.field(default_factory=dict)  # the numeric columns
  # holding N > 1 values in every train row (TFRecords: 64 pixels): {column: N}, fed [B, N]
  label_values: List[int] = dataclasses.field(default_factory=list)  # set: an integer label's
  # values present, sorted (class id = index), never 0..the largest
  integer_label: bool = False  # the label column holds integers (thresholded: cast first)
  float_label: bool = False  # classes written as decimals (`0.0`/`1.0`): label_values are floats
  task: str = CLASSIFICATION  # or REGRESSION: the model predicts one number, the label
  # standardized with the train split's mean and deviation (label_mean, label_std): the Trainer
  # feeds (label - label_mean) / label_std, the signatures give back prediction * std + mean
  # (a heavy-tailed label: its median and IQR / 1.349, trainer/label_figures.standardization)
  label_mean: float = 0.0
  label_std: float = 1.0
  dates: Dict[str, str] = dataclasses.field(default_factory=dict)  # string columns read as
  # dates: {column: 'form order'} (trainer/date_features.py); their features, '<column>.<feature>',
  # are among numeric, computed from the string in the graph
  label_spellings: Dict[str, List[str]] = dataclasses.field(default_factory=dict)  # a class
  # name's other spellings in the train split (labels.one_spelling's merges: 'oui\xa0', 'Oui')

  @property
  def regression(self) -> bool:
    return self.task == REGRESSION

  @property
  def class_names(self) -> List[str]:
    """What each class id stands for: a name, an integer label's value, or the id itself (none
    for regression)."""
    if self.regression:
      return []
    return (
      self.label_names
      or [str(int(v)) if self.float_label else str(v) for v in self.label_values]
      or [str(i) for i in range(self.num_classes)]
    )

  @property
  def date_inputs(self) -> List[str]:
    """The numeric inputs computed from date columns (none parsed from a record)."""
    split = [(key, key.rpartition('.')) for key in self.numeric]
    return [key for key, (name, _, what) in split if name in self.dates and what in dates.FEATURES]

  def input_name(self, column: str) -> str:
    """A Keras input name for `column` (Keras and TensorFlow refuse some characters)."""
    return serving.column_input(column)

  def parse_spec(self) -> Dict[str, tf.io.RaggedFeature]:
    """Every column ragged: CSV rows may hold a column with no value at all."""
    spec = {
      key: tf.io.RaggedFeature(tf.int64 if key in self.integer else tf.float32)
      for key in self.numeric
      if key not in self.date_inputs
    }
    spec.update({key: tf.io.RaggedFeature(tf.string) for key in [*self.categorical, *self.dates]})
    floats = self.label_threshold is not None or self.regression or self.float_label
    label_dtype = tf.float32 if floats else tf.int64
    if self.label_names or self.integer_label:
      label_dtype = tf.string if self.label_names else tf.int64
    spec[self.label_key] = tf.io.RaggedFeature(label_dtype)
    return spec


@dataclasses.dataclass(frozen=True)
class SequenceSpec:
  """A SequenceExample data set: one token feature list and an int label in the context."""

  label_key: str
  tokens_key: str
  token_dtype: tf.dtypes.DType
  labels: List[str]
  vocabulary_size: int  # ids are < vocabulary_size (0: padding)
  hashed: bool  # stored values are hashed into ids (imported data, no vocabulary)
  vocabulary: str = ''  # text route: vocabulary.txt (line i: the word of id i)

  @property
  def num_classes(self) -> int:
    return len(self.labels)


def examples_root(file_pattern: str) -> str:
  """`<examples uri>/Split-train/*` → `<examples uri>`."""
  return os.path.dirname(os.path.dirname(file_pattern))


def image_spec(examples_uri: str, options: TrainerOptions) -> ImageSpec:
  """Reads image_meta.json beside the shards; the options may override size and channels."""
  with tf.io.gfile.GFile(os.path.join(examples_uri, artifacts.IMAGE_META_FILE)) as f:
    meta = json.load(f)
  stored_height, stored_width = meta['most_common_size']
  height = options.image_height or stored_height
  width = options.image_width or stored_width
  # Grayscale data stays one channel; anything with colour becomes RGB (alpha is dropped).
  channels = options.image_channels or (1 if meta['channels_seen'] == [1] else 3)
  uniform = (
    meta['uniform_size']
    and [stored_height, stored_width] == [height, width]
    and meta['channels_seen'] == [channels]
  )
  return ImageSpec(height, width, channels, meta['labels'], meta['encoding'], uniform)


def id_columns(examples_uri: str) -> List[str]:
  """The Examples' id columns (artifacts.ID_COLUMNS_FILE: given and detected; none without it)."""
  path = os.path.join(examples_uri, artifacts.ID_COLUMNS_FILE)
  if not tf.io.gfile.exists(path):
    return []
  with tf.io.gfile.GFile(path) as f:
    ids = json.load(f)
  return ids['given'] + ids['detected']


def tabular_spec(
  schema: schema_pb2.Schema,
  options: TrainerOptions,
  label_values=(),
  label_names: List[str] = (),
  ids: List[str] = (),
  task: str = CLASSIFICATION,
) -> TabularSpec:
  """Splits the schema's scalar features into numeric and categorical inputs, leaving out the
  id columns (`ids`); `task` REGRESSION: one number from an INT or FLOAT label (its mean and
  deviation set later, from the train split); classes: a string label takes its classes from
  `label_names`, an integer one from `label_values` (the values present) unless
  options.label_threshold is set; a float label needs one."""
  label_key = options.label_key
  numeric, categorical, integer, label_type = [], [], [], None
  for feature in schema.feature:
    if feature.name == label_key:
      label_type = feature.type
    elif feature.name in ids:
      continue
    elif feature.type in (schema_pb2.INT, schema_pb2.FLOAT):
      numeric.append(feature.name)
      if feature.type == schema_pb2.INT:
        integer.append(feature.name)
    elif feature.type == schema_pb2.BYTES:
      categorical.append(feature.name)
  if label_type is None:
    raise ValueError(f'label column {label_key!r} is not in the data')
  default = options.label_default
  columns = dict(numeric=numeric, categorical=categorical, integer=integer, label_default=default)
  threshold = options.label_threshold
  if task == REGRESSION:
    if label_type == schema_pb2.BYTES:
      raise ValueError(f'label {label_key!r} holds text: regression needs numbers')
    return TabularSpec(
      label_key, None, 1, integer_label=label_type == schema_pb2.INT, task=REGRESSION, **columns
    )
  if label_type == schema_pb2.FLOAT and threshold is None:  # integers written as decimals
    if not label_values or any(not float(v).is_integer() for v in label_values):
      raise ValueError(labels.float_label_message(label_key, 'the train split'))
    values = sorted(set(label_values) | ({float(default)} if default else set()))
    return TabularSpec(
      label_key, None, len(values), label_values=values, float_label=True, **columns
    )
  if label_type == schema_pb2.FLOAT:
    return TabularSpec(label_key, threshold, 2, **columns)
  if label_type == schema_pb2.BYTES:
    keys = {labels.spelling_key(name) for name in label_names}
    new_default = default and labels.spelling_key(default) not in keys
    names = sorted(set(label_names) | ({default} if new_default else set()))
    return TabularSpec(label_key, None, len(names), label_names=names, **columns)
  if threshold is not None:
    return TabularSpec(label_key, threshold, 2, integer_label=True, **columns)
  values = sorted(set(label_values) | ({int(default)} if default else set())) or [0]
  return TabularSpec(
    label_key, None, len(values), label_values=values, integer_label=True, **columns
  )


def resolved_task(options: TrainerOptions, label_type, counts) -> str:
  """The task: options.task, or when the command line left it AUTO, from every value of a
  number label ({value: records}) by the command line's one rule (labels.numeric_task)."""
  if options.task != AUTO:
    return options.task
  if options.label_threshold is None and label_type != schema_pb2.BYTES and counts:
    return labels.numeric_task(options.label_key, counts, 'the train and eval examples')[0]
  return CLASSIFICATION


def read_schema(path: str) -> schema_pb2.Schema:
  from tfx.utils import io_utils

  return io_utils.parse_pbtxt_file(path, schema_pb2.Schema())


def _lines(path: str) -> List[str]:
  with tf.io.gfile.GFile(path) as f:
    return f.read().split('\n')[:-1]


def sequence_spec(
  examples_uri: str, schema: schema_pb2.Schema, options: TrainerOptions, max_label: int
) -> SequenceSpec:
  """The text route's vocabulary and labels when they are there; else the schema's first
  feature list (or options.tokens_key), hashed, with labels 0..max_label."""
  vocabulary = os.path.join(examples_uri, artifacts.VOCABULARY_FILE)
  if tf.io.gfile.exists(vocabulary):
    return SequenceSpec(
      text_record.LABEL_KEY,
      text_record.TOKENS_KEY,
      tf.int64,
      _lines(os.path.join(examples_uri, artifacts.LABELS_FILE)),
      len(_lines(vocabulary)),
      hashed=False,
      vocabulary=vocabulary,
    )
  lists = next(
    (f.struct_domain.feature for f in schema.feature if f.name == artifacts.SEQUENCE_STRUCT), []
  )
  wanted = options.tokens_key
  chosen = next((f for f in lists if f.name == wanted or not wanted), None)
  if chosen is None:
    raise ValueError(
      f'no feature list {wanted!r} in the data'
      if wanted
      else 'the data has no feature lists (not SequenceExamples?)'
    )
  dtype = {schema_pb2.INT: tf.int64, schema_pb2.BYTES: tf.string}.get(chosen.type)
  if dtype is None:
    raise ValueError(f'feature list {chosen.name!r} holds floats, not tokens')
  return SequenceSpec(
    options.label_key,
    chosen.name,
    dtype,
    [str(i) for i in range(max_label + 1)],
    HASH_BUCKETS + FIRST_ID,
    hashed=True,
  )
