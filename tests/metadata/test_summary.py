"""The summary's blessing and push lines for the project's own rules (every class predicted, a
model already serving; TFMA's reasons are checked on real runs in tests/e2e/test_blessing.py), and
execution properties followed to their leaves."""

from contracts import evaluation
from metadata import summary


def test_a_blessed_model_says_which_missed_classes_were_allowed_or_too_few_to_judge():
  found = {evaluation.CANDIDATE: 0.952}
  assert summary.blessing_reason(None, True, found) == (
    'accuracy 0.952, every class predicted; no serving model to compare with'
  )
  missed = {
    '7': {'examples': 6, 'judged': True},
    '9': {'examples': 1, 'judged': False},
  }
  assert summary.blessing_reason(None, True, found, missed=missed, candidate_is_serving=True) == (
    'accuracy 0.952, class 7 never predicted (6 eval examples), allowed, class 9 never predicted '
    '(1 eval example), too few to judge; it is the serving model (not compared with itself)'
  )


def test_a_model_already_serving_is_not_pushed_again_and_says_where_it_serves():
  result = {'components': {}, 'executed': [], 'cached': [], 'wall_seconds': 1.0}
  lines = summary.render(dict(result, pushed_to=None, already_serving='/o/serving/17'))
  assert 'pushed to:  not again: already serving as /o/serving/17' in lines
  assert 'pushed to:  not pushed' in summary.render(dict(result, pushed_to=None))


def test_property_leaves_are_named_by_their_key_or_by_their_path():
  value = '{"splits": {"train": 8, "eval": 2}, "seed": 1}'
  assert summary.property_leaves('output_config', value) == {'train': 8, 'eval': 2, 'seed': 1}
  assert summary.property_leaves('output_config', value, keep_path=True) == {
    'output_config.splits.train': 8,
    'output_config.splits.eval': 2,
    'output_config.seed': 1,
  }
  assert summary.property_leaves('model_source', '{not json') == {'model_source': '{not json'}
