"""The whole pipeline on sequence data: text CSV → SequenceExamples (TextExampleGen), and
SequenceExample TFRecords through ImportExampleGen. Real Beam, ML Metadata, training."""

import csv
import os

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_data_validation as tfdv

from contracts.errors import EXIT_FAILED
from tests.conftest import run_pipeline
from tests.support import runs
from tests.support.tfx_data import IMDB, SEQUENCE_TESTDATA
from trainer import text_tokens

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)

POSITIVE, NEGATIVE = ('good', 'great', 'fine'), ('bad', 'poor', 'awful')


def write_learnable_texts(path, rows: int, seed: int = 0) -> str:
  """Texts of 1-200 words: filler words plus sentiment words; the label says which kind
  outnumbers the other, so it is decided by content, at any length."""
  rng = np.random.default_rng(seed)
  fillers = [f'w{i}' for i in range(300)]
  with open(path, 'w', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(['label', 'text'])
    for _ in range(rows):
      length, label = int(rng.integers(1, 201)), int(rng.integers(0, 2))
      minor = int(rng.integers(0, length // 10 + 1))
      major = min(length - minor, minor + 1 + length // 20)
      words = list(rng.choice(fillers, length - major - minor))
      words += list(rng.choice(POSITIVE if label else NEGATIVE, major))
      words += list(rng.choice(NEGATIVE if label else POSITIVE, minor))
      rng.shuffle(words)
      writer.writerow([label, ' '.join(words)])
  return str(path)


def test_a_learnable_text_set_is_learned_through_the_whole_pipeline(tmp_path):
  data = write_learnable_texts(tmp_path / 'texts.csv', rows=3000)
  output = str(tmp_path / 'out')
  code, result = run_pipeline(data, output, '--train-steps', '400', '--min-accuracy', '0.8')
  assert code == 0, result.get('error')
  assert result['eval_accuracy'] > 0.8 and result['blessed']  # chance is 0.5
  assert len(result['class_recall']) == 2 and min(result['class_recall'].values()) > 0.5
  assert sum(result['examples_per_split'].values()) == 3000
  statistics = tfdv.load_stats_binary(
    os.path.join(
      runs.latest_run(output, 'tfrecord-pipeline')['StatisticsGen'].outputs['statistics'].uri,
      'Split-train',
      'FeatureStats.pb',
    )
  )
  paths = {'.'.join(f.path.step) for f in statistics.datasets[0].features}
  assert {'label', 'length', '##SEQUENCE##.tokens'} <= paths  # the feature list has statistics


def test_empty_and_over_long_texts_are_anomalies_that_stop_training(tmp_path):
  data = tmp_path / 'broken.csv'
  write_learnable_texts(data, rows=300)
  with open(data, 'a', newline='') as f:
    csv.writer(f).writerows([['1', ''], ['0', ' '.join(['long'] * 6000)]])
  code, result = run_pipeline(str(data), str(tmp_path / 'out'))
  assert code == EXIT_FAILED
  anomalies = ' '.join(result['anomalies'])
  assert "feature 'length'" in anomalies and 'small value: 0' in anomalies, anomalies
  assert 'large value: 6000' in anomalies
  assert "'##SEQUENCE##.tokens'" in anomalies and 'fewer values than expected' in anomalies
  assert 'Trainer' not in result['components']


def test_the_imdb_csv_runs_end_to_end(tmp_path):
  data = tmp_path / 'imdb.csv'  # the .txt original gets a one-line hint (tests/cli)
  data.write_bytes(open(IMDB, 'rb').read())
  code, result = run_pipeline(str(data), str(tmp_path / 'out'), '--min-accuracy', '0')
  assert code == 0, result.get('error')
  assert sum(result['examples_per_split'].values()) == 100
  assert result['serving_check']['serves']  # predict_text agreed with serving_default
  assert 'predict_text' in result['serving_check']['signatures']
  assert os.path.isfile(os.path.join(result['pushed_to'], 'saved_model.pb'))
  vocabulary = os.path.join(result['examples_uri'], 'vocabulary.txt')
  assert os.path.isfile(vocabulary)

  # The pushed model takes raw text: the ids it gives every row are exactly the ids
  # TextExampleGen wrote for the whole eval split, and its answers are the records' answers.
  with open(IMDB, newline='', encoding='utf-8') as f:
    texts = [row['text'] for row in csv.DictReader(f)]
  table = text_tokens.vocabulary_table(vocabulary)
  by_ids = {
    tuple(ids): text
    for ids, text in zip(text_tokens.token_ids(tf.constant(texts), table).to_list(), texts)
  }
  shards = tf.io.gfile.glob(os.path.join(result['examples_uri'], 'Split-eval', '*'))
  records = [r.numpy() for r in tf.data.TFRecordDataset(shards)]
  assert len(records) == result['examples_per_split']['eval']
  written = [
    tuple(
      step.int64_list.value[0]
      for step in tf.train.SequenceExample.FromString(r)
      .feature_lists.feature_list['tokens']
      .feature
    )
    for r in records
  ]
  assert all(ids in by_ids for ids in written)  # every eval record's ids, from its raw text
  model = tf.saved_model.load(result['pushed_to'])
  from_text = model.signatures['predict_text'](text=tf.constant([by_ids[ids] for ids in written]))
  from_records = model.signatures['serving_default'](examples=tf.constant(records))
  np.testing.assert_allclose(
    from_text['probabilities'].numpy(), from_records['probabilities'].numpy(), rtol=1e-5
  )


def test_sequence_tfrecords_without_a_label_stop_before_training_naming_it(tmp_path, capsys):
  code, result = run_pipeline(SEQUENCE_TESTDATA, str(tmp_path / 'out'))
  err = capsys.readouterr().err
  assert code == 2  # bad input, found by a component
  assert result['examples_per_split'] == {'train': 10500, 'eval': 4500}  # the files' own splits
  with open(result['log']) as f:  # one count over both input splits (InputToRecord[split])
    assert 'ImportExampleGen: 15,000 of 15,000 records imported, ' in f.read()
  for node in ('ImportExampleGen', 'StatisticsGen', 'SchemaGen', 'ExampleValidator'):
    assert result['components'][node] == 'COMPLETE'
  assert result['components']['LabelCheck'] == 'FAILED' and 'Trainer' not in result['components']
  (line,) = [row for row in err.splitlines() if row.startswith('error:')]
  assert "no label 'label' in the data" in line and 'feature lists' in line and ': s)' in line
  schema = tfdv.load_schema_text(os.path.join(result['schema_uri'], 'schema.pbtxt'))
  (lists,) = [f for f in schema.feature if f.name == '##SEQUENCE##']
  assert [f.name for f in lists.struct_domain.feature] == ['s']
