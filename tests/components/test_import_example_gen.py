"""ImportExampleGen (TFX's, run by the project's executor) on TFRecords with copies of records
and records under two labels: copies share a split, conflicts are left out; already split
records stay where they are, and what is in both splits is counted and named."""

import collections
import json
import os

import tensorflow as tf

from components.import_example_gen import executor
from tests.support.example_gens import run_executor


def _example(x: float, word: str, label: int, row_id: int) -> bytes:
  feature = {
    'x': tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
    'word': tf.train.Feature(bytes_list=tf.train.BytesList(value=[word.encode()])),
    'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    'row_id': tf.train.Feature(int64_list=tf.train.Int64List(value=[row_id])),
  }
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _write(path, records) -> None:
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with tf.io.TFRecordWriter(str(path)) as writer:
    for record in records:
      writer.write(record)


def _run(input_base, out, splits):
  """The executor on `splits`, with 'label' the label and 'row_id' an id column."""
  ids = json.dumps(['row_id'])
  return run_executor(executor.Executor, input_base, out, splits, label_key='label', id_columns=ids)


def _found(uri: str) -> dict:
  """{(x, word): {(split, label, row_id)}} of every record written."""
  found = collections.defaultdict(set)
  for split in ('train', 'eval'):
    for path in tf.io.gfile.glob(os.path.join(uri, f'Split-{split}', '*')):
      for record in tf.data.TFRecordDataset(path, 'GZIP').as_numpy_iterator():
        f = tf.train.Example.FromString(record).features.feature
        key = (round(f['x'].float_list.value[0], 3), f['word'].bytes_list.value[0].decode())
        found[key].add((split, f['label'].int64_list.value[0], f['row_id'].int64_list.value[0]))
  return found


def test_copies_share_a_split_and_records_under_two_labels_are_left_out(tmp_path):
  records = [_example(i / 10, f'w{i % 7}', i % 3, i) for i in range(300)]
  records += [_example(i / 10, f'w{i % 7}', i % 3, 1000 + i) for i in range(50)]  # copies
  records += [_example(i / 10, f'w{i % 7}', (i + 1) % 3, 2000 + i) for i in range(50, 55)]
  _write(tmp_path / 'data' / 'part.tfrecord', records)
  examples = _run(tmp_path / 'data', tmp_path / 'out', [('single_split', '*.tfrecord')])
  found = _found(examples.uri)
  assert len(found) == 300 - 5
  for members in found.values():
    assert len({split for split, _, _ in members}) == 1, members
  assert sum(len(members) == 2 for members in found.values()) == 50
  assert {'train', 'eval'} == {split for m in found.values() for split, _, _ in m}
  properties = examples.mlmd_artifact.custom_properties
  assert properties['num_label_conflicts'].int_value == 10
  assert properties['num_duplicates'].int_value == 100 + 10
  with open(tmp_path / 'out' / 'duplicates.json') as f:
    conflicts = json.load(f)['conflicts']
  assert len(conflicts) == 10 and all(len(c['labels']) == 2 for c in conflicts)


def test_already_split_records_stay_and_those_in_both_splits_are_named(tmp_path):
  train = [_example(i / 10, 'a', i % 2, i) for i in range(40)]
  evaluation = [_example(i / 10, 'b', i % 2, i) for i in range(40, 50)]
  evaluation += [_example(i / 10, 'a', i % 2, 100 + i) for i in range(3)]  # also in train
  _write(tmp_path / 'data' / 'Split-train' / 'part.tfrecord', train)
  _write(tmp_path / 'data' / 'Split-eval' / 'part.tfrecord', evaluation)
  examples = _run(
    tmp_path / 'data',
    tmp_path / 'out',
    [('train', 'Split-train/*'), ('eval', 'Split-eval/*')],
  )
  found = _found(examples.uri)
  splits = collections.Counter(split for m in found.values() for split, _, _ in m)
  assert splits == {'train': 40, 'eval': 13}  # nothing moved
  assert examples.mlmd_artifact.custom_properties['num_across_splits'].int_value == 6
  with open(tmp_path / 'out' / 'duplicates.json') as f:
    across = json.load(f)['across_splits']
  assert len(across) == 3 and all(a['splits'] == ['eval', 'train'] for a in across)
  assert sorted(a['row'] for a in across) == ['word=a, x=0', 'word=a, x=0.1', 'word=a, x=0.2']


def test_without_id_columns_unique_ids_are_found_and_image_bytes_are_not(tmp_path):
  """Every record twice, each copy with its own serial (unique text) and its own binary blob
  (unique, not text: no id), in two given splits: the serial is found, over both splits."""
  rows = []
  for i in range(30):
    for copy in range(2):
      feature = {
        'x': tf.train.Feature(float_list=tf.train.FloatList(value=[i / 30])),
        'serial': tf.train.Feature(bytes_list=tf.train.BytesList(value=[f'S-{i}-{copy}'.encode()])),
        'blob': tf.train.Feature(bytes_list=tf.train.BytesList(value=[bytes([137, i, copy, 0])])),
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
      }
      rows.append(tf.train.Example(features=tf.train.Features(feature=feature)))
  _write(
    tmp_path / 'data' / 'Split-train' / 'a.tfrecord', [r.SerializeToString() for r in rows[:40]]
  )
  _write(
    tmp_path / 'data' / 'Split-eval' / 'a.tfrecord', [r.SerializeToString() for r in rows[40:]]
  )
  splits = [('train', 'Split-train/*'), ('eval', 'Split-eval/*')]
  examples = run_executor(
    executor.Executor, tmp_path / 'data', tmp_path / 'out', splits, label_key='label'
  )
  assert json.loads(examples.get_string_custom_property('detected_id_columns')) == ['serial']


def test_a_train_split_alone_is_split_again(tmp_path):
  """A Split-train folder fed back with --eval-percent (cli: pattern Split-*/*, one input split)."""
  _write(
    tmp_path / 'data' / 'Split-train' / 'data-00000-of-00001',
    [_example(i / 10, f'w{i % 7}', i % 2, i) for i in range(200)],
  )
  examples = _run(tmp_path / 'data', tmp_path / 'out', [('single_split', 'Split-*/*')])
  splits = collections.Counter(split for m in _found(examples.uri).values() for split, _, _ in m)
  assert sum(splits.values()) == 200 and splits['eval'] > 10 and splits['train'] > 100
