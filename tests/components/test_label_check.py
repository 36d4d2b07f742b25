"""LabelCheck's value checks on real TFDV statistics of small tables (components/label_check)."""

import pandas as pd
import pytest
import tensorflow_data_validation as tfdv

from components.label_check import executor
from contracts.errors import UnusableData


def _train_statistics(**columns):
  return tfdv.generate_statistics_from_dataframe(pd.DataFrame(columns)).datasets[0]


# Label columns with empty cells, as CsvExampleGen reads them (an int column with a missing value
# stays int; pandas would make it float).
_WITH_GAPS = {
  'ids': ['0', '1', '', '1'],
  'floats': ['0.5', '', '-0.5', '0.7'],
  'names': ['setosa', '', 'virginica', 'setosa'],
  'one_id': ['3', '', '3', '3'],
  'one_name': ['setosa', '', 'setosa', 'setosa'],
}


@pytest.fixture(scope='module')
def with_gaps(tmp_path_factory):
  path = tmp_path_factory.mktemp('labels') / 'train.csv'
  rows = zip(*_WITH_GAPS.values())
  path.write_text(','.join(_WITH_GAPS) + '\n' + ''.join(','.join(row) + '\n' for row in rows))
  return tfdv.generate_statistics_from_csv(str(path)).datasets[0]


@pytest.mark.parametrize(
  'label,message',
  [
    ([0, 1, None, 1, None], "label 'label': 2 of 5 train examples have no value"),
    (['setosa', 'setosa', 'setosa'], "every train example has class 'setosa': one class"),
    ([3, 3, 3], 'every train example is above 0 (--label-threshold): one class'),
    ([0.5, 0.7, 0.9], 'every train example is above 0 (--label-threshold): one class'),
    ([-0.5, -0.7, 0.0], 'every train example is at most 0 (--label-threshold): one class'),
  ],
)
def test_labels_that_cannot_train_a_classifier_stop_the_run(label, message):
  statistics = _train_statistics(x=[float(i) for i in range(len(label))], label=label)
  with pytest.raises(UnusableData) as raised:
    executor.check_values(statistics, 'label', 0.0)
  assert message in str(raised.value)


@pytest.mark.parametrize('label', [[0, 1, 2, 1], [-0.5, 0.5, 0.1], ['setosa', 'virginica']])
def test_two_classes_or_more_pass(label):
  statistics = _train_statistics(x=[1.0] * len(label), label=label)
  assert executor.check_values(statistics, 'label', 0.0) == 0  # no example takes a default


@pytest.mark.parametrize('label,default', [('ids', '0'), ('floats', '0.0'), ('names', 'unknown')])
def test_missing_labels_pass_with_a_default_of_the_label_type(with_gaps, label, default):
  assert executor.check_values(with_gaps, label, 0.0, default) == 1  # the one empty cell


@pytest.mark.parametrize(
  'label,default,message',
  [
    ('ids', '', "label 'ids': 1 of 4 train examples have no value"),
    ('ids', 'unknown', "--label-default 'unknown': label 'ids' holds a class id"),
    ('ids', '-1', "--label-default '-1': class ids are 0 or more"),
    ('floats', 'high', "--label-default 'high': label 'floats' holds a number"),
    ('one_id', '3', 'every train example is above 0 (--label-threshold): one class'),
    ('one_name', 'setosa', "every train example has class 'setosa': one class"),
  ],
)
def test_a_missing_default_or_one_that_does_not_fit_stops_the_run(
  with_gaps, label, default, message
):
  with pytest.raises(UnusableData) as raised:
    executor.check_values(with_gaps, label, 0.0, default)
  assert message in str(raised.value)


def test_a_second_class_from_the_default_passes(with_gaps):
  assert executor.check_values(with_gaps, 'one_id', 0.0, '0') == 1
  assert executor.check_values(with_gaps, 'one_name', 0.0, 'unknown') == 1


def test_numbers_as_classes_pass_for_the_trainer_to_read_and_a_constant_is_a_constant():
  """`0.0`/`1.0` are two classes written as decimals: not refused as 'numbers, not all integers'
  (the Trainer reads every value: labels.numeric_task); a constant `5.0` or five `149709.0`
  prices are a constant, with no threshold offered at their only value, whatever the task."""
  floats = _train_statistics(x=[1.0] * 4, outcome=[0.0, 1.0, 1.0, 0.0])
  assert executor.check_values(floats, 'outcome', None) == 0
  assert executor.check_values(floats, 'outcome', None, '', 'auto') == 0
  fares = _train_statistics(x=[1.0] * 5, fare=[4.5, 7.25, 9.0, 12.0, 30.5])
  assert executor.check_values(fares, 'fare', None) == 0  # the Trainer refuses it, every value read
  assert executor.check_values(fares, 'fare', 10.0) == 0
  for task in ('classification', 'regression', 'auto'):
    for column, value in (([5.0] * 4, '5'), ([149709.0] * 5, '149709')):
      with pytest.raises(UnusableData) as raised:
        executor.check_values(
          _train_statistics(x=[1.0] * len(column), y=column), 'y', None, '', task
        )
      said = str(raised.value)
      assert f'train examples is {value}: a constant' in said and 'threshold' not in said


def test_a_label_to_regress_needs_numbers_that_are_not_all_the_same():
  numbers = _train_statistics(x=[1.0] * 5, fare=[4.5, 7.25, 9.0, 12.0, 30.5])
  assert executor.check_values(numbers, 'fare', None, '', 'regression') == 0
  same = _train_statistics(x=[1.0] * 3, fare=[4.5, 4.5, 4.5])
  with pytest.raises(UnusableData, match='every one of the 3 train examples is 4.5: a constant'):
    executor.check_values(same, 'fare', None, '', 'regression')
  names = _train_statistics(x=[1.0] * 3, kind=['a', 'b', 'a'])
  with pytest.raises(UnusableData, match='the train split holds text, not numbers'):
    executor.check_values(names, 'kind', None, '', 'regression')
  assert executor.check_values(numbers, 'fare', None, '', 'auto') == 0  # compiled: numbers regress
