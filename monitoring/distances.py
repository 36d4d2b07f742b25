"""Serving statistics against the training ones: TFDV's skew_comparator per feature
(Jensen-Shannon divergence on the quantile histograms of numeric features, L-infinity on the value
counts of categorical ones), drift_comparator against the previous monitoring window, and the
schema's SERVING environment (the label may be absent). Thresholds and their calibration:
docs/monitoring.md."""

import copy
from typing import Dict, List, Sequence

from metadata import artifact_reader

SERVING, TRAINING = 'SERVING', 'TRAINING'
JSD, L_INFINITY = 'jensen_shannon_divergence', 'infinity_norm'
# Calibrated on the taxi run (docs/monitoring.md): eval-vs-train noise reached JSD 0.15 and
# L-infinity 0.04; a +3 sd shift measured JSD >= 0.81, moving 20 % of a column's values 0.2.
DEFAULT_THRESHOLDS = {JSD: 0.3, L_INFINITY: 0.1}
MEASURE_NAMES = {JSD: 'Jensen-Shannon divergence', L_INFINITY: 'L-infinity distance'}
_MEASURE_TYPES = {'JENSEN_SHANNON_DIVERGENCE': JSD, 'L_INFTY': L_INFINITY}


def measure_for(feature_statistics) -> str:
  """JSD for numeric features (L-infinity measures 0 on them), L-infinity for categorical ones."""
  return JSD if feature_statistics.HasField('num_stats') else L_INFINITY


def monitoring_schema(schema, training_statistics, label: str, thresholds: Dict[str, float]):
  """A copy of the training schema with TRAINING and SERVING environments (the label not in
  SERVING) and a skew and drift comparator on every other feature the training statistics
  hold. `thresholds`: {feature or '*': threshold} from --skew-threshold; else the schema's own
  comparator threshold; else DEFAULT_THRESHOLDS."""
  from tensorflow_metadata.proto.v0 import schema_pb2

  schema = copy.deepcopy(schema)
  for environment in (TRAINING, SERVING):
    if environment not in schema.default_environment:
      schema.default_environment.append(environment)
  stats = artifact_reader.features_by_name(training_statistics.datasets[0])
  for feature in schema.feature:
    if feature.name == label:
      if SERVING not in feature.not_in_environment:
        feature.not_in_environment.append(SERVING)
      continue
    if feature.name not in stats:
      continue
    measure = measure_for(stats[feature.name])
    for comparator in (feature.skew_comparator, feature.drift_comparator):
      own = getattr(comparator, measure).threshold if comparator.HasField(measure) else None
      threshold = thresholds.get(feature.name, thresholds.get('*', own))
      comparator.Clear()
      part = getattr(comparator, measure)
      part.threshold = DEFAULT_THRESHOLDS[measure] if threshold is None else threshold
      if measure == JSD:  # outlier-proof: the standard histogram's range is set by the maximum
        part.source.type = schema_pb2.HistogramSelection.QUANTILES
  return schema


def statistics(serialized_examples: List[bytes], schema, leave_out: Sequence[str] = ()):
  """TFDV statistics of serialized tf.Examples, decoded with and computed with the training
  schema (StatisticsGen's options: TFDV's defaults plus the schema), in memory. `leave_out`: the
  label, which serving data may carry (joined back, or training records replayed) but the model
  does not take: left out, it is no SERVING anomaly."""
  import pyarrow as pa
  import tensorflow_data_validation as tfdv
  from tensorflow_data_validation.statistics import stats_impl
  from tfx_bsl.coders import example_coder

  decoder = example_coder.ExamplesToRecordBatchDecoder(schema.SerializeToString())
  batch = decoder.DecodeBatch(serialized_examples)
  kept = [i for i, name in enumerate(batch.schema.names) if name not in leave_out]
  batch = pa.RecordBatch.from_arrays(
    [batch.column(i) for i in kept], [batch.schema.names[i] for i in kept]
  )
  return stats_impl.generate_statistics_in_memory(batch, tfdv.StatsOptions(schema=schema))


def measurements(anomalies, field: str) -> Dict[str, dict]:
  """{feature: {'measure', 'value', 'threshold', 'flagged'}} of an Anomalies proto's
  `field` ('skew_measurements' or 'drift_measurements')."""
  found = {}
  for info in anomalies.drift_skew_info:
    for m in getattr(info, field):
      measure = _MEASURE_TYPES.get(type(m).Type.Name(m.type))
      if measure:
        found['.'.join(info.path.step)] = {
          'measure': measure,
          'value': round(float(m.value), 6),
          'threshold': float(m.threshold),
          'flagged': bool(m.value > m.threshold),
        }
  return found


def _descriptions(anomalies) -> Dict[str, List[str]]:
  return {
    name: [reason.description or reason.short_description for reason in info.reason]
    for name, info in sorted(anomalies.anomaly_info.items())
  }


def compare(training_statistics, serving_statistics, schema, previous_statistics=None) -> dict:
  """{'features': {name: {measure, value, threshold, flagged, drift}}, 'anomalies': {name:
  [description]}, 'flagged': [names], 'anomalies_proto': the serving data's Anomalies}.
  `schema` is monitoring_schema's."""
  import tensorflow_data_validation as tfdv

  skew = tfdv.validate_statistics(
    training_statistics, schema, environment=TRAINING, serving_statistics=serving_statistics
  )
  serving = tfdv.validate_statistics(
    serving_statistics, schema, environment=SERVING, previous_statistics=previous_statistics
  )
  features = measurements(skew, 'skew_measurements')
  drift = measurements(serving, 'drift_measurements') if previous_statistics else {}
  for name, entry in features.items():
    entry['drift'] = drift.get(name)
  anomalies = _descriptions(serving)  # drift above its threshold is one of them too
  flagged = sorted(
    set(anomalies)
    | {n for n, e in features.items() if e['flagged'] or (e['drift'] or {}).get('flagged')}
  )
  return {
    'features': dict(sorted(features.items())),
    'anomalies': anomalies,
    'flagged': flagged,
    'anomalies_proto': serving,
  }
