"""Date columns (contracts/dates.py) as numbers, computed from the string with TensorFlow ops
inside the graph: the same ops in training and in every serving signature, so a served
tf.Example keeps its date as written.

  decided()     the train sample's string columns read as dates, by the one rule (an order no
                cell decides: --date-order, else UnusableData naming the column and the flag);
  with_dates()  the spec with those columns' features among its numeric inputs;
  read_sample() both, on the Trainer's train sample, with the features' values for the means;
  features()    a batch of date strings → {feature: float32 [B]}, NaN where a cell is no date
                (missing: the input feeds the train sample's mean, as any missing number);
  add_features() a batch's date columns replaced by their features (tabular_input.parse_tabular
                and predict_columns call it).
"""

import dataclasses
from typing import Dict, List

import numpy as np
import tensorflow as tf

from contracts import dates
from contracts.errors import UnusableData

# The rewrite of a form's match into '|'-separated fields, in its order: year, month, day, hour,
# minute, seconds, zone (a field absent from the cell left empty, read as 0).
_REWRITE = {
  dates.YMD: r'\1|\2|\3|0\4|0\5|0\6|\7',
  dates.DMY: r'\3|\2|\1|0\4|0\5|0\6|\7',
  dates.MDY: r'\3|\1|\2|0\4|0\5|0\6|\7',
}
_MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def feature_name(column: str, feature: str) -> str:
  return f'{column}.{feature}'


def decided(sample: Dict[str, List[str]], order: str, where: str) -> Dict[str, dates.DateColumn]:
  """{column: DateColumn} of the sampled string columns ({column: cells}) read as dates."""
  found = dates.columns(sample, order)
  for name, read in sorted(found.items()):
    if not read.order:
      raise UnusableData(dates.ambiguous_line(name, sample[name], where))
  return found


def with_dates(spec, found: Dict[str, dates.DateColumn]):
  """The spec with each date column (a categorical one) read as its features: numbers."""
  if not found:
    return spec
  derived = [
    feature_name(name, feature)
    for name, read in sorted(found.items())
    for feature in read.features()
  ]
  return dataclasses.replace(
    spec,
    categorical=[c for c in spec.categorical if c not in found],
    numeric=spec.numeric + derived,
    dates={name: f'{read.form} {read.order}' for name, read in found.items()},
  )


def derived(spec) -> Dict[str, tuple]:
  """{numeric input: (date column, feature)} of the spec's date features."""
  return {key: (key.rpartition('.')[0], key.rpartition('.')[2]) for key in spec.date_inputs}


def _days_from_civil(year, month, day):
  """Days since 1970-01-01 of a proleptic Gregorian date (int64 tensors; H. Hinnant's)."""
  year = year - tf.cast(month <= 2, tf.int64)
  era = tf.math.floordiv(year, 400)
  of_era = year - era * 400
  shifted = tf.where(month > 2, month - 3, month + 9)
  of_year = (153 * shifted + 2) // 5 + day - 1
  return era * 146097 + of_era * 365 + of_era // 4 - of_era // 100 + of_year - 719468


def features(cells: tf.Tensor, form_order: str, wanted=dates.FEATURES) -> Dict[str, tf.Tensor]:
  """Strings [B] of a date column (`form_order`: its spec.dates value, 'slash dmy') → {feature:
  float32 [B]} (the days as float64 until cast: seconds are kept), NaN where a cell is no date
  of the form, as contracts/dates.parse reads it."""
  form, order = form_order.split(' ')
  pattern = dates.PATTERNS[form]
  cells = tf.strings.strip(cells)
  matched = tf.strings.regex_full_match(cells, pattern)
  rewritten = tf.strings.regex_replace(cells, pattern, _REWRITE[dates.order_of(form, order)])
  rewritten = tf.where(matched, rewritten, '1970|1|1|0|0|0|')  # a placeholder, masked below
  fields = tf.strings.split(rewritten, '|').to_tensor(default_value='0', shape=[None, 7])
  number = lambda i: tf.strings.to_number(fields[:, i], tf.int64)  # noqa: E731
  year, month, day, hour, minute = (number(i) for i in range(5))
  seconds = tf.strings.to_number(fields[:, 5], tf.float64)
  zone = fields[:, 6]
  digits = tf.strings.join([tf.strings.regex_replace(zone, '[^0-9]', ''), '0000'])  # HHMM
  hours, minutes = (tf.strings.to_number(tf.strings.substr(digits, i, 2), tf.int64) for i in (0, 2))
  offset = hours * 60 + minutes
  offset = tf.where(tf.strings.substr(zone, 0, 1) == '-', -offset, offset)
  leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
  clipped = tf.clip_by_value(month, 1, 12)
  month_days = tf.gather(tf.constant(_MONTH_DAYS, tf.int64), clipped - 1) + tf.cast(
    (clipped == 2) & leap, tf.int64
  )
  valid = (
    matched
    & (month >= 1)
    & (month <= 12)
    & (day >= 1)
    & (day <= month_days)
    & (hour <= 23)
    & (minute <= 59)
    & (seconds < 60)
  )
  days = _days_from_civil(year, clipped, tf.clip_by_value(day, 1, 31))
  of_day = tf.cast(hour * 3600 + minute * 60, tf.float64) + seconds
  found = {
    'year': year,
    'month': month,
    'day_of_year': days - _days_from_civil(year, tf.ones_like(year), tf.ones_like(year)) + 1,
    'day_of_week': tf.math.floormod(days + 3, 7),  # 1970-01-01 was a Thursday; Monday 0
    'hour': hour,
    'seconds_of_day': of_day,
    'days': tf.cast(days, tf.float64) + of_day / 86400 - tf.cast(offset, tf.float64) / 1440,
  }
  nan = tf.constant(np.nan, tf.float32)
  return {
    key: tf.where(valid, tf.cast(value, tf.float32), nan)
    for key, value in found.items()
    if key in wanted
  }


def add_features(columns: Dict[str, tf.Tensor], spec) -> Dict[str, tf.Tensor]:
  """`columns` with each date column's strings [B] replaced by its features (float32 [B], NaN
  where missing), named as spec.numeric names them."""
  columns = dict(columns)
  inputs = derived(spec)
  for name, form_order in spec.dates.items():
    cells = columns.pop(name)
    wanted = [feature for key, (column, feature) in inputs.items() if column == name]
    for feature, value in features(cells, form_order, wanted).items():
      columns[feature_name(name, feature)] = value
  return columns


def read_sample(spec, present: dict, order: str, where: str) -> tuple:
  """(the spec with its sampled string columns read as dates (with_dates), `present` (the train
  sample, {column: ragged values}) with their features for the means, the summary's line ('' :
  none)); `order`: --date-order, for a slash column no cell decides."""
  sample = {
    key: [v.decode('utf-8', 'replace') for v in present[key].flat_values.numpy()]
    for key in spec.categorical
    if key in present
  }
  found = decided(sample, order, where)
  if not found:
    return spec, present, ''
  spec = with_dates(spec, found)
  present = dict(present)
  for name, form_order in spec.dates.items():
    written = present[name].to_tensor(default_value='', shape=[None, 1])[:, 0]
    for feature, value in features(written, form_order, found[name].features()).items():
      present[feature_name(name, feature)] = tf.RaggedTensor.from_tensor(value[:, None])
  return spec, present, dates.line(found)
