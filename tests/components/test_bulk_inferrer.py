"""The BulkInferrer executor's input: damage judged against the recorded records, read around."""

import json
import os

import pytest
from tfx.proto import bulk_inferrer_pb2
from tfx.types import standard_artifacts
from tfx.utils import proto_utils

from components.bulk_inferrer import executor
from records import damage
from tests.support import regression_model, shards


def _examples(tmp_path, records, cut_at: int):
  """An InferExampleGen-like artifact: one Split-infer shard cut inside record `cut_at`."""
  examples = standard_artifacts.Examples()
  examples.uri = str(tmp_path / 'examples')
  examples.split_names = json.dumps(['infer'])
  examples.set_string_custom_property('split_counts', json.dumps({'infer': len(records)}))
  os.makedirs(tmp_path / 'examples' / 'Split-infer')
  path = shards.write_shard(
    str(tmp_path / 'examples' / 'Split-infer' / 'data-00000-of-00001'), records
  )
  with open(path, 'rb') as f:
    data = f.read()
  with open(path, 'wb') as f:
    f.write(data[: shards.record_offset(data, cut_at) + 5])
  return examples


def _properties(percent: float) -> dict:
  spec = bulk_inferrer_pb2.DataSpec(example_splits=['infer'])
  return {'data_spec': proto_utils.proto_to_json(spec), 'max_damaged_percent': percent}


def test_damage_above_the_bound_stops_inference_and_below_it_is_read_around(tmp_path):
  records = shards.digit_records(100)
  inputs = {'examples': [_examples(tmp_path, records, cut_at=60)]}
  with pytest.raises(damage.DamagedShards, match=r'40 of 100 recorded records missing'):
    executor.readable_examples(inputs, _properties(1.0), str(tmp_path / 'scratch'))
  readable = executor.readable_examples(inputs, _properties(50.0), str(tmp_path / 'scratch'))
  (salvaged,) = readable['examples']
  assert salvaged.uri == str(tmp_path / 'scratch') and salvaged.split_names == '["infer"]'
  (copy,) = executor.inferred_files(readable, _properties(50.0))
  assert shards.read_all(copy) == records[:60]  # every intact record, and nothing else


def test_a_regression_models_inference_result_becomes_predicted_numbers(tmp_path):
  """TFX's BulkInferrer through bulk_inference ([batch, 1]), then PredictionCsv's rows."""
  from components.prediction_csv import executor as csv_executor
  from contracts import serving

  fares = [1.5, 2.0, 1000.25]
  records = [regression_model.record(f, 'ab') for f in fares]
  examples = _examples(tmp_path, records, cut_at=len(records))  # cut after the last: intact
  model = standard_artifacts.Model()
  model.uri = str(tmp_path / 'model')
  regression_model.save(os.path.join(model.uri, 'Format-Serving'))
  blessing = standard_artifacts.ModelBlessing()
  blessing.uri = str(tmp_path / 'blessing')
  blessing.set_int_custom_property('blessed', 1)
  result = standard_artifacts.InferenceResult()
  result.uri = str(tmp_path / 'inference')
  os.makedirs(result.uri)
  spec = bulk_inferrer_pb2.ModelSpec(model_signature_name=[serving.BULK_INFERENCE])
  properties = dict(_properties(1.0), model_spec=proto_utils.proto_to_json(spec))
  executor.Executor().Do(
    {'examples': [examples], 'model': [model], 'model_blessing': [blessing]},
    {'inference_result': [result]},
    properties,
  )
  path, _ = csv_executor.write(result.uri, model.uri, str(tmp_path / 'out'))
  with open(path) as f:
    assert f.read().splitlines() == ['id,prediction'] + [
      f'record-{i},{regression_model.expected(f, "ab")}' for i, f in enumerate(fares, 1)
    ]
