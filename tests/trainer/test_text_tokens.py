"""The in-model tokenizer gives the ids TextExampleGen's Python tokenizer gives, on every row of
the imdb CSV shipped with TFX (HTML markup, punctuation, apostrophes, digits) and on edge cases."""

import collections
import csv

import tensorflow as tf

from components.text_example_gen import text
from tests.support.tfx_data import IMDB
from trainer import text_tokens

EDGES = [
  '',
  "Don't stop: it's <br />GREAT<br/>!! rock'n'roll",
  'ÉCOLE Straße naïve 東京 ٣٤ x_y __init__',
  "''quoted'' 'lead trail' can't'",
  'a\x01b',
]


def _imdb_texts():
  with open(IMDB, newline='', encoding='utf-8') as f:
    return [row['text'] for row in csv.DictReader(f)]


def test_words_match_the_python_tokenizer_on_every_imdb_row_and_edge_cases():
  texts = _imdb_texts() + EDGES
  got = text_tokens.tokenize(tf.constant(texts)).to_list()
  for raw, words in zip(texts, got):
    assert [w.decode('utf-8') for w in words] == text.tokenize(raw), raw[:80]


def test_ids_come_from_the_vocabulary_file_with_the_out_of_vocabulary_id(tmp_path):
  texts = _imdb_texts()
  counts = collections.Counter(word for t in texts for word in text.tokenize(t))
  words = text.vocabulary(counts.items(), size=500, min_count=2)
  path = tmp_path / 'vocabulary.txt'
  path.write_text(''.join(w + '\n' for w in words), encoding='utf-8')
  index = {w: i for i, w in enumerate(words)}
  table = text_tokens.vocabulary_table(str(path))
  got = text_tokens.token_ids(tf.constant(texts), table).to_list()
  expected = [
    [index.get(w, text_tokens.OUT_OF_VOCABULARY_ID) for w in text.tokenize(t)] for t in texts
  ]
  assert got == expected
  assert any(text_tokens.OUT_OF_VOCABULARY_ID in ids for ids in got)  # some words fell outside
