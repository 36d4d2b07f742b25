"""contracts/labels: rows without a label, and integer labels that look like a number to
regress rather than classes."""

import collections
import random

from contracts import labels


def test_missing_cells_are_empty_or_spreadsheet_words():
  assert [labels.is_missing(v) for v in ('', ' ', 'NA', b'nan', None, 'N/A', ' ? ', '-')] == [
    True
  ] * 8
  assert [labels.is_missing(v) for v in ('0', 'no', b'x', 'nana')] == [False] * 4


def test_integer_labels_with_many_rare_values_look_regressed_and_classes_do_not():
  rng = random.Random(3)
  measured = collections.Counter(int(rng.gauss(150, 75)) for _ in range(440))
  assert len(measured) > 100 and labels.looks_regressed(measured)
  said = labels.regression_message('target', measured, 'the 440 train and eval examples')
  assert said.startswith(f'--label target: {len(measured)} distinct integer values in the 440 ')
  assert '--label-threshold T (the median: ' in said and '\n' not in said
  assert not labels.looks_regressed(collections.Counter(i % 30 for i in range(440)))  # 30 classes
  assert not labels.looks_regressed(collections.Counter(range(19)))  # a tiny CSV, a row a class


def test_a_float_label_is_refused_in_one_line_with_a_threshold_to_start_from():
  said = labels.float_label_message('fare', 'the first 200 rows of x.csv', 9.65)
  assert said.startswith('--label fare: numbers, not all integers, in the first 200 rows of x.csv')
  assert said.endswith('with --label-threshold T (the median: 9.65)') and '\n' not in said
  assert labels.float_label_message('fare', 'the train split').endswith('--label-threshold T')


def test_the_task_is_decided_from_the_label_values_and_said_with_the_other_choice():
  decide = labels.decide_task
  assert decide('fare', ['3.25', '7', '12.5'], 'w', None, 'auto')[0] == 'regression'
  quantity = [str(v) for v in range(100, 160)]  # 60 integers, one row each: a quantity
  assert decide('price', quantity, 'w', None, 'auto')[0] == 'regression'
  assert decide('grade', [str(i % 5) for i in range(60)], 'w', None, 'auto')[0] == 'classification'
  assert decide('kind', ['cat', 'dog'], 'w', None, 'auto')[0] == 'classification'
  assert decide('price', ['$13.08', '"$1,234.50"'[1:-1], '(2.50)'], 'w', None, 'auto') == (
    'regression',
    'price holds numbers, not all integers',  # written as text: contracts/text_numbers.py
  )
  assert decide('fare', ['3.25', '7'], 'w', 5.0, 'auto') == (
    'classification',
    '--label-threshold 5',
  )
  assert decide('grade', ['1', '2', '1'], 'w', None, 'regression') == (
    'regression',
    '--task regression',
  )
  line = labels.task_line('fare', 'regression', None, 'fare holds numbers, not all integers')
  assert line == (
    'fare as a number (regression: fare holds numbers, not all integers; two classes: '
    '--label-threshold T)'
  )
  assert labels.task_line('fare', 'classification', 10.0, '--label-threshold 10') == (
    'fare > 10 as two classes (--label-threshold 10)'
  )


def test_what_the_label_trains_as_is_said_with_the_threshold_that_made_it():
  assert labels.threshold_line('tips', 0.0) == 'tips > 0 as two classes (--label-threshold 0)'
  assert labels.threshold_line('fare', 12.5).startswith('fare > 12.5 as two classes')
  assert labels.threshold_line('species', None) == 'species as classes'


def test_spellings_that_differ_in_case_or_spaces_are_one_name_the_most_common_one():
  names, merged = labels.one_spelling({'yes': 5, 'Yes': 2, ' YES ': 1, 'No': 3, 'no ': 3, 'x': 1})
  assert names == ['No', 'x', 'yes']  # a tie goes to the first in sort order
  assert merged == {'No': {'No': 3, 'no ': 3}, 'yes': {'yes': 5, 'Yes': 2, ' YES ': 1}}
  assert labels.spellings_line(merged) == (
    "'No' from 'No' (3), 'no ' (3); 'yes' from 'yes' (5), 'Yes' (2), ' YES ' (1)"
  )


def test_one_rule_decides_the_task_whether_integers_are_written_3_or_3_0():
  """labels.numeric_task: the command line's first rows (decide_task) and the Trainer's every
  row; `0.0`/`1.0` are two classes written as decimals, said so."""
  decide = labels.decide_task
  assert decide('outcome', ['0.0', '1.0', '1.0'], 'w', None, 'auto') == (
    'classification',
    'outcome holds class ids written as decimals (0.0, 1.0)',
  )
  assert decide('outcome', ['0.0', '1.0'], 'w', None, 'classification')[0] == 'classification'
  assert decide('grade', ['-1', '2', '2'], 'w', None, 'auto') == (
    'classification',
    'grade holds class ids or names',
  )
  quantity = {float(v): 1 for v in range(100, 160)}  # integers as decimals, one row each
  assert labels.numeric_task('price', quantity, 'the 60 rows')[0] == 'regression'
  assert labels.numeric_task('price', {149709.0: 5}, 'w')[0] == 'classification'  # LabelCheck's
  assert labels.numeric_task('fare', {3.25: 1, 7.0: 2}, 'w') == (
    'regression',
    'fare holds numbers, not all integers',
  )
  assert labels.numeric_task('grade', {i: 12 for i in range(5)}, 'w')[0] == 'classification'


def test_a_constant_is_said_to_be_a_constant_with_no_threshold_offered():
  said = labels.constant_message('price', '149709', 'the 5 train examples')
  assert said == (
    "label 'price': every one of the 5 train examples is 149709: a constant; a classifier "
    'needs two classes or more, and a constant has nothing to regress'
  )
  assert labels.regression_message('n', {float(i): 1 for i in range(30)}, 'w').endswith(
    '(the median: 14)'
  )


def test_classes_short_of_the_eval_minimum_get_advice_that_works():
  """A class that cannot reach the minimum at any eval share is not told a larger one."""
  said = labels.short_classes_message(
    'image classes', {'cat': 9, 'emu': 0}, {'cat': 40, 'emu': 3}, 5
  )
  assert said == (
    "image classes: eval examples of 'emu' 0 (3 in all); the Evaluator needs 5 of each "
    "(--min-eval-class-examples) and would bless no model: 'emu' holds fewer than 5 in all, so "
    'no eval share reaches it: add examples (about 24 in all at this eval share of 21%), drop or '
    'merge the class, or --min-eval-class-examples 0 (not checked)'
  )
  assert 'a larger --eval-percent (this split holds 20%)' in labels.short_classes_message(
    '--label y', {'a': 4, 'b': 6}, {'a': 20, 'b': 30}, 5
  )
  assert labels.short_classes_message('--label y', {'a': 4}, {'a': 20}, 0) == ''  # not checked
  assert labels.short_classes_message('--label y', {'a': 5}, {'a': 20}, 5) == ''


def test_spellings_with_unicode_spaces_or_compatibility_forms_are_one_name_each_shown():
  names, merged = labels.one_spelling(
    {
      'oui': 40,
      'oui\u00a0': 7,
      'non': 30,
      'non\u202f': 2,
      'ＮＯＮ': 1,
      'New\u2009 York': 3,
      'new york': 1,
    }
  )
  assert names == ['New\u2009 York', 'non', 'oui']
  line = labels.spellings_line(merged)
  assert line == (
    "'New\\u2009 York' from 'New\\u2009 York' (3), 'new york' (1); "
    "'non' from 'non' (30), 'non\\u202f' (2), 'ＮＯＮ' (1); 'oui' from 'oui' (40), 'oui\\xa0' (7)"
  )
  assert labels.spelling_key('\u3000Yes\t ') == labels.folded_key(' yes') == 'yes'
  assert labels.spelling_key('o ui') != labels.spelling_key('oui')  # a space inside stays one
