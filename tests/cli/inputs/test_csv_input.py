"""cli/inputs/csv_input: a CSV's free-text column and the labels CsvExampleGen would read wrongly."""

import random

import pytest

from cli.inputs import csv_input, data_layout
import config as cfg
from contracts.errors import UserError
from tests.support.tfx_data import IMDB


def _csv(path, header, rows):
  with open(path, 'w') as f:
    f.write(','.join(header) + '\n' + ''.join(','.join(row) + '\n' for row in rows))
  return str(path)


def test_a_csv_whose_only_other_column_is_free_text_takes_the_text_route(tmp_path):
  reviews = _csv(
    tmp_path / 'r.csv',
    ['label', 'review'],
    [('1', 'a fine film with a good cast'), ('0', 'dull and far too long')] * 5,
  )
  assert csv_input.text_column(reviews, 'label') == 'review'
  codes = _csv(tmp_path / 'c.csv', ['label', 'city'], [('1', 'Paris'), ('0', 'New York')] * 5)
  assert csv_input.text_column(codes, 'label') == ''  # short strings: a categorical column
  assert csv_input.text_column(codes, 'label', chosen='city') == 'city'
  wide = _csv(tmp_path / 'w.csv', ['label', 'a', 'b'], [('1', 'x y z w v u', 'p q r s')] * 5)
  with pytest.raises(UserError, match="column 'a' holds free text .* --text-column a"):
    csv_input.text_column(wide, 'label')  # text beside another column: hashed, it teaches nothing
  with pytest.raises(UserError, match='--label sentiment: no such column .* label, review'):
    csv_input.text_column(reviews, 'sentiment')


@pytest.mark.parametrize(
  'labels,label_default,refused',
  [
    ([str(i) for i in range(30)], '', True),  # an id column
    ([f'user-{i}' for i in range(30)], '', True),
    ([str(i) for i in range(19)], '', False),  # a tiny CSV with one row per class
    ([f'{i / 7:.3f}' for i in range(30)], '', False),  # a float: binarised by a threshold
    ([str(i) for i in range(19)] + [''] * 5, '0', False),  # missing cells: the default's
  ],
)
def test_a_label_unique_per_row_is_refused_as_an_id(tmp_path, labels, label_default, refused):
  path = _csv(tmp_path / 'rows.csv', ['id', 'x'], [(label, '1') for label in labels])
  if not refused:
    classes = '.' not in labels[0]  # a float label comes with --label-threshold
    assert csv_input.text_column(path, 'id', label_default=label_default, classes=classes) == ''
    return
  with pytest.raises(UserError) as raised:
    csv_input.text_column(path, 'id', label_default=label_default)
  assert str(raised.value) == (
    f'--label id: every one of the first 30 rows of {path} has its own value (30 distinct); a '
    'label names classes shared by many rows — is this an id column?'
  )


def test_integer_labels_that_look_like_a_number_to_regress_are_refused_first(tmp_path):
  import random

  rng = random.Random(5)
  targets = [str(max(25, int(rng.gauss(150, 75)))) for _ in range(400)]
  path = _csv(
    tmp_path / 'd.csv', ['bmi', 'target'], [(f'{i / 9:.2f}', t) for i, t in enumerate(targets)]
  )
  with pytest.raises(UserError) as raised:
    csv_input.text_column(path, 'target')
  said = str(raised.value)
  assert said.startswith('--label target: ') and f'in the first 200 rows of {path}' in said
  assert 'with --label-threshold T' in said and 'with --task regression' in said
  assert csv_input.text_column(path, 'target', classes=False) == ''  # regression or a threshold
  assert csv_input.label_task(path, 'target', None, 'auto')[0] == 'regression'
  grades = _csv(tmp_path / 'g.csv', ['x', 'grade'], [(str(i), str(i % 25)) for i in range(400)])
  assert csv_input.text_column(grades, 'grade') == ''  # 25 classes of 8 rows each


def test_a_label_default_of_another_kind_than_the_label_is_refused(tmp_path):
  path = _csv(
    tmp_path / 'l.csv', ['x', 'label'], [(str(i), str(i % 3) if i % 9 else '') for i in range(60)]
  )
  with pytest.raises(UserError, match=r"^--label-default 'unknown': label 'label' holds class ids"):
    csv_input.text_column(path, 'label', label_default='unknown')
  with pytest.raises(UserError, match=r"^--label-default '0.5': label 'label' holds class ids"):
    csv_input.text_column(path, 'label', label_default='0.5')
  assert csv_input.text_column(path, 'label', label_default='2') == ''
  names = _csv(
    tmp_path / 'n.csv', ['x', 'label'], [(str(i), 'ab'[i % 2] if i % 9 else '') for i in range(60)]
  )
  assert csv_input.text_column(names, 'label', label_default='unknown') == ''


def test_the_imdb_txt_gets_a_one_line_hint_and_its_csv_copy_is_text(tmp_path):
  with pytest.raises(UserError, match='give it a .csv name'):
    data_layout.resolve_data(IMDB)
  copy = tmp_path / 'imdb.csv'
  copy.write_bytes(open(IMDB, 'rb').read())
  source = data_layout.resolve_data(str(copy))
  assert source.kind == cfg.CSV
  assert csv_input.text_column(data_layout.sample_file(source), 'label') == 'text'


def test_a_float_label_regresses_and_is_refused_as_classes_unless_a_threshold_names_them(tmp_path):
  path = _csv(
    tmp_path / 'f.csv', ['km', 'fare'], [(str(i), f'{3 + i * 0.75:.2f}') for i in range(9)]
  )
  assert csv_input.label_task(path, 'fare', None, 'auto') == (
    'regression',
    'fare holds numbers, not all integers',
  )
  assert csv_input.label_task(path, 'fare', 10.0, 'auto')[0] == 'classification'
  with pytest.raises(UserError) as raised:
    csv_input.label_task(path, 'fare', None, 'classification')
  assert str(raised.value) == (
    f'--label fare: numbers, not all integers, in the first 9 rows of {path}: regress them with '
    '--task regression, or train two classes on (fare > T) with --label-threshold T '
    '(the median: 6)'
  )
  with pytest.raises(UserError, match='^--task regression with --label-threshold 10: '):
    csv_input.label_task(path, 'fare', 10.0, 'regression')
  with pytest.raises(UserError) as raised:
    csv_input.text_column(path, 'fare')  # as classes
  assert 'regress them with --task regression' in str(raised.value)
  assert csv_input.text_column(path, 'fare', classes=False) == ''  # regression or a threshold


def test_a_label_to_regress_with_cells_that_are_not_numbers_is_refused_in_one_line(tmp_path):
  rows = [(str(i), f'{10 + i * 1.5:.2f}') for i in range(40)]
  rows[3], rows[7] = ('3', '12 5'), ('7', 'about 13')
  path = _csv(tmp_path / 'p.csv', ['x', 'price'], rows)
  with pytest.raises(UserError) as raised:
    csv_input.label_task(path, 'price', None, 'auto')
  assert str(raised.value).startswith(
    f"--label price: 2 of 40 values in the first 40 rows of {path} are not numbers ('12 5', "
    "'about 13') among numbers"
  )
  names = _csv(tmp_path / 'n.csv', ['x', 'kind'], [(str(i), 'ab'[i % 2]) for i in range(40)])
  assert csv_input.label_task(names, 'kind', None, 'auto')[0] == 'classification'
  with pytest.raises(UserError, match="^--task regression: label 'kind' holds no numbers"):
    csv_input.label_task(names, 'kind', None, 'regression')


def test_a_header_with_spaces_after_its_commas_names_its_columns_without_them(tmp_path):
  path = tmp_path / 'spaced.csv'
  path.write_text('a, b, target\n' + ''.join(f'{i},{i * 2},{i % 2}\n' for i in range(10)))
  assert csv_input.csv_header(str(path)) == ['a', 'b', 'target']
  assert csv_input.text_column(str(path), 'target') == ''  # a table, its label found
  assert csv_input.label_task(str(path), 'target', None, 'auto')[0] == 'classification'
  with pytest.raises(UserError, match=r'--csv-reader tfx: .* has spaces around header names'):
    csv_input.refuse_tfx_dialect(str(path))


def test_free_text_beside_other_columns_is_refused_with_the_text_route_named(tmp_path):
  rows = [(str(i % 2), str(i % 5), f'a review of {i} words and then some') for i in range(30)]
  path = _csv(tmp_path / 'mixed.csv', ['label', 'stars', 'review'], rows)
  with pytest.raises(UserError) as raised:
    csv_input.text_column(path, 'label')
  assert str(raised.value) == (
    f"--data {path}: column 'review' holds free text (8 words per row on median) beside 1 other "
    "column(s); a table's model would hash each text whole as one category: train on the text "
    'with --text-column review (the other columns are then left out), or drop the column'
  )
  assert csv_input.text_column(path, 'label', chosen='review') == 'review'


def test_a_label_of_numbers_written_as_text_regresses_and_tfx_s_reader_is_refused_them(tmp_path):
  rows = [(f'{i}%', f'"${1000 + i * 1.5:,.2f}"') for i in range(40)]
  path = _csv(tmp_path / 'p.csv', ['rate', 'price'], rows)
  assert csv_input.label_task(path, 'price', None, 'auto') == (
    'regression',
    'price holds numbers, not all integers',
  )
  with pytest.raises(UserError) as raised:
    csv_input.refuse_numbers_as_text(path)
  assert str(raised.value).startswith(f'--csv-reader tfx: rate, price in {path} hold numbers')
  plain = _csv(tmp_path / 'q.csv', ['x', 'kind'], [(str(i), 'ab'[i % 2]) for i in range(40)])
  csv_input.refuse_numbers_as_text(plain)  # nothing to refuse


def test_slash_dates_no_field_decides_are_refused_in_one_line_until_the_order_is_given(tmp_path):
  rows = [[f'0{m}/0{d}/2024', str(m)] for m in range(1, 9) for d in range(1, 4)]
  path = _csv(tmp_path / 'r.csv', ['when', 'y'], rows)
  with pytest.raises(UserError, match=r"column 'when'.*--date-order dmy or --date-order mdy") as e:
    csv_input.refuse_ambiguous_dates(path, '')
  assert '\n' not in str(e.value)
  csv_input.refuse_ambiguous_dates(path, 'dmy')
  csv_input.refuse_ambiguous_dates(path, '', ['when'])  # an id column or the label: no input
  decided = _csv(tmp_path / 'd.csv', ['when', 'y'], rows + [['13/01/2024', '1']])
  csv_input.refuse_ambiguous_dates(decided, '')  # a day above 12: day first


@pytest.mark.parametrize('task', ['auto', 'classification'])
def test_classes_written_as_decimals_are_classes_at_the_first_look(tmp_path, task):
  """`0.0`/`1.0` were refused as 'numbers, not all integers' (issue 68), `--task classification`
  too; they are two classes, said so."""
  rows = [(f'{i * 0.1:.1f}', f'{i % 2:.1f}') for i in range(12)]
  path = _csv(tmp_path / 'b.csv', ['x', 'outcome'], rows)
  assert csv_input.label_task(path, 'outcome', None, task) == (
    'classification',
    'outcome holds class ids written as decimals (0.0, 1.0)'
    if task == 'auto'
    else '--task classification',
  )
  assert csv_input.text_column(path, 'outcome') == ''  # not refused as classes


def test_a_column_holding_the_next_rows_label_is_named_not_refused(tmp_path):
  """A time series' next value beside its label (R² 0.94 that cannot hold in serving): file
  order does not say whether it is the next value or, newest first, the previous one."""
  rng = random.Random(4)
  series = [100.0]
  for _ in range(120):
    series.append(series[-1] + rng.gauss(0, 1))
  rows = [
    (f'{rng.random():.3f}', f'{series[i + 1]:.2f}', f'{series[i]:.2f}')
    for i in range(len(series) - 1)
  ]
  path = _csv(tmp_path / 's.csv', ['noise', 'next_level', 'level'], rows)
  assert csv_input.shifted_label_columns(path, 'level') == (
    f"'next_level' holds the next row's level in the first 120 rows of {path}: if rows run oldest "
    'first, a value not known when predicting (drop it); newest first, the previous value'
  )
  assert csv_input.shifted_label_columns(path, 'noise') == ''
  copies = [(a, c, c) for a, _, c in rows]  # the label itself: leakage.py's, not this
  assert (
    csv_input.shifted_label_columns(_csv(tmp_path / 'c.csv', ['a', 'b', 'level'], copies), 'level')
    == ''
  )
