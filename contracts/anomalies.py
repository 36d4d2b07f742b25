"""How the project words data anomalies (ExampleValidator's and DriftCheck's) for people, and the
error that stops a run on them."""

import os
from typing import List

from tensorflow_metadata.proto.v0 import anomalies_pb2

ANOMALIES_FILE = 'SchemaDiff.pb'  # what ExampleValidator writes in each Split-<name> folder


class AnomaliesFound(RuntimeError):
  """The data does not match its schema; training must not start."""


def plain_words(info: anomalies_pb2.AnomalyInfo) -> str:
  if info.short_description and info.description:
    return f'{info.short_description} ({info.description.strip().rstrip(". ")})'
  return info.short_description or info.description


def describe_anomalies(anomalies_uri: str) -> List[str]:
  """One line per anomaly in an ExampleAnomalies artifact: `split: feature 'x': what is wrong`."""
  from tfx.dsl.io import fileio

  lines = []
  for split_dir in sorted(fileio.glob(os.path.join(anomalies_uri, 'Split-*'))):
    path = os.path.join(split_dir, ANOMALIES_FILE)
    if not fileio.exists(path):
      continue
    anomalies = anomalies_pb2.Anomalies()
    with fileio.open(path, 'rb') as f:
      anomalies.ParseFromString(f.read())
    split = os.path.basename(split_dir.rstrip('/'))[len('Split-') :]
    for feature, info in sorted(anomalies.anomaly_info.items()):
      lines.append(f"{split}: feature '{feature}': {plain_words(info)}")
    if anomalies.HasField('dataset_anomaly_info'):
      lines.append(f'{split}: data set: {plain_words(anomalies.dataset_anomaly_info)}')
  return lines
