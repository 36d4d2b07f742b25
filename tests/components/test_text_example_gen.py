"""TextExampleGen: text CSV rows → SequenceExamples, vocabulary built on the train split."""

import csv
import json
import logging
import os

import apache_beam as beam
import tensorflow as tf
from tfx.dsl.components.base import base_beam_executor
from tfx.types import standard_artifacts

from components.text_example_gen import executor, text
from contracts import artifacts, text_record
from utils import progress

# Four texts 25 times each: the tests that use them split row by row (--duplicates off), where
# grouping would put all 25 in one split (test_the_same_words_share_a_split_…).
ROWS = [
  ('pos', 'A good, GOOD film.<br />Loved it'),
  ('neg', 'bad film'),
  ('neg', ''),
  ('pos', "good acting; it's good"),
] * 25 + [('neg', 'zebra')]


def _convert(
  tmp_path, rows=ROWS, min_count=2, max_vocabulary=100, shard_size_mb=256.0, duplicates='off'
):
  data = tmp_path / 'data'
  data.mkdir()
  with open(data / 'reviews.csv', 'w', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(['sentiment', 'review'])
    writer.writerows(rows)
  examples = standard_artifacts.Examples()
  examples.uri = str(tmp_path / 'examples')
  context = base_beam_executor.BaseBeamExecutor.Context(
    tmp_dir=str(tmp_path / 'tmp'), unique_id='1'
  )
  executor.Executor(context).Do(
    {},
    {'examples': [examples]},
    {
      'input_base': str(data),
      'input_config': json.dumps({'splits': [{'name': 'rows', 'pattern': '*.csv'}]}),
      'label_column': 'sentiment',
      'text_column': 'review',
      'eval_percent': 20,
      'shard_size_mb': shard_size_mb,
      'max_vocabulary': max_vocabulary,
      'min_count': min_count,
      'duplicates': duplicates,
    },
  )
  return examples


def _records(examples, split):
  files = tf.io.gfile.glob(os.path.join(examples.uri, f'Split-{split}', '*'))
  return [tf.train.SequenceExample.FromString(r.numpy()) for r in tf.data.TFRecordDataset(files)]


def test_tokenize_drops_markup_and_punctuation_and_lowercases():
  assert text.tokenize("A good, GOOD film.<br />It's 10/10") == [
    'a',
    'good',
    'good',
    'film',
    "it's",
    '10',
    '10',
  ]


def test_every_row_becomes_a_sequence_example_with_ids_from_the_vocabulary(tmp_path, caplog):
  caplog.set_level(logging.INFO, logger=progress.LOGGER)
  joined = ROWS[:50] + [(' sentiment ', 'review')] + ROWS[50:]  # files joined with their headers
  examples = _convert(tmp_path, joined)
  assert examples.get_int_custom_property(artifacts.REPEATED_HEADERS) == 1  # skipped, counted
  lines = [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]
  assert lines[-1].startswith(f'TextExampleGen: {len(ROWS)} of {len(ROWS)} rows encoded, ')
  with open(os.path.join(examples.uri, artifacts.VOCABULARY_FILE)) as f:
    words = f.read().split('\n')[:-1]
  assert words[:2] == list(text_record.RESERVED) and words[2] == 'good'  # the most frequent word
  assert 'zebra' not in words  # seen once: out of vocabulary
  with open(os.path.join(examples.uri, artifacts.LABELS_FILE)) as f:
    assert f.read().split() == ['neg', 'pos']
  records = _records(examples, 'train') + _records(examples, 'eval')
  assert len(records) == len(ROWS)
  decoded = set()
  for record in records:
    context = record.context.feature
    ids = [
      step.int64_list.value[0]
      for step in record.feature_lists.feature_list[text_record.TOKENS_KEY].feature
    ]
    assert context[text_record.LENGTH_KEY].int64_list.value[0] == len(ids)
    name = context[text_record.LABEL_NAME_KEY].bytes_list.value[0].decode()
    assert context[text_record.LABEL_KEY].int64_list.value[0] == ['neg', 'pos'].index(name)
    decoded.add((name, ' '.join(words[i] for i in ids)))
  assert decoded == {
    ('pos', 'a good good film loved it'),
    ('neg', 'bad film'),
    ('neg', ''),
    ('pos', "good acting it's good"),
    ('neg', '<oov>'),
  }
  with open(os.path.join(examples.uri, artifacts.TEXT_META_FILE)) as f:
    meta = json.load(f)
  assert sum(meta['split_counts'].values()) == len(ROWS) and meta['empty_texts'] == 25
  assert meta['longest_text'] == 6 and meta['split_counts']['eval'] > 0


def test_the_vocabulary_comes_from_the_train_split_only(tmp_path):
  rows = [('a', f'word{i} common') for i in range(200)]
  examples = _convert(tmp_path, rows, min_count=1, max_vocabulary=1000, duplicates='group')
  with open(os.path.join(examples.uri, artifacts.VOCABULARY_FILE)) as f:
    vocabulary = set(f.read().split())
  eval_records = _records(examples, 'eval')
  assert eval_records  # ~20% of 200 rows
  for record in eval_records:
    first = record.feature_lists.feature_list[text_record.TOKENS_KEY].feature[0].int64_list.value[0]
    assert first == 1  # wordN of an eval row was never seen in train: <oov>
  assert len(vocabulary) == 2 + 1 + len(_records(examples, 'train'))


def test_the_vocabulary_keeps_the_most_frequent_words():
  counts = [('rare', 2), ('common', 9), ('b', 5), ('a', 5), ('once', 1)]
  assert text.vocabulary(counts, size=3, min_count=2) == ['<pad>', '<oov>', 'common', 'a', 'b']
  assert text.label_order(['10', '9', '-1']) == ['-1', '9', '10']
  assert text.label_order(['pos', 'neg']) == ['neg', 'pos']


def test_a_quoted_text_spanning_lines_is_one_row(tmp_path):
  path = tmp_path / 'multi.csv'
  with open(path, 'w', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(['label', 'text'])
    writer.writerows([['1', 'first line\nsecond, "quoted" line'], ['0', 'plain']])
  rows = list(executor._read_rows(str(path), 'label', 'text', eval_percent=0, by_words=True))
  assert rows == [
    ('train', '1', ['first', 'line', 'second', 'quoted', 'line']),
    ('train', '0', ['plain']),
  ]
  assert executor.row_count([str(path)]) == 2  # the progress total counts rows the same way


def test_a_header_with_spaces_around_its_names_names_the_columns_without_them(tmp_path):
  path = tmp_path / 'spaced.csv'
  path.write_text('label , text\n1,some words\n')
  rows = list(executor._read_rows(str(path), 'label', 'text', eval_percent=0, by_words=True))
  assert rows == [('train', '1', ['some', 'words'])]


def test_a_line_repeating_the_header_is_skipped_and_counted_as_the_csv_example_gen_does(tmp_path):
  path = tmp_path / 'joined.csv'
  path.write_text('label , text\n1,some words\nlabel, text \n0,other words\n1,label\n')
  read = list(executor._read_rows(str(path), 'label', 'text', eval_percent=0, by_words=True))
  rows = [r for r in read if not isinstance(r, beam.pvalue.TaggedOutput)]
  assert rows == [
    ('train', '1', ['some', 'words']),
    ('train', '0', ['other', 'words']),
    ('train', '1', ['label']),
  ]
  counted = [r.value for r in read if isinstance(r, beam.pvalue.TaggedOutput)]
  assert counted == [1] and read[1].tag == executor.REPEATED_HEADERS
  assert executor.row_count([str(path)]) == 3  # the progress total leaves it out too


def test_a_tiny_shard_size_writes_no_empty_shards(tmp_path):
  examples = _convert(tmp_path, shard_size_mb=0.00002)  # 2 KB of rows: ~100 shards asked a split
  for split in ('train', 'eval'):
    names = sorted(os.listdir(os.path.join(examples.uri, f'Split-{split}')))
    assert names == [f'data-{i:05d}-of-{len(names):05d}' for i in range(len(names))], names
    assert all(os.path.getsize(os.path.join(examples.uri, f'Split-{split}', n)) for n in names)
  assert len(_records(examples, 'train')) + len(_records(examples, 'eval')) == len(ROWS)


def test_the_same_words_share_a_split_and_under_two_labels_are_left_out(tmp_path):
  rows = [('pos' if i % 2 else 'neg', f'review number {i} of many') for i in range(100)]
  rows += [(label, f'Review number {i} of MANY!') for label, i in (('neg', 0), ('pos', 1))]  # again
  rows += [('pos', 'review number 2 of many')]  # the same words, the other label
  examples = _convert(tmp_path, rows, min_count=1, duplicates='group')
  written = len(_records(examples, 'train')) + len(_records(examples, 'eval'))
  assert written == len(rows) - 2  # the words filed under both labels: neither row
  read = executor._read_rows(
    str(tmp_path / 'data' / 'reviews.csv'), 'sentiment', 'review', 50, True
  )
  split_of = {}
  for split, _, tokens in read:
    split_of.setdefault(' '.join(tokens), set()).add(split)
  assert len(split_of) == 100 and all(len(found) == 1 for found in split_of.values())
  properties = examples.mlmd_artifact.custom_properties
  assert properties['num_label_conflicts'].int_value == 2
  assert properties['num_duplicates'].int_value == 2 * 2 + 2
  with open(os.path.join(examples.uri, artifacts.DUPLICATES_FILE)) as f:
    (conflict, *_) = json.load(f)['conflicts']
  assert conflict['row'] == 'review number 2 of many' and conflict['labels'] == ['neg', 'pos']
