"""What StatisticsGen and the Evaluator wrote, read for the run report, `pipeline.py compare` and
monitoring: statistics per split, features by name, label counts, TFMA's metrics on the whole
eval split and per slice."""

import json
import math
import os
from typing import Dict, List, Optional, Sequence

from contracts import artifacts, splits
from contracts import evaluation as evaluation_names


def output(nodes: Dict[str, object], key: str):
  """The artifact that one of the run's nodes (run_reader.NodeRun) output as `key`, or None."""
  return next((n.outputs[key] for n in nodes.values() if key in n.outputs), None)


def split_statistics(nodes) -> Dict[str, object]:
  """Split name → DatasetFeatureStatistics of this run's StatisticsGen output, train first."""
  statistics = output(nodes, 'statistics')
  if statistics is None:
    return {}
  import tensorflow_data_validation as tfdv
  from tfx.dsl.io import fileio

  found = {}
  for path in sorted(fileio.glob(os.path.join(statistics.uri, 'Split-*', 'FeatureStats.pb'))):
    split = os.path.basename(os.path.dirname(path))[len('Split-') :]
    found[split] = tfdv.load_stats_binary(path).datasets[0]
  return dict(sorted(found.items(), key=lambda item: (item[0] != 'train', item[0])))


def train_statistics(statistics_uri: str):
  """The DatasetFeatureStatisticsList of a StatisticsGen output's train split."""
  import tensorflow_data_validation as tfdv

  return tfdv.load_stats_binary(artifacts.statistics_path(statistics_uri, splits.TRAIN))


def feature_name(feature) -> str:
  """A FeatureNameStatistics' name: its dotted path (its plain name when it has none)."""
  return '.'.join(feature.path.step) or feature.name


def features_by_name(dataset) -> Dict[str, object]:
  """A DatasetFeatureStatistics' FeatureNameStatistics by feature_name."""
  return {feature_name(f): f for f in dataset.features}


def label_counts(statistics: Dict[str, object], label_keys: Sequence[str]):
  """(feature, {split: [(value, count)]}, exact) from the first label feature with statistics.

  String labels (and the image ExampleGen's `label_name`) have exact per-value counts; a numeric
  label only has StatisticsGen's histogram buckets, marked approximate.
  """
  for key in label_keys:
    per_split = {}
    exact = True
    for split, dataset in statistics.items():
      feature = next((f for f in dataset.features if '.'.join(f.path.step) == key), None)
      if feature is None:
        break
      if feature.HasField('string_stats'):
        buckets = feature.string_stats.rank_histogram.buckets
        per_split[split] = sorted((b.label, b.sample_count) for b in buckets)
      else:
        exact = False
        histogram = next(iter(feature.num_stats.histograms), None)
        per_split[split] = [
          (f'{b.low_value:g}–{b.high_value:g}', b.sample_count)
          for b in (histogram.buckets if histogram else [])
        ]
    if per_split:
      return key, per_split, exact
  return None, {}, True


def two_class_counts(statistics: Dict[str, object], label: str, threshold: float):
  """{split: {class id: count}} of a numeric label that trains as two classes, where the
  statistics make the counts exact: an integer label of 0s and 1s, or a float label that trains
  as (label > threshold) with a threshold of 0 and no negative value (num_zeros is exact, the
  histograms are not), or every value on one side of it. {} otherwise."""
  from tensorflow_metadata.proto.v0 import statistics_pb2

  found = {}
  for split, dataset in statistics.items():
    feature = next((f for f in dataset.features if '.'.join(f.path.step) == label), None)
    if feature is None or not feature.HasField('num_stats'):
      return {}
    numbers = feature.num_stats
    present, zeros = numbers.common_stats.num_non_missing, numbers.num_zeros
    if feature.type == statistics_pb2.FeatureNameStatistics.INT:
      if numbers.min < 0 or numbers.max > 1:
        return {}
      counts = {'0': zeros, '1': present - zeros}
    elif threshold < numbers.min:
      counts = {'1': present}
    elif threshold >= numbers.max:
      counts = {'0': present}
    elif threshold == 0 and numbers.min >= 0:
      counts = {'0': zeros, '1': present - zeros}
    else:
      return {}
    found[split] = {name: int(count) for name, count in counts.items() if count}
  return found


SERVING_MODEL = ' (serving model)'  # after the serving model's metric names


def _whole_eval_split(evaluation):
  """(TFMA metric key, value) of every double-valued metric on the whole eval split."""
  import tensorflow_model_analysis as tfma

  for for_slice in tfma.load_metrics(evaluation.uri):
    if for_slice.slice_key.single_slice_keys:
      continue
    for key_and_value in for_slice.metric_keys_and_values:
      if key_and_value.value.HasField('double_value'):
        yield key_and_value.key, key_and_value.value.double_value.value


def overall_metrics(evaluation: Optional[object]) -> Dict[str, float]:
  """{metric: value} of TFMA's numbers on the whole eval split (not per class); the serving
  model's as 'name (serving model)', the candidate's difference to it as 'name change'."""
  if evaluation is None:
    return {}
  metrics = {}
  for key, value in _whole_eval_split(evaluation):
    if not key.HasField('sub_key'):
      whose = SERVING_MODEL if key.model_name == evaluation_names.BASELINE else ''
      metrics[f'{key.name} change' if key.is_diff else key.name + whose] = value
  return metrics


BINARY_ACCURACY = 'binary_accuracy'  # TFMA's BinaryAccuracy metric, a module file's eval_config


def accuracies(evaluation) -> Dict[str, float]:
  """Overall eval accuracy per TFMA model name (contracts/evaluation.py): the candidate's and,
  when one was serving, the baseline's."""
  metrics = overall_metrics(evaluation)
  names = {
    evaluation_names.CANDIDATE: evaluation_names.ACCURACY_KEY,
    evaluation_names.BASELINE: evaluation_names.ACCURACY_KEY + SERVING_MODEL,
  }
  found = {model: metrics[name] for model, name in names.items() if name in metrics}
  if not found and BINARY_ACCURACY in metrics:  # a module file's Evaluator (TFX's taxi example)
    found[evaluation_names.CANDIDATE] = metrics[BINARY_ACCURACY]
  return found


def _figures(metrics: Dict[str, float], suffix: str = '') -> Dict[str, float]:
  """{figure: value} of a regression model's figures (evaluation_names.REGRESSION_FIGURES) in
  `metrics` under name + suffix; NaN left out (a MAPE of labels near 0, a baseline without the
  train split's figures)."""
  return {
    name: metrics[name + suffix]
    for name in evaluation_names.REGRESSION_FIGURES
    if name + suffix in metrics and not math.isnan(metrics[name + suffix])
  }


def regression_figures(evaluation) -> Dict[str, Dict[str, float]]:
  """A regression model's figures on the whole eval split per TFMA model name
  (contracts/evaluation.py): the candidate's and, when one was compared, the serving model's;
  {} for a classifier's evaluation."""
  metrics = overall_metrics(evaluation)
  found = {
    evaluation_names.CANDIDATE: _figures(metrics),
    evaluation_names.BASELINE: _figures(metrics, SERVING_MODEL),
  }
  return {model: figures for model, figures in found.items() if figures}


def per_class(evaluation) -> Dict[str, Dict[str, List[Optional[float]]]]:
  """{model name: {'recall': [per class id], 'precision': [...]}} on the whole eval split."""
  found: Dict[str, Dict[str, Dict[int, float]]] = {}
  for key, value in _whole_eval_split(evaluation):
    if (
      not key.is_diff
      and key.sub_key.HasField('class_id')
      and key.name in (evaluation_names.RECALL_KEY, evaluation_names.PRECISION_KEY)
    ):
      model = key.model_name or evaluation_names.CANDIDATE
      found.setdefault(model, {}).setdefault(key.name, {})[key.sub_key.class_id.value] = value
  return {  # NaN (a class with no eval example, or never given): None
    model: {
      name: [None if math.isnan(by_id[i]) else by_id[i] for i in sorted(by_id)]
      for name, by_id in metrics.items()
    }
    for model, metrics in found.items()
  }


def _slice_value(key) -> str:
  value = getattr(key, key.WhichOneof('kind'))
  return value.decode(errors='replace') if isinstance(value, bytes) else str(value)


def slice_metrics(evaluation) -> Dict[str, dict]:
  """{'column = value': {'accuracy', 'examples'}} of the candidate per --slice-feature value,
  by slice; a regression model's with its figures too (evaluation_names.REGRESSION_KEYS, where
  measured), its accuracy None. Not the difference to the serving model (TFMA's diff keys)."""
  import tensorflow_model_analysis as tfma

  found = {}
  for for_slice in tfma.load_metrics(evaluation.uri):
    keys = for_slice.slice_key.single_slice_keys
    if not keys:
      continue
    values = {}
    for key_and_value in for_slice.metric_keys_and_values:
      key = key_and_value.key
      if (
        key.model_name in ('', evaluation_names.CANDIDATE)
        and not key.HasField('sub_key')
        and not key.is_diff
      ):
        values[key.name] = key_and_value.value.double_value.value
    where = ', '.join(f'{k.column} = {_slice_value(k)}' for k in keys)
    found[where] = {
      'accuracy': values.get(evaluation_names.ACCURACY_KEY),
      'examples': int(values.get(evaluation_names.EXAMPLE_COUNT_KEY, 0)),
      **_figures(values),
    }
  return dict(sorted(found.items()))


def output_json(nodes, key: str, name: str):
  """The JSON file `name` in this run's output artifact `key` (None when absent)."""
  from tfx.dsl.io import fileio

  artifact = output(nodes, key)
  path = os.path.join(artifact.uri, name) if artifact is not None else ''
  if not path or not fileio.exists(path):
    return None
  with fileio.open(path, 'r') as f:
    return json.load(f)
