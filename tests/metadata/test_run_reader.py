"""Execution properties followed to their leaves."""

from metadata import run_reader


def test_property_leaves_are_named_by_their_key_or_by_their_path():
  value = '{"splits": {"train": 8, "eval": 2}, "seed": 1}'
  assert run_reader.property_leaves('output_config', value) == {'train': 8, 'eval': 2, 'seed': 1}
  assert run_reader.property_leaves('output_config', value, keep_path=True) == {
    'output_config.splits.train': 8,
    'output_config.splits.eval': 2,
    'output_config.seed': 1,
  }
  assert run_reader.property_leaves('model_source', '{not json') == {'model_source': '{not json'}
