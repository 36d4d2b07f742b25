"""The text route's record layout: one tf.train.SequenceExample per CSV row.

  context        label       int64   class id (line number in labels.txt)
                 label_name  bytes   the label as written in the CSV
                 length      int64   number of tokens (0 for an empty text)
  feature_lists  tokens      one int64 per step: token id (line number in vocabulary.txt)

Token ids: 0 is padding (never stored), 1 is a word outside the vocabulary, 2… are the
vocabulary's words by decreasing train-split frequency.
"""
import re
from typing import Iterable, List, Sequence

import tensorflow as tf

LABEL_KEY = 'label'
LABEL_NAME_KEY = 'label_name'
LENGTH_KEY = 'length'
TOKENS_KEY = 'tokens'
VOCABULARY_FILE = 'vocabulary.txt'
LABELS_FILE = 'labels.txt'
META_FILE = 'text_meta.json'
PADDING, OUT_OF_VOCABULARY = '<pad>', '<oov>'
RESERVED = (PADDING, OUT_OF_VOCABULARY)

_MARKUP = re.compile(r'<[^>]{0,40}>')   # <br /> and friends in scraped reviews
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")  # letters/digits of any script, with one apostrophe


def tokenize(text: str) -> List[str]:
  """Lower-cased words; markup and punctuation dropped."""
  return _WORD.findall(_MARKUP.sub(' ', text).lower())


def vocabulary(counts: Iterable[tuple], size: int, min_count: int) -> List[str]:
  """The reserved entries, then the `size` most frequent words seen ≥ min_count times (ties in
  alphabetical order, so the same counts give the same ids)."""
  kept = sorted(((word, n) for word, n in counts if n >= min_count), key=lambda c: (-c[1], c[0]))
  return list(RESERVED) + [word for word, _ in kept[:size]]


def label_order(values: Iterable[str]) -> List[str]:
  """Label names in id order: numerically when every label is an integer, else alphabetically."""
  names = sorted(set(values))
  if all(re.fullmatch(r'-?\d+', n) for n in names):
    names.sort(key=int)
  return names


def make_sequence_example(token_ids: Sequence[int], label: int,
                          label_name: str) -> tf.train.SequenceExample:
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
