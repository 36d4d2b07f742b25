"""Stops the run before training when the label the Trainer would learn is not in the data."""

from typing import List

from tensorflow_metadata.proto.v0 import schema_pb2

from contracts import artifacts


class LabelMissing(RuntimeError):
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
