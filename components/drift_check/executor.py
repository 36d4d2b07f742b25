"""Compares a new data version's statistics with the previous one's, with the curated schema's
drift comparators (L-infinity for categorical features, Jensen-Shannon for numeric ones)."""

import os
from typing import List, Optional

import tensorflow_data_validation as tfdv
from tensorflow_metadata.proto.v0 import anomalies_pb2

from contracts import artifacts, splits
from contracts.anomalies import plain_words

SPLIT = splits.TRAIN
_DRIFT = {
  anomalies_pb2.AnomalyInfo.COMPARATOR_L_INFTY_HIGH,
  anomalies_pb2.AnomalyInfo.COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH,
}


class DriftFound(RuntimeError):
  """The new data version differs from the previous one beyond the schema's thresholds."""


def _train_statistics(statistics_uri: str):
  return tfdv.load_stats_binary(artifacts.statistics_path(statistics_uri, SPLIT))


def describe_drift(statistics_uri: str, previous_uri: Optional[str], schema_uri: str) -> List[str]:
  """One line per drifting feature; none without a previous version (or the same one)."""
  if not previous_uri or previous_uri == statistics_uri:
    return []
  schema = tfdv.load_schema_text(os.path.join(schema_uri, 'schema.pbtxt'))
  anomalies = tfdv.validate_statistics(
    _train_statistics(statistics_uri), schema, previous_statistics=_train_statistics(previous_uri)
  )
  return [
    f"feature '{name}': {plain_words(info)}"
    for name, info in sorted(anomalies.anomaly_info.items())
    if any(reason.type in _DRIFT for reason in info.reason)
  ]


def check(statistics_uri: str, previous_uri: Optional[str], schema_uri: str) -> None:
  """Raises DriftFound listing every drifting feature."""
  drift = describe_drift(statistics_uri, previous_uri, schema_uri)
  if drift:
    raise DriftFound(
      'data drift against the previous data version, training stopped: ' + '; '.join(drift)
    )
