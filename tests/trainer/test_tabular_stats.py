"""trainer/tabular_stats.py: the generated preprocessing_fn on a small table through tf.Transform
on Beam (vocabularies with OOV buckets, moments equal numpy's over the whole split), read back
into a TabularSpec, and the Trainer's table-free vocabulary ids equal tf.Transform's own."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from trainer import data_spec, tabular_input, tabular_stats

ROWS = 300


def _table():
  """{column: values} of ROWS rows: a number with NaN and missing cells, an int, a category
  whose tail is rarer than the rest, the label."""
  rng = np.random.default_rng(0)
  fare = rng.normal(10, 4, ROWS)
  fare[::37] = np.nan  # not finite: missing
  miles = rng.integers(0, 50, ROWS)
  company = [f'c{int(i)}' for i in rng.zipf(1.5, ROWS) % 40]
  label = rng.integers(0, 2, ROWS)
  return fare, miles, company, label


def _records(fare, miles, company, label, skip_fare=()):
  records = []
  for i in range(ROWS):
    feature = {
      'miles': tf.train.Feature(int64_list=tf.train.Int64List(value=[miles[i]])),
      'company': tf.train.Feature(bytes_list=tf.train.BytesList(value=[company[i].encode()])),
      'tips': tf.train.Feature(int64_list=tf.train.Int64List(value=[label[i]])),
    }
    if i not in skip_fare:
      feature['fare'] = tf.train.Feature(float_list=tf.train.FloatList(value=[fare[i]]))
    records.append(tf.train.Example(features=tf.train.Features(feature=feature)))
  return [r.SerializeToString() for r in records]


@pytest.fixture(scope='module')
def analysed(tmp_path_factory):
  """(transform output folder, records, table, the rows without a fare)."""
  import tensorflow_transform.beam as tft_beam
  from tfx_bsl.public import tfxio

  table = _table()
  skipped = set(range(5, ROWS, 50))  # rows without a fare at all
  records = _records(*table, skip_fare=skipped)
  feature_spec = {
    'fare': tf.io.VarLenFeature(tf.float32),
    'miles': tf.io.FixedLenFeature([], tf.int64),
    'company': tf.io.FixedLenFeature([], tf.string),
    'tips': tf.io.FixedLenFeature([], tf.int64),
  }
  from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io, schema_utils

  schema = schema_utils.schema_from_feature_spec(feature_spec)
  folder = str(tmp_path_factory.mktemp('tabular_stats'))
  coder = tfxio.TFExampleBeamRecord(physical_format='tfrecord', schema=schema)
  import apache_beam as beam

  with tft_beam.Context(temp_dir=folder + '/tmp'):
    with beam.Pipeline() as p:
      raw = p | beam.Create(records) | coder.BeamSource()
      fn = lambda inputs: tabular_stats.preprocessing_fn(inputs, {'label_key': 'tips'})
      transform_fn = (raw, coder.TensorAdapterConfig()) | tft_beam.AnalyzeDataset(fn)
      _ = transform_fn | tft_beam.WriteTransformFn(folder + '/graph')
  metadata = dataset_metadata.DatasetMetadata(schema)  # raw metadata, as TFX's Transform writes
  metadata_io.write_metadata(metadata, folder + '/graph/metadata')
  return folder + '/graph', records, table, skipped


def _spec(**changes):
  spec = data_spec.TabularSpec(
    'tips',
    None,
    2,
    numeric=['fare', 'miles'],
    categorical=['company'],
    integer=['miles'],
    label_values=[0, 1],
    integer_label=True,
  )
  return dataclasses.replace(spec, **changes)


def test_moments_are_numpys_over_the_whole_split(analysed):
  graph, records, (fare, miles, _, _), skipped = analysed
  found = tabular_stats.read(graph, records[0], _spec())
  present = np.array([v for i, v in enumerate(fare) if i not in skipped and np.isfinite(v)])
  np.testing.assert_allclose(found['mean']['fare'], present.astype(np.float32).mean(), rtol=1e-5)
  np.testing.assert_allclose(found['variance']['fare'], present.astype(np.float32).var(), rtol=1e-4)
  np.testing.assert_allclose(found['mean']['miles'], miles.mean(), rtol=1e-6)
  np.testing.assert_allclose(found['variance']['miles'], miles.var(), rtol=1e-5)


def test_vocabulary_most_frequent_first_then_oov(analysed):
  graph, records, (_, _, company, _), _ = analysed
  spec = tabular_stats.apply(_spec(), graph, records[0])
  vocabulary = spec.vocabularies['company']
  counts = {value: company.count(value) for value in set(company)}
  assert sorted(vocabulary) == sorted(counts)
  assert [counts[v] for v in vocabulary] == sorted(counts.values(), reverse=True)
  assert spec.hash_bins == len(vocabulary) + tabular_stats.OOV_BUCKETS
  assert spec.numeric_mean['miles'] == pytest.approx(float(np.mean(analysed[2][1])))


def test_trainer_ids_are_tf_transforms(analysed):
  """The Trainer's table-free ids (model_columns) equal tf.Transform's apply_vocabulary's, for
  known values and unknown ones (OOV buckets)."""
  import tensorflow_transform as tft

  graph, records, (_, _, company, _), _ = analysed
  spec = tabular_stats.apply(_spec(), graph, records[0])
  values = sorted(set(company)) + ['never-seen', 'another one', '']
  ids = tabular_input.model_columns({'company': tf.constant(values)}, spec)['company'].numpy()
  output = tft.TFTransformOutput(graph)
  raw = tf.io.parse_example(tf.constant(records[:1]), output.raw_feature_spec())
  transformed = []
  for value in values:  # through tf.Transform's own graph, one value at a time
    raw['company'] = tf.constant([value])
    found = output.transform_raw_features(raw)
    transformed.append(int(found[tabular_stats.output_name('company', 'id')][0]))
  assert list(ids) == transformed
  assert all(i < len(spec.vocabularies['company']) for i in ids[: len(set(company))])
  assert all(0 <= i < spec.hash_bins for i in ids)


def test_no_vocabulary_is_all_oov():
  ids = tabular_stats.vocabulary_ids(tf.constant(['a', 'b']), []).numpy()
  assert all(0 <= i < tabular_stats.OOV_BUCKETS for i in ids)


def test_output_names_are_the_column_s_or_a_digest_of_an_unusual_one():
  assert tabular_stats.output_name('trip_miles', 'mean') == 'trip_miles__mean'
  odd = tabular_stats.output_name('Fare ($)', 'vocabulary')
  assert odd.startswith('vocabulary_') and odd != tabular_stats.output_name(
    'Fare (€)', 'vocabulary'
  )
