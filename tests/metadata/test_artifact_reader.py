"""metadata/artifact_reader.py on hand-made StatisticsGen statistics: features by name and the
label counts (exact for a string label, histogram buckets for a numeric one)."""

from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import statistics_pb2

from metadata import artifact_reader

TRAIN = """
features { path { step: "label_name" } string_stats { rank_histogram {
  buckets { label: "dog" sample_count: 3 } buckets { label: "cat" sample_count: 5 } } } }
features { path { step: "label" } num_stats { histograms {
  buckets { low_value: 0 high_value: 0.5 sample_count: 5 }
  buckets { low_value: 0.5 high_value: 1 sample_count: 3 } } } }
features { name: "plain" num_stats { mean: 1 } }
"""


def _dataset(text: str):
  return text_format.Parse(text, statistics_pb2.DatasetFeatureStatistics())


def test_features_are_found_by_their_path_or_plain_name():
  found = artifact_reader.features_by_name(_dataset(TRAIN))
  assert list(found) == ['label_name', 'label', 'plain']
  assert found['plain'].num_stats.mean == 1


def test_label_counts_of_the_first_label_with_statistics_in_every_split():
  statistics = {'train': _dataset(TRAIN), 'eval': _dataset(TRAIN)}
  key, per_split, exact = artifact_reader.label_counts(statistics, ['absent', 'label_name'])
  assert (key, exact) == ('label_name', True)
  assert per_split == {'train': [('cat', 5), ('dog', 3)], 'eval': [('cat', 5), ('dog', 3)]}
  key, per_split, exact = artifact_reader.label_counts(statistics, ['label'])
  assert (key, exact, per_split['train']) == ('label', False, [('0–0.5', 5), ('0.5–1', 3)])
  assert artifact_reader.label_counts(statistics, ['absent']) == (None, {}, True)


def _numeric(kind: str, minimum: float, maximum: float, present: int, zeros: int):
  return _dataset(
    f'features {{ path {{ step: "target" }} type: {kind} num_stats {{ min: {minimum} '
    f'max: {maximum} num_zeros: {zeros} common_stats {{ num_non_missing: {present} }} }} }}'
  )


def test_two_class_counts_of_a_numeric_label_only_where_the_statistics_make_them_exact():
  binary = {'train': _numeric('INT', 0, 1, 90, 30), 'eval': _numeric('INT', 0, 1, 10, 10)}
  assert artifact_reader.two_class_counts(binary, 'target', 0.0) == {
    'train': {'0': 30, '1': 60},
    'eval': {'0': 10},
  }
  tips = {'train': _numeric('FLOAT', 0, 7.5, 50, 20)}  # trains as tips > 0
  assert artifact_reader.two_class_counts(tips, 'target', 0.0) == {'train': {'0': 20, '1': 30}}
  assert artifact_reader.two_class_counts(tips, 'target', 8.0) == {'train': {'0': 50}}
  assert artifact_reader.two_class_counts(tips, 'target', 2.5) == {}  # between: histograms only
  three = {'train': _numeric('INT', 0, 2, 90, 30)}
  assert artifact_reader.two_class_counts(three, 'target', 0.0) == {}
  assert artifact_reader.two_class_counts(binary, 'absent', 0.0) == {}


def test_regression_figures_of_the_candidate_and_the_serving_model_by_their_names(tmp_path):
  from ml_metadata.proto import metadata_store_pb2

  from contracts import evaluation as names
  from tests.support import evaluations

  folder = evaluations.write_metrics(
    str(tmp_path),
    {
      ('candidate', names.MAE_KEY, False): 1.13,
      ('candidate', names.RMSE_KEY, False): 2.4,
      ('candidate', names.R2_KEY, False): 0.88,
      ('candidate', names.MAPE_KEY, False): float('nan'),  # a label of 0
      ('candidate', names.BASELINE_MAE_KEY, False): 7.06,
      ('baseline', names.RMSE_KEY, False): 2.5,
      ('candidate', names.RMSE_KEY, True): -0.1,
      ('candidate', 'example_count', False): 40.0,
    },
    {('zone', 'north'): {names.MAE_KEY: 0.9, names.R2_KEY: 0.91, 'example_count': 30.0}},
  )
  evaluation = metadata_store_pb2.Artifact(uri=folder)
  assert artifact_reader.regression_figures(evaluation) == {
    'candidate': {
      names.MAE_KEY: 1.13,
      names.RMSE_KEY: 2.4,
      names.R2_KEY: 0.88,
      names.BASELINE_MAE_KEY: 7.06,
    },
    'baseline': {names.RMSE_KEY: 2.5},
  }
  assert names.improvement(artifact_reader.regression_figures(evaluation)['candidate']) == (
    1 - 1.13 / 7.06
  )
  assert artifact_reader.slice_metrics(evaluation) == {
    'zone = north': {'accuracy': None, 'examples': 30, names.MAE_KEY: 0.9, names.R2_KEY: 0.91}
  }
  classifier = evaluations.write_metrics(
    str(tmp_path / 'classifier'), {('candidate', names.ACCURACY_KEY, False): 0.9}
  )
  assert artifact_reader.regression_figures(metadata_store_pb2.Artifact(uri=classifier)) == {}
