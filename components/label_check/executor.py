"""Stops the run before training when the label the Trainer would learn is not in the data, or
its values cannot train the model of the run's task (missing in some examples, a constant;
classes: one class, one side of the threshold; regression: no numbers)."""

from typing import List, Optional

from tensorflow_metadata.proto.v0 import schema_pb2, statistics_pb2

from contracts import artifacts, labels
from contracts.errors import UnusableData
from contracts.trainer_options import CLASSIFICATION, REGRESSION


class LabelMissing(UnusableData):
  """The data has no feature of the label's name: there is nothing to train against."""


def _names(features) -> List[str]:
  return sorted(f.name for f in features)


def check(schema: schema_pb2.Schema, label: str) -> None:
  """Raises LabelMissing naming the label and the features the data does have."""
  top_level = [f for f in schema.feature if f.name != artifacts.SEQUENCE_STRUCT]
  if label in _names(top_level):
    return
  lists = [f for f in schema.feature if f.name == artifacts.SEQUENCE_STRUCT]
  have = ', '.join(_names(top_level)) or 'none'
  if lists:
    have = (
      f'context features: {have}; feature lists (not usable as a label): '
      f'{", ".join(_names(lists[0].struct_domain.feature))}'
    )
  else:
    have = f'features: {have}'
  raise LabelMissing(f"no label '{label}' in the data ({have}); name the label with --label KEY")


def check_values(
  statistics: statistics_pb2.DatasetFeatureStatistics,
  label: str,
  threshold: Optional[float],
  default: str = '',
  task: str = CLASSIFICATION,
) -> int:
  """Raises UnusableData when the train split's label values cannot train the `task`'s model
  ('regression': a number per example, not all the same); else returns how many train examples
  have no label value and take `default`.
  `threshold`: a number label trains as (label > threshold); without one, numbers as classes
  are the Trainer's to read (integers are class ids, `0.0`/`1.0` too); `default`: the label of examples without one ('': such examples are an error)."""
  (feature,) = [f for f in statistics.features if f.path.step == [label] or f.name == label]
  kind = feature.WhichOneof('stats')
  common = getattr(feature, kind).common_stats
  examples = statistics.num_examples
  nans = sum(h.num_nan for h in feature.num_stats.histograms[:1]) if kind == 'num_stats' else 0
  absent = int(common.num_missing) + nans
  if absent and not default:
    raise UnusableData(
      f"label '{label}': {absent} of {examples} train examples have no value; fill them in, "
      'drop those rows, or say what they mean with --label-default'
    )
  filled = _typed_default(feature, label, default) if absent else None
  if feature.type != statistics_pb2.FeatureNameStatistics.STRING:
    low, high = feature.num_stats.min, feature.num_stats.max
    if filled is not None:
      low, high = min(low, filled), max(high, filled)
    if low == high and threshold is None:  # whatever the task: no threshold at its only value
      raise UnusableData(
        labels.constant_message(label, f'{low:g}', f'the {examples} train examples')
      )
  if task == REGRESSION:
    _check_regressed(feature, label)
    return absent
  if feature.type == statistics_pb2.FeatureNameStatistics.STRING:  # class names
    classes = {v.value for v in feature.string_stats.top_values[:1]}
    if filled is not None:
      classes.add(filled)
    if feature.string_stats.unique < 2 and len(classes) < 2:
      raise UnusableData(
        f"label '{label}': every train example has class {min(classes or [''])!r}: one class; "
        'a classifier needs at least two'
      )
    return absent
  # Numbers as classes: integers (`0.0`/`1.0` are too) are class ids, the Trainer reading every
  # value (labels.numeric_task, the run's first look before it); a threshold makes two classes.
  if threshold is not None and (low > threshold or high <= threshold):
    side = f'above {threshold:g}' if low > threshold else f'at most {threshold:g}'
    raise UnusableData(
      f"label '{label}': every train example is {side} (--label-threshold): one class; "
      'a classifier needs at least two'
    )
  return absent


def _check_regressed(feature, label: str) -> None:
  """A label to regress holds numbers (a constant: refused by check_values first)."""
  if feature.type == statistics_pb2.FeatureNameStatistics.STRING:
    raise UnusableData(
      f"label '{label}': the train split holds text, not numbers (--task regression); "
      'regression needs a number per example'
    )


def _typed_default(feature, label: str, default: str):
  """--label-default as the label column's type (a class id, a float, a class name)."""
  kinds = statistics_pb2.FeatureNameStatistics
  parse, what = {kinds.INT: (int, 'a class id (integer)'), kinds.FLOAT: (float, 'a number')}.get(
    feature.type, (str, '')
  )
  try:
    value = parse(default)
  except ValueError:
    raise UnusableData(f"--label-default {default!r}: label '{label}' holds {what}") from None
  if feature.type == kinds.INT and value < 0:
    raise UnusableData(f'--label-default {default!r}: class ids are 0 or more')
  return value
