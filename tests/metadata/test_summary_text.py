"""The summary's push line for a model already serving."""

from metadata import summary_text
from metadata.run_result import Push, RunResult


def test_a_model_already_serving_is_not_pushed_again_and_says_where_it_serves():
  result = RunResult(wall_seconds=1.0, push=Push(already_serving='/o/serving/17'))
  lines = summary_text.render(result)
  assert 'pushed to:  not again: already serving as /o/serving/17' in lines
  assert 'pushed to:  not pushed' in summary_text.render(RunResult(wall_seconds=1.0, push=Push()))


def test_id_columns_found_in_the_data_are_one_warning_line_that_names_them_and_the_flag():
  lines = summary_text.render(RunResult(wall_seconds=1.0, id_columns=['record_id', 'serial']))
  said = [line for line in lines if 'record_id' in line]
  assert len(said) == 1 and said[0].startswith('warning:')
  assert 'record_id, serial' in said[0] and '--id-column' in said[0] and '\n' not in said[0]
  assert not any('row id' in line for line in summary_text.render(RunResult(wall_seconds=1.0)))
