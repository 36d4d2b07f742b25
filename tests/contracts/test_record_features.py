"""contracts/record_features: which of a model's columns tf.Example records hold, and the
one-line refusals `predict` and `monitor` share."""

import pytest

from contracts import record_features
from contracts.errors import UserError

COLUMNS = ['fare', 'payment_type', 'trip_miles']


def _record(**cells) -> bytes:
  import tensorflow as tf

  example = tf.train.Example()
  for name, values in cells.items():
    feature = example.features.feature[name]
    if values and isinstance(values[0], bytes):
      feature.bytes_list.value.extend(values)
    else:
      feature.float_list.SetInParent()  # an empty list: the key, no value
      feature.float_list.value.extend(values)
  return example.SerializeToString()


def test_a_feature_counts_in_the_records_holding_a_value_of_it():
  found = record_features.held(
    [_record(fare=[1.0], payment_type=[b'Cash']), _record(fare=[], trip_miles=[2.0]), b'\xff']
  )
  assert found == record_features.Held(3, {'fare': 1, 'payment_type': 1, 'trip_miles': 1})


def test_records_holding_none_of_the_columns_are_refused_naming_both_sides():
  images = record_features.Held(200, {'image_raw': 200, 'label': 200, 'height': 200})
  with pytest.raises(UserError) as raised:
    record_features.absent(COLUMNS, images, '--data x.tfrecord', allowed=True)
  assert str(raised.value) == (
    "--data x.tfrecord: the first 200 record(s) hold none of the model's 3 input columns (fare, "
    'payment_type, trip_miles); their features: height, image_raw, label. Records for another '
    'model or of another table? Every row would be predicted as if all its columns were missing'
  )


def test_some_absent_columns_are_refused_unless_allowed():
  some = record_features.Held(50, {'fare': 50, 'payment_type': 3, 'company': 50})
  with pytest.raises(UserError) as raised:
    record_features.absent(COLUMNS, some, '--data x.tfrecord', allowed=False)
  assert str(raised.value).startswith(
    "--data x.tfrecord: 1 of the model's 3 input columns are in none of the first 50 record(s): "
    'trip_miles (their features: company, fare, payment_type); '
  )
  assert str(raised.value).endswith(f'or {record_features.ALLOW_FLAG} if they are only sparse')
  assert record_features.absent(COLUMNS, some, 'x', allowed=True) == ['trip_miles']
  every = record_features.Held(50, {c: 1 for c in COLUMNS})
  assert record_features.absent(COLUMNS, every, 'x', allowed=False) == []
  assert record_features.absent(COLUMNS, record_features.Held(0, {}), 'x', allowed=False) == []
