"""LabelCheck's value checks on real TFDV statistics of small tables (components/label_check)."""

import pandas as pd
import pytest
import tensorflow_data_validation as tfdv

from components.label_check import executor
from contracts.errors import UnusableData


def _train_statistics(**columns):
  return tfdv.generate_statistics_from_dataframe(pd.DataFrame(columns)).datasets[0]


@pytest.mark.parametrize(
  'label,message',
  [
    ([0, 1, None, 1, None], "label 'label': 2 of 5 train examples have no value"),
    (['setosa', 'setosa', 'setosa'], "every train example has class 'setosa': one class"),
    ([3, 3, 3], 'every train example has class 3: one class'),
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
  executor.check_values(_train_statistics(x=[1.0] * len(label), label=label), 'label', 0.0)
