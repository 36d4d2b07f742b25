"""contracts/dates: the one rule that reads a column as dates, its features and its lines."""

import pytest

from contracts import dates


@pytest.mark.parametrize(
  'cells, form, order, timed',
  [
    (['2024-03-05', '2025-12-30'], dates.ISO, dates.YMD, False),
    (['2024-03-23T14:19:54', '2024-03-23T14:19:54.250Z'], dates.ISO, dates.YMD, True),
    (['2024-03-23T14:19:54+01:00', '2024-03-23T14:19:54-0800'], dates.ISO, dates.YMD, True),
    (['2024-03-23 14:19', '2024-03-23 14:19:54'], dates.ISO, dates.YMD, True),
    (['05/03/2024', '13/03/2024'], dates.SLASH, dates.DMY, False),
    (['3/5/2024 14:19', '03/13/2024'], dates.SLASH, dates.MDY, True),
    (['05.03.2024', '31.12.2024'], dates.DOTTED, dates.DMY, False),
  ],
)
def test_each_form_is_read_as_dates_by_the_one_rule(cells, form, order, timed):
  read = dates.column(cells)
  assert (read.form, read.order, read.timed, read.unreadable) == (form, order, timed, 0)


def test_the_features_of_a_leap_day_its_day_of_week_and_a_zone():
  leap = dates.parse('2024-02-29T23:59:59.5+01:00', dates.ISO, '')
  assert leap['year'] == 2024 and leap['month'] == 2 and leap['day_of_year'] == 60
  assert leap['day_of_week'] == 3  # a Thursday (Monday 0)
  assert leap['hour'] == 23 and leap['seconds_of_day'] == 86399.5  # the clock as written
  assert leap['days'] == pytest.approx(19782 + 86399.5 / 86400 - 1 / 24)  # the instant in UTC
  assert dates.parse('1970-01-01', dates.ISO, '')['days'] == 0
  assert dates.parse('31/12/2024', dates.SLASH, dates.DMY)['day_of_year'] == 366
  assert dates.parse('12/31/2024', dates.SLASH, dates.MDY)['day_of_year'] == 366


@pytest.mark.parametrize(
  'cell', ['2023-02-29', '2024-13-01', '2024-03-05T24:00', 'soon', '2024-03-05x', '']
)
def test_an_impossible_or_other_cell_is_no_date(cell):
  assert dates.parse(cell, dates.ISO, '') is None


def test_a_slash_column_no_cell_decides_is_ambiguous_until_the_order_is_given():
  cells = ['05/03/2024', '01/02/2024']
  assert dates.column(cells).order == ''
  line = dates.ambiguous_line('when', cells, 'the first 2 rows of a.csv')
  assert "column 'when'" in line and '--date-order dmy' in line and '\n' not in line
  assert dates.column(cells, dates.MDY).order == dates.MDY
  assert dates.column(cells + ['13/03/2024'], dates.MDY).order == dates.DMY  # the cells decide


def test_columns_of_both_orders_words_or_numbers_are_no_dates():
  assert dates.column(['13/03/2024', '03/13/2024']) is None
  assert dates.column(['12', '13.5']) is None
  assert dates.column(['soon', 'later']) is None
  assert dates.column(['', ' ']) is None


def test_a_few_cells_that_are_no_date_are_missing_and_counted():
  cells = ['2024-03-05'] * 18 + ['unknown', '2023-02-29']
  read = dates.column(cells)
  assert read.unreadable == 2 and (read.first, read.last) == ('2024-03-05', '2024-03-05')
  assert dates.column(cells[:8] + ['unknown', 'n/a']) is None  # 80 %: below MIN_SHARE


def test_the_summary_line_names_the_columns_their_form_span_and_features():
  found = dates.columns(
    {
      'date': ['05/03/2024', '30/12/2025'],
      'timestamp': ['2024-03-23T14:19:54', 'x'] + ['2024-03-01T00:00:00'] * 18,
      'store': ['a', 'b'],
    }
  )
  assert set(found) == {'date', 'timestamp'}
  assert dates.line(found) == (
    "'date' (DD/MM/YYYY, 2024-03-05 … 2025-12-30), 'timestamp' (ISO, 2024-03-01 … 2024-03-23, "
    '1 sampled cells no date: missing) read as dates → year, month, day_of_year, day_of_week, '
    "hour, seconds_of_day, days (hour, seconds_of_day: 'timestamp' only)"
  )
