"""`--tabular-stats transform`: a table's vocabularies and moments from a full tf.Transform pass
(TFX's Transform on the run's Beam runner) instead of the Trainer's 4,096-row train sample and
hashed categories, fed to the project's model contract unchanged (docs/models.md).

`preprocessing_fn` is TFX's Transform's (components/module_transform.stats_transform): for every
string column, its vocabulary (the VOCABULARY_TOP_K most frequent values) with OOV_BUCKETS
out-of-vocabulary buckets; for every number column, the mean and variance of its finite values
over the whole train split. `apply` reads them back in the Trainer into the TabularSpec:
`numeric_mean` / `numeric_variance`, and `vocabularies`, by which tabular_input.model_columns
gives a category its vocabulary index (an unknown one: len(vocabulary) + its FarmHash bucket,
as tf.Transform's own lookup does) instead of a hashed id.
"""

import dataclasses
import hashlib
import logging
import math
import re
from typing import Dict, List, Optional

import numpy as np
import tensorflow as tf

from trainer import shards

VOCABULARY_TOP_K = 1000  # the most frequent values of a column kept (the rest: OOV buckets)
OOV_BUCKETS = 8  # out-of-vocabulary values hashed into these ids, after the vocabulary's


def output_name(column: str, what: str) -> str:
  """A transformed feature's (and vocabulary file's) name for `column` (the report lists them):
  `<column>__<what>`, or a digest of a column name that is not plain letters, digits and `_`."""
  if re.fullmatch(r'[A-Za-z0-9_]{1,100}', column):
    return f'{column}__{what}'
  return f'{what}_{hashlib.sha1(column.encode()).hexdigest()[:16]}'


def _rows(tensor) -> tf.RaggedTensor:
  """A parsed input (dense [B, ...], SparseTensor or RaggedTensor) as [B, values]."""
  if isinstance(tensor, tf.SparseTensor):
    return tf.RaggedTensor.from_sparse(tensor)
  if isinstance(tensor, tf.RaggedTensor):
    return tensor if tensor.ragged_rank == 1 else tensor.merge_dims(1, -1)
  return tf.RaggedTensor.from_tensor(tf.reshape(tensor, [tf.shape(tensor)[0], -1]))


def preprocessing_fn(inputs: dict, custom_config: Optional[dict] = None) -> dict:
  """Transform's analysis: vocabulary + OOV ids of string columns, mean and variance of number
  columns' finite values (custom_config's label_key left out). Outputs are per row (what tf.Transform
  needs); the Trainer reads the vocabularies' files and one row's moments."""
  import tensorflow_transform as tft

  label = (custom_config or {}).get('label_key')
  outputs = {}
  for column, tensor in sorted(inputs.items()):
    if column == label:
      continue
    rows = _rows(tensor)
    if rows.dtype == tf.string:
      first = rows.to_tensor(default_value='', shape=[None, 1])[:, 0]
      outputs[output_name(column, 'id')] = tft.compute_and_apply_vocabulary(
        first,
        top_k=VOCABULARY_TOP_K,
        num_oov_buckets=OOV_BUCKETS,
        vocab_filename=output_name(column, 'vocabulary'),
      )
      continue
    values = tf.cast(rows.flat_values, tf.float32)
    finite = tf.boolean_mask(values, tf.math.is_finite(values))
    ones = tf.ones_like(rows.row_lengths(), tf.float32)
    outputs[output_name(column, 'mean')] = ones * tft.mean(finite)
    outputs[output_name(column, 'var')] = ones * tft.var(finite)
  return outputs


def read(transform_output: str, train_record: bytes, spec) -> dict:
  """{'mean': {column: float}, 'variance': {...}, 'vocabularies': {column: [values]}} of spec's
  numeric (not date, not list) and categorical columns, from Transform's output: the moments by
  transforming one raw train record, the vocabularies from their files."""
  import tensorflow_transform as tft

  found = tft.TFTransformOutput(transform_output)
  raw = tf.io.parse_example(tf.constant([train_record]), found.raw_feature_spec())
  outputs = found.transform_raw_features(raw, drop_unused_features=True)
  moments: Dict[str, Dict[str, float]] = {'mean': {}, 'variance': {}}
  for column in spec.numeric:
    if column in spec.list_lengths or column in spec.date_inputs:
      continue
    mean, var = (outputs.get(output_name(column, w)) for w in ('mean', 'var'))
    if mean is None or not math.isfinite(float(mean[0])):
      continue  # no finite value in the whole split: the sample's 0 stands
    moments['mean'][column] = float(mean[0])
    moments['variance'][column] = float(var[0])
  vocabularies = {}
  for column in spec.categorical:
    path = found.vocabulary_file_by_name(output_name(column, 'vocabulary'))
    with tf.io.gfile.GFile(path, 'rb') as f:
      vocabularies[column] = [line.decode('utf-8') for line in f.read().split(b'\n')[:-1]]
  return dict(moments, vocabularies=vocabularies)


def apply(spec, transform_output: str, train_record: bytes):
  """spec with Transform's moments (the sample's kept for list and date columns) and
  vocabularies, hash_bins the widest vocabulary's ids (values + OOV_BUCKETS)."""
  found = read(transform_output, train_record, spec)
  vocabularies = found['vocabularies']
  widest = max((len(v) for v in vocabularies.values()), default=0) + OOV_BUCKETS
  logging.info(
    'Tabular statistics from Transform: moments of %d columns over the train split, '
    'vocabularies %s (+%d OOV buckets)',
    len(found['mean']),
    {column: len(values) for column, values in vocabularies.items()},
    OOV_BUCKETS,
  )
  return dataclasses.replace(
    spec,
    numeric_mean={**spec.numeric_mean, **found['mean']},
    numeric_variance={**spec.numeric_variance, **found['variance']},
    vocabularies=vocabularies,
    hash_bins=widest if vocabularies else spec.hash_bins,
  )


def vocabulary_ids(values: tf.Tensor, vocabulary: List[str]) -> tf.Tensor:
  """Strings [B] → int64 ids: a value's index in `vocabulary`, else len(vocabulary) + its
  FarmHash bucket of OOV_BUCKETS (tf.Transform's apply_vocabulary's ids). No lookup table (none
  to track in the SavedModel): the vocabulary's 62-bit hashes, sorted, searched."""
  big = 2**62
  with tf.init_scope():  # the vocabulary's hashes as constants, also while a signature traces
    hashes = tf.strings.to_hash_bucket_fast(tf.constant(vocabulary or [''], tf.string), big)
    hashes = hashes.numpy()[: len(vocabulary)]
  order = np.argsort(hashes, kind='stable')
  oov = len(vocabulary) + tf.strings.to_hash_bucket_fast(values, OOV_BUCKETS)
  if not vocabulary:
    return oov
  known = tf.constant(hashes[order], tf.int64)
  wanted = tf.strings.to_hash_bucket_fast(values, big)
  at = tf.minimum(tf.searchsorted(known, wanted, out_type=tf.int64), len(vocabulary) - 1)
  found = tf.equal(tf.gather(known, at), wanted)
  return tf.where(found, tf.gather(tf.constant(order, tf.int64), at), oov)


def from_transform(spec, transform_output: str, train_files, guard):
  """apply() with the train split's first record (Transform's raw input)."""
  batch = next(iter(shards.serialized_batches(shards.readable_files(train_files, guard), 1, False)))
  return apply(spec, transform_output, batch[0].numpy())
