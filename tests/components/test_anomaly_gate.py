"""Plain-words anomaly messages from real TFDV validation output."""

import os

from google.protobuf import text_format
import pytest
import tensorflow_data_validation as tfdv
from tensorflow_metadata.proto.v0 import schema_pb2, statistics_pb2

from components.anomaly_gate import executor
from contracts.anomalies import ANOMALIES_FILE, AnomaliesFound, describe_anomalies

SCHEMA = text_format.Parse(
  """
feature { name: "label" type: INT int_domain { min: 0 max: 9 }
          presence { min_fraction: 1.0 } }
feature { name: "height" type: INT presence { min_fraction: 1.0 } }
""",
  schema_pb2.Schema(),
)


def _write(uri, split, stats_text):
  stats = text_format.Parse(stats_text, statistics_pb2.DatasetFeatureStatisticsList())
  anomalies = tfdv.validate_statistics(stats, SCHEMA)
  os.makedirs(os.path.join(uri, f'Split-{split}'))
  with open(os.path.join(uri, f'Split-{split}', ANOMALIES_FILE), 'wb') as f:
    f.write(anomalies.SerializeToString())


def _stats(label_max):
  return f"""datasets {{ num_examples: 10
    features {{ path {{ step: "label" }} type: INT
      num_stats {{ common_stats {{ num_non_missing: 10 min_num_values: 1 max_num_values: 1 }}
                   min: 0 max: {label_max} }} }}
    features {{ path {{ step: "height" }} type: INT
      num_stats {{ common_stats {{ num_non_missing: 10 min_num_values: 1 max_num_values: 1 }}
                   min: 8 max: 8 }} }} }}"""


def test_clean_data_passes(tmp_path):
  _write(str(tmp_path), 'train', _stats(9))
  assert describe_anomalies(str(tmp_path)) == []
  executor.check(str(tmp_path))  # does not raise


def test_out_of_domain_label_is_named_with_its_split(tmp_path):
  _write(str(tmp_path), 'train', _stats(9))
  _write(str(tmp_path), 'eval', _stats(12))
  lines = describe_anomalies(str(tmp_path))
  assert len(lines) == 1 and lines[0].startswith("eval: feature 'label': ")
  assert '12' in lines[0] or 'large' in lines[0].lower()
  with pytest.raises(AnomaliesFound, match='1 data anomaly, training stopped'):
    executor.check(str(tmp_path))
