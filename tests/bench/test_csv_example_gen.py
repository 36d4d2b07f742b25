"""bench/csv_example_gen.py's own arguments (its figures: tests/bench/test_pipeline_scaling.py)."""

import pytest


def test_csv_benchmark_refuses_an_against_tree_that_is_not_a_checkout(tmp_path, capsys):
  """`bench.csv_example_gen --against DIR` times DIR's executor beside this tree's: a folder that
  is no checkout of the project is one line, exit 2, before any CSV is written."""
  from bench import csv_example_gen

  with pytest.raises(SystemExit) as exit_info:
    csv_example_gen.main(['--against', str(tmp_path)])
  assert exit_info.value.code == 2
  assert f'--against {tmp_path}: not a checkout of this project' in capsys.readouterr().err
  assert list(tmp_path.iterdir()) == []
