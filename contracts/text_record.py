"""The text route's record layout (TextExampleGen writes it, the Trainer reads it): one
tf.train.SequenceExample per CSV row.

  context        label       int64   class id (line number in labels.txt)
                 label_name  bytes   the label as written in the CSV
                 length      int64   number of tokens (0 for an empty text)
  feature_lists  tokens      one int64 per step: token id (line number in vocabulary.txt)

Token ids: 0 is padding (never stored), 1 is a word outside the vocabulary, 2… are the
vocabulary's words by decreasing train-split frequency.
"""

from typing import Sequence

import tensorflow as tf

LABEL_KEY = 'label'
LABEL_NAME_KEY = 'label_name'
LENGTH_KEY = 'length'
TOKENS_KEY = 'tokens'
PADDING, OUT_OF_VOCABULARY = '<pad>', '<oov>'
RESERVED = (PADDING, OUT_OF_VOCABULARY)


def make_sequence_example(
  token_ids: Sequence[int], label: int, label_name: str
) -> tf.train.SequenceExample:
  example = tf.train.SequenceExample()
  context = example.context.feature
  context[LABEL_KEY].int64_list.value.append(label)
  context[LABEL_NAME_KEY].bytes_list.value.append(label_name.encode('utf-8'))
  context[LENGTH_KEY].int64_list.value.append(len(token_ids))
  # Created even for an empty text, so that every record has the same keys.
  steps = example.feature_lists.feature_list[TOKENS_KEY].feature
  for token_id in token_ids:
    steps.add().int64_list.value.append(token_id)
  return example
