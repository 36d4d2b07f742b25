"""A regression serving model's numbers, monitored as the features are (docs/monitoring.md): the
label's and the prediction's distribution shift, each measured with TFDV's Jensen-Shannon
divergence on quantile histograms (distances.monitoring_schema's comparator).

- The label, when the serving data carries it (labels joined back): its serving statistics
  against the train split's (the StatisticsGen artifact).
- The prediction (PREDICTION): the serving model's serving_default on the serving rows against
  the same model on the first TRAINING_SAMPLE train-split rows.
Both drift against the previous window's (STATISTICS_FILE beside its statistics).
"""

import copy
import glob
import os
from typing import Dict, List, NamedTuple, Optional

import numpy as np

from contracts import serving, trainer_options
from metadata import artifact_reader, model_answers
from monitoring import distances

PREDICTION = 'model prediction'  # its name among the compared features
STATISTICS_FILE = 'RegressionStats.pb'  # the window's label (when served) and predictions
TRAINING_SAMPLE = 5000  # train-split rows the model predicts for the training side


def model_dir(model_uri: str) -> str:
  """The SavedModel folder of a Trainer's Model artifact."""
  from tfx.utils import path_utils

  return path_utils.serving_model_path(model_uri)


def is_regression(model_uri: str, model_task: str = '') -> bool:
  """Whether the model predicts a number: a module file's model as its blessing judged it
  (`model_task`, lineage.serving_model's), the project's as its task.txt says."""
  task = model_task or serving.task(model_dir(model_uri))
  return task == trainer_options.REGRESSION


def predict(saved_model_dir: str, examples: List[bytes]) -> np.ndarray:
  """serving_default's number for serialized tf.Examples (metadata/model_answers.py)."""
  return model_answers.predicted(model_answers.load(saved_model_dir, True), examples)


def _schema(names: List[str], threshold: float):
  """FLOAT features, each with a JSD skew and drift comparator on its quantile histograms."""
  from tensorflow_metadata.proto.v0 import schema_pb2

  schema = schema_pb2.Schema()
  for name in names:
    feature = schema.feature.add(name=name, type=schema_pb2.FLOAT)
    for comparator in (feature.skew_comparator, feature.drift_comparator):
      part = getattr(comparator, distances.JSD)
      part.threshold = threshold
      part.source.type = schema_pb2.HistogramSelection.QUANTILES
  return schema


def statistics(columns: Dict[str, np.ndarray]):
  """TFDV statistics of FLOAT features {name: values} (NaN: missing), in memory."""
  import pyarrow as pa
  import tensorflow_data_validation as tfdv
  from tensorflow_data_validation.statistics import stats_impl

  arrays = [
    pa.array(
      [[float(v)] if np.isfinite(v) else None for v in np.asarray(values, np.float64)],
      pa.list_(pa.float32()),
    )
    for values in columns.values()
  ]
  batch = pa.RecordBatch.from_arrays(arrays, list(columns))
  options = tfdv.StatsOptions(schema=_schema(list(columns), 1.0))
  return stats_impl.generate_statistics_in_memory(batch, options)


def only(statistics_list, name: str):
  """A copy of a statistics list's first dataset with feature `name` alone (None: absent)."""
  found = artifact_reader.features_by_name(statistics_list.datasets[0]).get(name)
  if found is None:
    return None
  kept = copy.deepcopy(statistics_list)
  del kept.datasets[1:]
  del kept.datasets[0].features[:]
  kept.datasets[0].features.add().CopyFrom(found)
  return kept


def shift(name: str, training, serving_statistics, threshold: float, previous=None) -> dict:
  """{measure, value, threshold, flagged, drift} of one numeric feature, as distances.compare's
  entries: TFDV's skew (training vs serving) and drift (previous vs serving) measurements."""
  import tensorflow_data_validation as tfdv

  schema = _schema([name], threshold)
  skew = tfdv.validate_statistics(training, schema, serving_statistics=serving_statistics)
  entry = distances.measurements(skew, 'skew_measurements').get(name)
  if entry is None:  # no values on one side: nothing to compare
    return {}
  entry['drift'] = None
  if previous is not None:
    drift = tfdv.validate_statistics(serving_statistics, schema, previous_statistics=previous)
    entry['drift'] = distances.measurements(drift, 'drift_measurements').get(name)
  return entry


def _threshold(name: str, thresholds: Dict[str, float]) -> float:
  return thresholds.get(name, thresholds.get('*', distances.DEFAULT_THRESHOLDS[distances.JSD]))


class Numbers(NamedTuple):
  entries: Dict[str, dict]  # name → distances.compare's entry, for the label (when served) and
  # PREDICTION
  charts: Dict[str, tuple]  # name → (training, serving) statistics of that feature, for the page
  window: object  # the serving side's statistics, both features: STATISTICS_FILE


def compare(
  model: dict,
  training_statistics,
  examples: List[bytes],
  thresholds: Dict[str, float],
  previous_folder: Optional[str] = None,
) -> Numbers:
  """The label's (when served) and PREDICTION's shift; drift against `previous_folder`'s
  STATISTICS_FILE. `model`: lineage.serving_model's."""
  import tensorflow_data_validation as tfdv

  from monitoring import images

  saved_model = model_dir(model['model_uri'])
  shards = sorted(glob.glob(os.path.join(glob.escape(model['examples_uri']), 'Split-train', '*')))
  trained = {
    PREDICTION: statistics(
      {PREDICTION: predict(saved_model, images.read_records(shards, TRAINING_SAMPLE))}
    )
  }
  served = {PREDICTION: predict(saved_model, examples)}
  label = model['label']
  labels = model_answers.raw_labels(examples, label)
  if (
    labels is not None
    and np.isfinite(labels).any()
    and only(training_statistics, label) is not None
  ):
    trained[label] = only(training_statistics, label)
    served[label] = labels
  window = statistics(served)
  path = os.path.join(previous_folder or '', STATISTICS_FILE)
  previous = tfdv.load_stats_binary(path) if previous_folder and os.path.isfile(path) else None
  entries, charts = {}, {}
  for name, training in trained.items():
    serving_side = only(window, name)
    before = only(previous, name) if previous is not None else None
    entry = shift(name, training, serving_side, _threshold(name, thresholds), before)
    if entry:
      entries[name] = entry
    charts[name] = (training, serving_side)
  return Numbers(dict(sorted(entries.items())), charts, window)
