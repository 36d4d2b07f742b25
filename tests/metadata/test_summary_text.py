"""The summary's push line for a model already serving."""

from metadata import summary_text
from metadata.run_result import Push, RunResult


def test_a_model_already_serving_is_not_pushed_again_and_says_where_it_serves():
  result = RunResult(wall_seconds=1.0, push=Push(already_serving='/o/serving/17'))
  lines = summary_text.render(result)
  assert 'pushed to:  not again: already serving as /o/serving/17' in lines
  assert 'pushed to:  not pushed' in summary_text.render(RunResult(wall_seconds=1.0, push=Push()))
