"""The range of each number the pipeline takes."""

from contracts import limits


def test_a_number_out_of_its_range_says_what_is_wrong():
  assert limits.problem('eval_percent', 0) == 'must be between 1 and 99'
  assert limits.problem('eval_percent', 99) == ''
  assert limits.problem('batch_size', 0) == 'must be positive'
  assert limits.problem('eval_steps', -1) == 'must be 0 (the default: the whole eval split) or more'
  assert limits.problem('image_size', [0, -2]).startswith('must be 0')
  assert limits.problem('min_improvement', 1) == 'must be at least 0 and below 1'


def test_a_name_without_a_rule_is_never_wrong():
  assert limits.problem('label', -5) == ''
