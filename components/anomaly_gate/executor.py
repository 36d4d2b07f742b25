"""Reads ExampleValidator's output and says, in plain words, what is wrong with the data."""
import os
from typing import List

from tensorflow_metadata.proto.v0 import anomalies_pb2
from tfx.dsl.io import fileio

ANOMALIES_FILE = 'SchemaDiff.pb'  # what ExampleValidator writes in each Split-<name> folder


class AnomaliesFound(RuntimeError):
  """The data does not match its schema; training must not start."""


def describe_anomalies(anomalies_uri: str) -> List[str]:
  """One line per anomaly: `split: feature 'x': what is wrong`."""
  lines = []
  for split_dir in sorted(fileio.glob(os.path.join(anomalies_uri, 'Split-*'))):
    path = os.path.join(split_dir, ANOMALIES_FILE)
    if not fileio.exists(path):
      continue
    anomalies = anomalies_pb2.Anomalies()
    with fileio.open(path, 'rb') as f:
      anomalies.ParseFromString(f.read())
    split = os.path.basename(split_dir.rstrip('/'))[len('Split-'):]
    for feature, info in sorted(anomalies.anomaly_info.items()):
      lines.append(f"{split}: feature '{feature}': {plain_words(info)}")
    if anomalies.HasField('dataset_anomaly_info'):
      lines.append(f'{split}: data set: {plain_words(anomalies.dataset_anomaly_info)}')
  return lines


def plain_words(info: anomalies_pb2.AnomalyInfo) -> str:
  if info.short_description and info.description:
    return f'{info.short_description} ({info.description.strip().rstrip(". ")})'
  return info.short_description or info.description


def check(anomalies_uri: str) -> None:
  """Raises AnomaliesFound listing every anomaly."""
  problems = describe_anomalies(anomalies_uri)
  if problems:
    raise AnomaliesFound(f'{len(problems)} data anomal{"y" if len(problems) == 1 else "ies"}, '
                         'training stopped: ' + '; '.join(problems))
