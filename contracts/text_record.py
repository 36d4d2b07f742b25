"""The text route's record layout (TextExampleGen writes it, the Trainer reads it): one
tf.train.SequenceExample per CSV row.

  context        label       int64   class id (line number in labels.txt)
                 label_name  bytes   the label as written in the CSV
                 length      int64   number of tokens (0 for an empty text)
  feature_lists  tokens      one int64 per step: token id (line number in vocabulary.txt)

Token ids: 0 is padding (never stored), 1 is a word outside the vocabulary, 2… are the
vocabulary's words by decreasing train-split frequency. The TensorFlow codec that writes it is
records/text_codec.py.
"""

LABEL_KEY = 'label'
LABEL_NAME_KEY = 'label_name'
LENGTH_KEY = 'length'
TOKENS_KEY = 'tokens'
PADDING, OUT_OF_VOCABULARY = '<pad>', '<oov>'
RESERVED = (PADDING, OUT_OF_VOCABULARY)
