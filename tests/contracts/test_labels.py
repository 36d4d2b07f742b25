"""contracts/labels: rows without a label, and integer labels that look like a number to
regress rather than classes."""

import collections
import random

from contracts import labels


def test_missing_cells_are_empty_or_spreadsheet_words():
  assert [labels.is_missing(v) for v in ('', ' ', 'NA', b'nan', None, 'N/A')] == [True] * 6
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
