"""Whether tf.Example records hold a tabular model's input columns, told from their first
records: the one rule `predict` and `monitor` apply to TFRecords (docs/operations.md). A column
absent from a record is a missing value (a number's training mean, a category's ''), so records
of another kind (image records, another table's rows) would all be predicted from nothing, with
exit 0.

- none of the model's columns in the records looked at: refused, one line naming the missing
  columns and the records' features;
- some of them in none of those records: refused too, unless allowed (a column may be sparse,
  absent from the first records and held by later ones); allowed, the caller says which.
"""

from typing import Dict, Iterable, List, NamedTuple, Sequence

from contracts.errors import UserError

FIRST_RECORDS = 200  # records of each file looked at
SHOWN = 8  # names listed in a line before '…'
ALLOW_FLAG = '--allow-missing-columns'


class Held(NamedTuple):
  records: int  # records looked at (tf.Examples or not)
  features: Dict[str, int]  # feature → records holding at least one value of it


def held(serialized: Iterable[bytes]) -> Held:
  """The features of serialized tf.Examples and how many records hold a value of each (a key
  with an empty list holds none, as an empty CSV cell); a record that is no tf.Example holds
  none."""
  from google.protobuf.message import DecodeError
  import tensorflow as tf

  records, features = 0, {}
  for record in serialized:
    records += 1
    try:
      example = tf.train.Example.FromString(record)
    except DecodeError:
      continue
    for name, feature in example.features.feature.items():
      kind = feature.WhichOneof('kind')
      if kind and getattr(feature, kind).value:
        features[name] = features.get(name, 0) + 1
  return Held(records, features)


def _names(names: Sequence[str]) -> str:
  shown = ', '.join(names[:SHOWN])
  return shown + (f', … ({len(names)} in all)' if len(names) > SHOWN else '') if names else 'none'


def absent(columns: Sequence[str], found: Held, where: str, allowed: bool) -> List[str]:
  """The model's `columns` no record of `found` holds (sorted); UserError when it holds none of
  them, or some are absent and not `allowed`. Nothing is judged on no records."""
  missing = sorted(c for c in columns if not found.features.get(c))
  if not found.records or not missing:
    return []
  looked_at = f'the first {found.records:,} record(s)'
  features = _names(sorted(found.features))
  if len(missing) == len(columns):
    raise UserError(
      f"{where}: {looked_at} hold none of the model's {len(columns)} input columns "
      f'({_names(missing)}); their features: {features}. Records for another model or of '
      'another table? Every row would be predicted as if all its columns were missing'
    )
  if not allowed:
    raise UserError(
      f"{where}: {len(missing)} of the model's {len(columns)} input columns are in none of "
      f'{looked_at}: {_names(missing)} (their features: {features}); their rows would be '
      f'predicted with those columns missing (a number at its training mean). Give records '
      f'holding them, or '
      f'{ALLOW_FLAG} if they are only sparse'
    )
  return missing
