"""trainer/sequence_input.py: vectorised SequenceExample parsing and length buckets."""

import os

import numpy as np
import pytest
import tensorflow as tf

from contracts import serving, text_record
from records import text_codec
from tests.support import built_models
from trainer import data_spec, sequence_input, signatures
from trainer.data_spec import SequenceSpec

SPEC = SequenceSpec(
  text_record.LABEL_KEY, text_record.TOKENS_KEY, tf.int64, ['a', 'b'], 1000, hashed=False
)


def _sequences(count, seed=0, max_length=200):
  rng = np.random.default_rng(seed)
  lengths = rng.integers(1, max_length + 1, count)
  lengths[:3] = [0, 16, 600]  # empty, exactly on a boundary, beyond the last boundary
  return [(list(rng.integers(2, 1000, n)), int(rng.integers(0, 2))) for n in lengths]


@pytest.fixture(scope='module')
def shard(tmp_path_factory):
  path = str(tmp_path_factory.mktemp('seq') / 'data-00000-of-00001')
  sequences = _sequences(1500)
  with tf.io.TFRecordWriter(path) as writer:
    for ids, label in sequences:
      writer.write(text_codec.make_sequence_example(ids, label, 'ab'[label]).SerializeToString())
  return path, sequences


def test_every_sequence_arrives_once_in_a_batch_of_its_own_length_bucket(shard):
  path, sequences = shard
  seen = []
  for tokens, labels in sequence_input.sequence_dataset([path], SPEC, 32, training=False):
    tokens, labels = tokens.numpy(), labels.numpy()
    lengths = (tokens > 0).sum(axis=1)
    assert len({int(b) for b in sequence_input.bucket_of(lengths)}) == 1, lengths
    assert tokens.shape[1] == max(lengths.max(), 0)  # padded to its own longest only
    assert len(labels) <= 32
    seen += [(tuple(row[:n]), int(label)) for row, n, label in zip(tokens, lengths, labels)]
  expected = [(tuple(ids[: sequence_input.MAX_LENGTH]), label) for ids, label in sequences]
  assert sorted(seen) == sorted(expected)


def test_training_batches_are_full_mostly_and_repeat(shard):
  path, _ = shard
  batches = sequence_input.sequence_dataset([path], SPEC, 32, training=True).take(200)
  sizes = [int(labels.shape[0]) for _, labels in batches]
  assert len(sizes) == 200  # repeats past the 1,500 records
  assert sum(size == 32 for size in sizes) / len(sizes) > 0.6


def test_imported_byte_tokens_are_hashed_above_the_reserved_ids():
  spec = SequenceSpec('y', 'words', tf.string, ['0', '1'], data_spec.HASH_BUCKETS + 2, hashed=True)
  example = tf.train.SequenceExample()
  example.context.feature['y'].int64_list.value.append(1)
  for word in (b'x', b'y', b'x'):
    example.feature_lists.feature_list['words'].feature.add().bytes_list.value.append(word)
  empty_label = tf.train.SequenceExample()
  empty_label.context.feature['y'].int64_list.value[:] = []
  empty_label.feature_lists.feature_list['words'].feature.add().bytes_list.value.append(b'x')
  tokens, labels = sequence_input.parse_sequences(
    tf.constant([example.SerializeToString(), empty_label.SerializeToString()]), spec
  )
  ids = tokens.to_list()
  assert ids[0][0] == ids[0][2] != ids[0][1] and min(ids[0] + ids[1]) >= 2
  assert labels.numpy().tolist() == [1, 0]  # an empty label list reads as 0


def test_the_model_trains_on_bucketed_batches_and_serves_sequence_examples(shard):
  path, sequences = shard
  built = built_models.built_in('bag_of_words', SPEC)
  built.fit(
    sequence_input.sequence_dataset([path], SPEC, 32, training=True),
    epochs=1,
    steps_per_epoch=5,
    verbose=0,
  )
  serve = signatures.sequence_signatures(built, SPEC)
  serialized = [
    text_codec.make_sequence_example(ids, label, 'x').SerializeToString()
    for ids, label in sequences[:4]
  ]  # includes the empty one
  predictions = serve['serving_default'](tf.constant(serialized))
  assert predictions['probabilities'].shape == (4, 2)
  assert np.isfinite(predictions['probabilities'].numpy()).all()
  assert serve['transform_features'](tf.constant(serialized))[
    serving.EVAL_LABEL_KEY
  ].numpy().tolist() == [label for _, label in sequences[:4]]


def test_a_text_model_takes_raw_strings_with_its_vocabulary_inside(tmp_path):
  built, spec = built_models.text_model(tmp_path)
  path = str(tmp_path / 'model')
  tf.saved_model.save(built, path, signatures=signatures.sequence_signatures(built, spec))
  os.remove(spec.vocabulary)  # the saved model carries its own copy
  loaded = tf.saved_model.load(path)
  texts = ["A good film, isn't it? <br />Not BAD.", '', 'unknown words only']
  ids = [[1, 2, 5, 4, 1, 1, 3], [], [1, 1, 1]]  # a good film isn't it not bad; <oov> is 1
  records = [text_codec.make_sequence_example(i, 0, 'neg').SerializeToString() for i in ids]
  from_text = loaded.signatures['predict_text'](text=tf.constant(texts))
  from_records = loaded.signatures['serving_default'](examples=tf.constant(records))
  np.testing.assert_allclose(
    from_text['probabilities'].numpy(), from_records['probabilities'].numpy(), rtol=1e-6
  )
