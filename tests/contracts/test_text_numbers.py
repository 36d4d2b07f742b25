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
  '−5.2': -5.2,  # U+2212, as spreadsheets and scientific exports write it
  '‒3': -3.0,
  '–3': -3.0,
  '﹣3': -3.0,
  '－3': -3.0,
  '$−2.50': -2.5,
  '1 234.5': 1234.5,
  '1\u00a0234\u00a0567': 1234567.0,
  '1\u202f234': 1234.0,
  '1\u2009234': 1234.0,
  "1'234.50": 1234.5,
  '1\u2019234.50': 1234.5,
  '3.94M': 3940000.0,
  '534.8k': 534800.0,
  '12K': 12000.0,
  '$1.2B': 1.2e9,
  '2bn': 2e9,
  '+$5': 5.0,
  '1.594e+05': 159400.0,
}
MISSING = ['unknown', 'N/A', '?', '-', 'null', 'None', 'missing', '']
ODD = ['abc', '12,5', '1,23', '$', '$$3', '3 4', '--3', '(3', '%', '12 5', '1 2345', "1'23"]
ODD += ['—5', '―5', '3.94m', '5 k', '1,234 567', 'call 555 1234', '12~5', '1e3k', '2024-01-05']
MISSING += ['−', '—']


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
  values, placeholders, odd, _ = text_numbers.read_array(pa.array(cells, pa.string()))
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


def test_a_decimal_comma_file_reads_space_thousands_with_a_decimal_comma():
  assert text_numbers.parse('1 234,5', decimal_comma=True) == 1234.5
  assert text_numbers.parse('−1\u00a0234\u00a0567,25', decimal_comma=True) == -1234567.25
  with pytest.raises(ValueError):
    text_numbers.parse('1 234,5')  # a comma-separated file: the comma groups thousands


def test_a_column_of_unicode_minus_signs_is_a_column_of_numbers_and_says_its_forms():
  cells = pa.array([f'−{i}.5' if i % 2 else f'{i}.5' for i in range(100)], pa.string())
  counts = text_numbers.census(cells)
  assert counts == text_numbers.Census(100, 50, 0, 0) and text_numbers.readable(counts)
  assert text_numbers.read_array(cells).forms == ['minus signs −']
  assert text_numbers.read_array(pa.array(['$ 5', '12.5 €'])).forms == ['currency signs']
  money = pa.array(['$1,234', "1'234", '3.94M', '(5)', '8%', 'n/a', 'x'], pa.string())
  assert text_numbers.read_array(money).forms == [
    'currency signs',
    'percent signs',
    'thousands separators',
    'accounting negatives',
    'k/M/B suffixes',
  ]


def test_a_text_column_of_numbers_no_rule_reads_is_found_with_its_cells_and_words_are_not():
  numeric, cells, shown = text_numbers.unread(
    pa.array(['12~5', '7~1', '3', '', 'n/a', '12~5', '8~0'] * 300, pa.string())
  )
  assert (numeric, cells, shown) == (833, 833, ['12~5', '7~1', '8~0'])  # of the first 1,000
  assert text_numbers.unread(pa.array(['red', 'green', '12~5'] * 10, pa.string()))[0] == 0
  dates = ['2024-01-05', '12:30', '05/01/2024'] * 10
  assert text_numbers.unread(pa.array(dates, pa.string()))[0] == 0  # dates are no numbers
  ids = ['INV-0012', 'order 17', 'A12'] * 10
  assert text_numbers.unread(pa.array(ids, pa.string()))[0] == 0
  sentences = ['it rose 12 5 times', 'the 1 234 of them'] * 10
  assert text_numbers.unread(pa.array(sentences, pa.string()))[0] == 0
