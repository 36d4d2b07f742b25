"""The Trainer's input pipeline for SequenceExamples (variable-length token sequences).

  shards → interleave → shuffle serialized records → window of 32 batches → one vectorised
  `parse_sequence_example` per window (ragged tokens) → sort the window by length bucket and cut
  it into batches that never cross a bucket, each padded only to its own longest sequence →
  shuffle batches (training) → prefetch.

- Parsing a batch in one call is what makes it fast: see `python -m bench.sequence_parsing`
  (figures in docs/benchmarks.md) against a per-record `parse_single_sequence_example` map.
- Buckets (BUCKET_BOUNDARIES) double in width, so padding wastes at most about half of a batch
  for any length mix; padding everything to the longest sequence instead wastes most of the
  compute on short texts (the benchmark counts padded positions too).
- The last batch of each bucket in a window can be short: with 32 batches per window and lengths
  1–200, 85% of batches were full (an 8k-record window, more; memory grows with it).
- Sequences longer than MAX_LENGTH are cut there (the model averages token embeddings; the tail
  of a very long text adds little and would dominate memory).
- Token ids: the text route's ids are vocabulary line numbers (0 = padding, 1 = unknown word);
  imported SequenceExamples with other ids or byte strings are hashed into HASH_BUCKETS ids ≥ 2.
"""

from typing import List, Optional, Union

import tensorflow as tf

from trainer import shards, tabular_input
from trainer.data_spec import FIRST_ID, HASH_BUCKETS, SequenceSpec

AUTOTUNE = tf.data.AUTOTUNE
WINDOW_BATCHES = 32  # records parsed and bucketed together: 32 batches' worth
BUCKET_BOUNDARIES = (16, 32, 64, 128, 256, 512)
MAX_LENGTH = 1024


def token_ids(values: tf.Tensor, spec: SequenceSpec) -> tf.Tensor:
  """Stored token values → model ids (≥ 1; 0 is left for padding)."""
  if not spec.hashed:
    return values
  if values.dtype == tf.string:
    return tf.strings.to_hash_bucket_fast(values, HASH_BUCKETS) + FIRST_ID
  return tf.math.floormod(values, HASH_BUCKETS) + FIRST_ID


def parse_sequences(serialized: tf.Tensor, spec: SequenceSpec, with_label: bool = True):
  """A batch of serialized SequenceExamples → ragged int64 ids [B, (T)] (+ int64 labels [B])."""
  # Ragged: an imported record may hold an empty label list (first_or_default gives 0).
  context_spec = {spec.label_key: tf.io.RaggedFeature(tf.int64)} if with_label else {}
  context, sequences, _ = tf.io.parse_sequence_example(
    serialized,
    context_features=context_spec,
    sequence_features={spec.tokens_key: tf.io.RaggedFeature(spec.token_dtype)},
  )
  steps = sequences[spec.tokens_key]  # [B, (T), (values per step)]
  tokens = steps.merge_dims(1, 2)[:, :MAX_LENGTH]
  tokens = tokens.with_flat_values(token_ids(tokens.flat_values, spec))
  if not with_label:
    return tokens
  return tokens, tabular_input.first_or_default(context[spec.label_key])


def bucket_of(lengths: tf.Tensor) -> tf.Tensor:
  """Bucket index per length: [0, 16) → 0, [16, 32) → 1, … [512, ∞) → 6."""
  return tf.searchsorted(
    tf.constant(BUCKET_BOUNDARIES, tf.int64),
    tf.cast(lengths, tf.int64),
    side='right',
    out_type=tf.int64,
  )


def bucketed_batches(
  tokens: tf.RaggedTensor, labels: tf.Tensor, batch_size: int
) -> tf.data.Dataset:
  """One parsed window → batches of up to batch_size rows from a single length bucket, each
  zero-padded to its own longest row. Vectorised: one sort and one grouping per window instead
  of per-record bucketing (tf.data's bucket_by_sequence_length ran at 22k rec/s here against
  ~90k for this, docs/design/data.md). Rows keep their (shuffled) order within a bucket."""
  count = tf.shape(labels, out_type=tf.int64)[0]
  buckets = bucket_of(tokens.row_lengths())
  order = tf.argsort(buckets, stable=True)
  sorted_buckets = tf.gather(buckets, order)
  bucket_start = tf.searchsorted(sorted_buckets, sorted_buckets, side='left', out_type=tf.int64)
  batch_key = sorted_buckets * count + (tf.range(count) - bucket_start) // batch_size
  _, batch_ids = tf.unique(batch_key, out_idx=tf.int64)  # keys are sorted: ids 0, 1, 2, …
  rows = tf.RaggedTensor.from_value_rowids(order, batch_ids)
  return tf.data.Dataset.range(rows.nrows()).map(
    lambda i: (tf.gather(tokens, rows[i]).to_tensor(), tf.gather(labels, rows[i]))
  )


def sequence_dataset(
  file_patterns: Union[str, List[str]],
  spec: SequenceSpec,
  batch_size: int,
  training: bool,
  guard: Optional[shards.ShardGuard] = None,
) -> tf.data.Dataset:
  """(int64 ids [B, T] zero-padded within a length bucket, int64 labels [B]): a
  shards.DatasetBuilder."""
  files = shards.readable_files(file_patterns, guard)
  batches = (
    shards.serialized_batches(files, batch_size * WINDOW_BATCHES, training)
    .map(
      lambda s: parse_sequences(s, spec),
      num_parallel_calls=AUTOTUNE,
      deterministic=shards.in_order(training),
    )
    .flat_map(lambda tokens, labels: bucketed_batches(tokens, labels, batch_size))
  )
  if training:  # a window yields its buckets short to long: mix them
    batches = batches.shuffle(2 * WINDOW_BATCHES)
  return batches.prefetch(AUTOTUNE)
