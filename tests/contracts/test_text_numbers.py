"""contracts/text_numbers.py: numbers written as text, one cell (predict, monitor, labels) and a
column (the Arrow CsvExampleGen) read alike."""

import math

import pyarrow as pa
import pytest

from contracts import text_numbers

READ = {
  '$13.08': 13.08,
  '8.91%': 8.91,
  '1,234.5': 1234.5,
  '-$2.50': -2.5,
  '$-2.50': -2.5,
  '(3.20)': -3.2,
  '($1,234.50)': -1234.5,
  '12.5 €': 12.5,
  '¥1,000': 1000.0,
  '£ 3': 3.0,
  ' 7 ': 7.0,
  '1e3': 1000.0,
  '.5': 0.5,
}
MISSING = ['unknown', 'N/A', '?', '-', 'null', 'None', 'missing', '']
ODD = ['abc', '12,5', '1,23', '$', '$$3', '3 4', '--3', '(3', '%']


@pytest.mark.parametrize('cell, number', READ.items())
def test_a_number_written_as_text_is_read_as_that_number(cell, number):
  assert text_numbers.parse(cell) == pytest.approx(number)


@pytest.mark.parametrize('cell', MISSING)
def test_a_placeholder_is_missing(cell):
  assert math.isnan(text_numbers.parse(cell))


@pytest.mark.parametrize('cell', ODD)
def test_other_text_is_no_number(cell):
  with pytest.raises(ValueError):
    text_numbers.parse(cell)


def test_a_column_reads_every_cell_as_one_cell_reads():
  cells = list(READ) + MISSING + ODD
  values, placeholders, odd = text_numbers.read_array(pa.array(cells, pa.string()))
  assert values.to_pylist()[: len(READ)] == pytest.approx(list(READ.values()))
  assert values.to_pylist()[len(READ) :] == [None] * (len(MISSING) + len(ODD))
  assert (placeholders, odd) == (len(MISSING) - 1, len(ODD))  # the empty cell is no placeholder


def _census(cells):
  return text_numbers.census(pa.array(cells, pa.string()))


def test_ten_unknown_cells_in_300_leave_a_column_of_numbers_and_a_few_odd_ones_too():
  counts = _census([str(i) for i in range(290)] + ['unknown'] * 10)
  assert counts == text_numbers.Census(290, 0, 10, 0) and text_numbers.readable(counts)
  prices = [f'${i:,}.5' for i in range(995, 1295)]
  prices[::60] = ['oops'] * 5  # 5 of 300: 1.7 %
  assert text_numbers.readable(_census(prices))
  prices[1::60] = ['oops'] * 5  # 10 of 300: 3.3 %
  assert not text_numbers.readable(_census(prices))


def test_words_big_integers_and_a_label_with_placeholders_are_no_column_of_numbers():
  assert not text_numbers.readable(_census(['red', 'green', '$3'] * 500))  # words: sampled
  assert not text_numbers.readable(_census(['12345678901234567890', '1']))  # nothing marked
  label = _census(['$1.5', '$2'] * 100 + ['unknown'])
  assert text_numbers.readable(label) and not text_numbers.readable(label, strict=True)
  assert text_numbers.readable(_census(['$1.5', '$2']), strict=True)


@pytest.mark.parametrize(
  'cell,read',
  [
    ('12,5', '12.5'),
    ('225.162,43 €', '225162.43 €'),
    ('-1.234.567,8', '-1234567.8'),
    ('1.234', '1.234'),  # a point alone may be a decimal point: as written
    ('12.5,3', '12.5,3'),  # points that group no thousands: not a number, as written
    ('1,2,3', '1,2,3'),
  ],
)
def test_a_decimal_comma_files_cells_read_with_a_decimal_point(cell, read):
  assert text_numbers.with_decimal_point(cell) == read
