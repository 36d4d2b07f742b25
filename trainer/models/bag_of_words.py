"""Token embeddings averaged over the non-padding positions, then an MLP: the default model for
text and SequenceExamples.

Averaging is order-blind but cheap and length-independent: enough for "which words occur"
(sentiment, topic); a recurrent layer would be the next step for order-dependent labels.
"""

import keras


def search_space(hp) -> None:
  hp.Float('learning_rate', 1e-4, 1e-2, sampling='log', default=1e-3)
  hp.Choice('embedding_dim', [16, 32, 64], default=32)


class MaskedMean(keras.layers.Layer):
  """Mean of the embeddings of the non-padding positions (id 0 is padding); 0 for an empty
  sequence instead of 0/0."""

  def call(self, embedded, ids):
    mask = keras.ops.expand_dims(keras.ops.cast(ids > 0, embedded.dtype), -1)
    total = keras.ops.sum(embedded * mask, axis=1)
    return total / keras.ops.maximum(keras.ops.sum(mask, axis=1), 1.0)


def build_model(spec, hp) -> keras.Model:
  """Token ids [B, T] (int64, 0-padded, any T) → class probabilities."""
  ids = keras.Input(shape=(None,), dtype='int64', name='tokens')
  embedded = keras.layers.Embedding(spec.vocabulary_size, hp.get('embedding_dim'))(ids)
  x = MaskedMean()(embedded, ids)
  x = keras.layers.Dense(32, activation='relu')(x)
  outputs = keras.layers.Dense(
    spec.num_classes, activation='softmax', name='probabilities', dtype='float32'
  )(x)
  return keras.Model(ids, outputs, name='bag_of_words')
