"""bench/figures.py: the command line every benchmark shares, and figures keyed for JSON."""

import json

import pytest

from bench import figures


def test_the_parser_takes_quick_where_given_and_json_always(tmp_path):
  with_quick = figures.parser('A benchmark.', quick='small data')
  args = with_quick.parse_args(['--quick', '--json', str(tmp_path / 'out.json')])
  assert args.quick and args.json == str(tmp_path / 'out.json')
  assert with_quick.parse_args([]).json is None and not with_quick.parse_args([]).quick
  without = figures.parser('A benchmark.', prog='python -m bench.x')
  with pytest.raises(SystemExit):
    without.parse_args(['--quick'])
  assert without.prog == 'python -m bench.x' and without.description == 'A benchmark.'


def test_keyed_formats_each_key_tuple_into_the_pattern():
  sizes = {('project', 1000): 1.5, ('stock', 20): 2.0}
  assert figures.keyed(sizes) == {'project_1000': 1.5, 'stock_20': 2.0}
  assert figures.keyed({(4, 2000): 3}, '{}w_{}') == {'4w_2000': 3}


def test_a_benchmark_in_rounds_measures_reports_and_saves(tmp_path, capsys):
  asked = []

  def measure(quick, rounds):
    asked.append((quick, rounds))
    return {'rounds': rounds or 2}

  path = tmp_path / 'figures.json'
  report = lambda made: print(f'{made["rounds"]} rounds')
  figures.main_in_rounds('A benchmark.', 'small', measure, report, ['--rounds', '3'])
  figures.main_in_rounds('A benchmark.', 'small', measure, report, ['--quick', '--json', str(path)])
  assert asked == [(False, 3), (True, 0)]
  assert capsys.readouterr().out == '3 rounds\n2 rounds\n'
  assert json.loads(path.read_text()) == {'rounds': 2}
