"""The text route's record layout (contracts/py) as TensorFlow writes it."""

from typing import Sequence

import tensorflow as tf

from contracts.text_record import LABEL_KEY, LABEL_NAME_KEY, LENGTH_KEY, TOKENS_KEY


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
