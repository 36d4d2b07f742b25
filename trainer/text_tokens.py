"""TextExampleGen's tokenizer and vocabulary lookup as TensorFlow ops, so that a text model can
take raw strings and give them exactly the ids TextExampleGen wrote
(components/text_example_gen/text.py is the Python original; tests/trainer/test_text_tokens.py
compares the two on every row of the imdb CSV).

RE2 (TensorFlow's regex engine) has no findall: every word is wrapped in a delimiter, the string
is split on it and the odd pieces are the words, matched left to right as Python's findall does.
"""

import tensorflow as tf

from contracts import text_record

MARKUP = r'<[^>]{0,40}>'  # the same as text.py's _MARKUP
WORD = r"[\pL\pN]+(?:'[\pL\pN]+)?"  # text.py's [^\W_]: letters and digits of any script
_DELIMITER = '\x01'
OUT_OF_VOCABULARY_ID = text_record.RESERVED.index(text_record.OUT_OF_VOCABULARY)


def tokenize(texts: tf.Tensor) -> tf.RaggedTensor:
  """[batch] UTF-8 strings → [batch, (words)] lower-cased words, markup and punctuation dropped."""
  lowered = tf.strings.lower(tf.strings.regex_replace(texts, MARKUP, ' '), encoding='utf-8')
  lowered = tf.strings.regex_replace(lowered, _DELIMITER, ' ')
  marked = tf.strings.regex_replace(lowered, f'({WORD})', _DELIMITER + r'\1' + _DELIMITER)
  pieces = tf.strings.split(marked, sep=_DELIMITER)
  odd = tf.math.floormod(tf.ragged.range(pieces.row_lengths()), 2) == 1
  return tf.ragged.boolean_mask(pieces, odd)


def vocabulary_table(path: str) -> tf.lookup.StaticHashTable:
  """word → id (its line number in vocabulary.txt); other words: the out-of-vocabulary id. Saved
  with a model, the file goes into its assets."""
  initializer = tf.lookup.TextFileInitializer(
    path,
    key_dtype=tf.string,
    key_index=tf.lookup.TextFileIndex.WHOLE_LINE,
    value_dtype=tf.int64,
    value_index=tf.lookup.TextFileIndex.LINE_NUMBER,
  )
  return tf.lookup.StaticHashTable(initializer, default_value=OUT_OF_VOCABULARY_ID)


def token_ids(texts: tf.Tensor, table: tf.lookup.StaticHashTable) -> tf.RaggedTensor:
  return tf.ragged.map_flat_values(table.lookup, tokenize(texts))
