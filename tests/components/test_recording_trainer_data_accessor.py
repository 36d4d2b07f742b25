"""RecordingTrainer's data accessor: TFXIO's datasets, element for element, and the executor
handing it to a module file's run_fn."""

import collections
import json
import os

from google.protobuf import text_format
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.dsl.components.base import base_executor
from tfx.types import standard_artifacts
from tfx_bsl.public import tfxio

from components.recording_trainer import component, data_accessor, executor, tuner_executor
from contracts import trainer_options
from tests.support import shards

RECORDS = 53  # not a multiple of the batch sizes: a short final batch
SCHEMA = """
feature { name: "x" type: FLOAT presence { min_fraction: 1 } shape { dim { size: 1 } } }
feature { name: "pair" type: INT presence { min_fraction: 1 } shape { dim { size: 2 } } }
feature { name: "label" type: INT presence { min_fraction: 1 } shape { dim { size: 1 } } }
feature { name: "word" type: BYTES }
feature { name: "values" type: FLOAT }
feature { name: "ids" type: INT }
tensor_representation_group {
  key: ""
  value {
    tensor_representation {
      key: "ragged_ids"
      value { ragged_tensor { feature_path { step: "ids" } } }
    }
  }
}
"""
DENSE_SCHEMA = """
feature { name: "x" type: FLOAT presence { min_fraction: 1 } shape { dim { size: 1 } } }
feature { name: "pair" type: INT presence { min_fraction: 1 } shape { dim { size: 2 } } }
feature { name: "label" type: INT presence { min_fraction: 1 } shape { dim { size: 1 } } }
"""


def _schema(text: str) -> schema_pb2.Schema:
  return text_format.Parse(text, schema_pb2.Schema())


def _example(i: int) -> bytes:
  feature = {
    'x': tf.train.Feature(float_list=tf.train.FloatList(value=[i / 4])),
    'pair': tf.train.Feature(int64_list=tf.train.Int64List(value=[i, -i])),
    'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 3])),
  }
  if i % 4:  # missing in every fourth record
    feature['word'] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'w%d' % i] * (i % 3)))
  if i % 5:
    feature['values'] = tf.train.Feature(float_list=tf.train.FloatList(value=[0.5] * (i % 4)))
  feature['ids'] = tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i % 6))))
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


@pytest.fixture(scope='module', params=['', 'GZIP'])
def split(request, tmp_path_factory):
  """Three shards of a split (GZIP ones named .gz), their glob."""
  folder = tmp_path_factory.mktemp('split')
  suffix = '.gz' if request.param else ''
  for shard in range(3):
    records = [_example(i) for i in range(shard, RECORDS, 3)]
    shards.write_shard(str(folder / f'data-{shard}-of-3{suffix}'), records, request.param)
  return str(folder / '*')


def _plain(value):
  """A batch's tensor as comparable Python values."""
  if isinstance(value, tf.SparseTensor):
    return ('sparse', value.indices.numpy().tolist(), value.values.numpy().tolist(),
            value.dense_shape.numpy().tolist())  # fmt: skip
  if isinstance(value, tf.RaggedTensor):
    return ('ragged', value.to_list())
  return ('dense', value.numpy().tolist())


def _batches(dataset, count=None):
  taken = dataset if count is None else dataset.take(count)
  out = []
  for element in taken:
    features, label = element if isinstance(element, tuple) else (element, None)
    batch = {key: _plain(value) for key, value in sorted(features.items())}
    if label is not None:
      batch['<label>'] = _plain(label)
    out.append(batch)
  return out


def _both(pattern, options, schema):
  stock = tfxio.TFExampleRecord(pattern, schema=schema).TensorFlowDataset(options)
  return stock, data_accessor.dataset(pattern, options, schema)


@pytest.mark.parametrize('schema_text', [SCHEMA, DENSE_SCHEMA], ids=['mixed', 'dense'])
@pytest.mark.parametrize('label_key', [None, 'label'])
@pytest.mark.parametrize('threads', [tf.data.AUTOTUNE, 2])  # files read at once: 1 or 2 here
def test_one_unshuffled_epoch_is_tfxios_batch_for_batch(split, schema_text, label_key, threads):
  options = tfxio.TensorFlowDatasetOptions(
    batch_size=8, shuffle=False, num_epochs=1, label_key=label_key, reader_num_threads=threads
  )
  stock, tuned = _both(split, options, _schema(schema_text))
  assert tuned.element_spec == stock.element_spec
  expected = _batches(stock)
  assert _batches(tuned) == expected
  assert sum(len(b['pair'][1]) for b in expected) == RECORDS
  if label_key:
    assert 'label' not in expected[0]


def test_dtypes_and_kinds_follow_the_schema(split):
  options = tfxio.TensorFlowDatasetOptions(batch_size=8, shuffle=False, num_epochs=1)
  features = data_accessor.dataset([split], options, _schema(SCHEMA)).element_spec
  assert features['x'] == tf.TensorSpec([None, 1], tf.float32)
  assert features['pair'] == tf.TensorSpec([None, 2], tf.int64)
  assert isinstance(features['word'], tf.SparseTensorSpec) and features['word'].dtype == tf.string
  assert isinstance(features['values'], tf.SparseTensorSpec)
  assert isinstance(features['ragged_ids'], tf.RaggedTensorSpec) and 'ids' not in features


def test_a_seeded_shuffle_over_epochs_is_tfxios(split):
  options = tfxio.TensorFlowDatasetOptions(
    batch_size=7, shuffle=True, shuffle_seed=3, shuffle_buffer_size=20, num_epochs=2,
    drop_final_batch=True, label_key='label',
  )  # fmt: skip
  stock, tuned = _both([split], options, _schema(DENSE_SCHEMA))
  assert tuned.element_spec == stock.element_spec  # drop_final_batch: a static batch size
  assert _batches(tuned) == _batches(stock)


def _records_seen(batches) -> collections.Counter:
  return collections.Counter(x[0] for b in batches for x in b['x'][1])  # x is unique per record


def test_an_unseeded_shuffle_reads_every_record_once_an_epoch(split):
  options = tfxio.TensorFlowDatasetOptions(batch_size=RECORDS, shuffle=True, num_epochs=None)
  tuned = data_accessor.dataset(split, options, _schema(SCHEMA))
  first, second, third = _batches(tuned, 3)  # num_epochs None: repeated for ever
  expected = collections.Counter(i / 4 for i in range(RECORDS))
  for epoch in (first, second, third):
    assert _records_seen([epoch]) == expected
  assert first['x'] != second['x'] or second['x'] != third['x']  # reshuffled


def test_a_label_outside_the_schema_is_refused_as_tfxio_refuses_it(split):
  options = tfxio.TensorFlowDatasetOptions(batch_size=8, label_key='nope')
  with pytest.raises(ValueError, match='label_key'):
    data_accessor.dataset(split, options, _schema(SCHEMA))
  with pytest.raises(ValueError, match='no schema'):
    data_accessor.dataset(split, options, None)


SEEN = []


def recording_run_fn(fn_args):
  """A module file's run_fn that keeps what it was handed and saves a placeholder model."""
  options = tfxio.TensorFlowDatasetOptions(batch_size=4, num_epochs=1, shuffle=False)
  factory = fn_args.data_accessor.tf_dataset_factory
  schema = _schema(DENSE_SCHEMA)
  SEEN.append((factory, next(iter(factory(fn_args.train_files, options, schema)))))
  os.makedirs(fn_args.serving_model_dir)


def _artifact(kind, uri):
  artifact = kind()
  artifact.uri = str(uri)
  return artifact


@pytest.mark.parametrize(
  'choice, expected',
  [(None, data_accessor.dataset), (trainer_options.TUNED, data_accessor.dataset),
   (trainer_options.TFX_ACCESSOR, None)],
)  # fmt: skip
def test_the_executor_hands_run_fn_the_accessor_its_options_name(tmp_path, choice, expected):
  examples = _artifact(standard_artifacts.Examples, tmp_path / 'examples')
  examples.split_names = json.dumps(['train', 'eval'])
  for name in ('train', 'eval'):
    os.makedirs(tmp_path / 'examples' / f'Split-{name}')
    shards.write_shard(
      str(tmp_path / 'examples' / f'Split-{name}' / 'data-00000-of-00001.gz'),
      [_example(i) for i in range(10)],
      'GZIP',
    )
  custom_config = {} if choice is None else {'input_accessor': choice}
  properties = {
    'run_fn': f'{__name__}.recording_run_fn',
    'train_args': json.dumps({'num_steps': 1}),
    'eval_args': json.dumps({'num_steps': 1}),
    'custom_config': json.dumps(custom_config),
  }
  outputs = {
    'model': [_artifact(standard_artifacts.Model, tmp_path / 'model')],
    'model_run': [_artifact(standard_artifacts.ModelRun, tmp_path / 'model_run')],
  }
  SEEN.clear()
  executor.Executor().Do({'examples': [examples]}, outputs, properties)
  (factory, (batch)), = SEEN  # fmt: skip
  if expected is None:
    assert factory is not data_accessor.dataset  # TFX's own
  else:
    assert factory is expected
  np.testing.assert_array_equal(batch['pair'].numpy()[:, 0], [0, 1, 2, 3])


def recording_tuner_fn(fn_args):
  """Keeps the accessor and stops the search, not this test's (a built-in exception: TFX imports
  this module again by name, so a class of its own would be another class by then)."""
  SEEN.append((fn_args.data_accessor.tf_dataset_factory, None))
  raise LookupError('handed over')


def test_the_tuner_hands_tuner_fn_the_same_accessor(tmp_path):
  examples = _artifact(standard_artifacts.Examples, tmp_path / 'examples')
  examples.split_names = json.dumps(['train', 'eval'])
  properties = {
    'tuner_fn': f'{__name__}.recording_tuner_fn',
    'train_args': json.dumps({'num_steps': 1}),
    'eval_args': json.dumps({'num_steps': 1}),
    'custom_config': json.dumps({}),
  }
  SEEN.clear()
  with pytest.raises(LookupError, match='handed over'):
    context = base_executor.BaseExecutor.Context(tmp_dir=str(tmp_path / 'tmp'), unique_id='1')
    tuner_executor.Executor(context).Do({'examples': [examples]}, {}, properties)
  assert SEEN == [(data_accessor.dataset, None)]
  assert component.TunedInputTuner.EXECUTOR_SPEC.executor_class is tuner_executor.Executor
