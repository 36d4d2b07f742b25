"""The Arrow CSV ExampleGen reads numbers as people write them (contracts/text_numbers.py): the
same cells to its vectorised reading and to the one-cell reading predict and monitor use, a run
on a file of them, and a text column of numbers no rule reads named."""

import glob
import json
import os

import pyarrow as pa
import pytest
import tensorflow as tf

from components.csv_example_gen import csv_ranges, example_encoding, type_inference
from components.csv_example_gen import executor as arrow_executor
from contracts import text_numbers
from tests.support.example_gens import run_executor

CELLS = [
  '−5.2',
  '‒3',
  '－3',
  '1 234.5',
  '1\u00a0234\u00a0567',
  '1\u202f234',
  "1'234.50",
  '1\u2019234.50',
  '3.94M',
  '534.8k',
  '$1.2B',
  '2bn',
  '(1,234.50)',
  '1.594e+05',
  '12 5',
  'it rose 12 5 times',
  'A-1234',
  '—5',
  '3.94m',
  'n/a',
  '−',
]
SEMICOLON_CELLS = ['1 234,5', '−1\u00a0234,25', '12,5', '1.234.567,8', '1 234', "1'234,5", '1 2,5']


def _one_by_one(cells, decimal_comma=False):
  read = []
  for cell in cells:
    try:
      number = text_numbers.parse(cell, decimal_comma)
    except ValueError:
      number = None
    read.append(None if number is None or number != number else number)
  return read


@pytest.mark.parametrize('cells, decimal_comma', [(CELLS, False), (SEMICOLON_CELLS, True)])
def test_the_column_reading_and_the_one_cell_reading_agree(cells, decimal_comma):
  table = pa.table({'x': pa.array(cells, pa.string())})
  if decimal_comma:  # a `;` or tab file: csv_dialect.Dialect.decimal_comma
    table = csv_ranges.decimal_points(table)
  reading = text_numbers.read_array(table.column('x').combine_chunks())
  assert reading.values.to_pylist() == _one_by_one(cells, decimal_comma)
  assert _one_by_one(cells[:3], decimal_comma)[0] in (-5.2, 1234.5)


def _rows(examples):
  found = []
  for path in sorted(glob.glob(os.path.join(examples.uri, 'Split-*', '*'))):
    for record in tf.data.TFRecordDataset(
      path, 'GZIP' if path.endswith('.gz') else ''
    ).as_numpy_iterator():
      found.append(tf.train.Example.FromString(record).features.feature)
  return found


def test_a_run_reads_unicode_minus_suffixes_and_space_thousands_and_names_a_column_it_cannot(
  tmp_path,
):
  lines = ['temp;revenue;amount;code;word;y']
  for i in range(200):
    temp = f'−{i / 10:.1f}'.replace('.', ',') if i % 2 else f'{i / 10:.1f}'.replace('.', ',')
    revenue = f'{i + 1}.5M' if i % 3 else f'{i * 10 + 5}k'
    amount = f'{1000 + i:,}'.replace(',', '\u00a0') + ',5'
    lines.append(f'{temp};{revenue};{amount};{i % 5}~{i % 2};w{i % 3};{"oui" if i % 2 else "non"}')
  (tmp_path / 'data.csv').write_text('\n'.join(lines) + '\n', encoding='utf-8')
  examples = run_executor(arrow_executor.Executor, tmp_path, tmp_path / 'out', label_key='y')
  types = json.loads(examples.get_string_custom_property('column_types'))['single_split']
  assert list(types.items()) == [(c, 'FLOAT') for c in ('temp', 'revenue', 'amount')] + [
    (c, 'STRING') for c in ('code', 'word', 'y')
  ]
  facts = json.loads(examples.get_string_custom_property('numbers_from_text'))
  assert facts['temp']['forms'] == ['minus signs −'] and facts['temp']['other'] == 0
  assert facts['revenue']['forms'] == ['k/M/B suffixes']
  assert facts['amount']['forms'] == ['thousands separators']
  unread = json.loads(examples.get_string_custom_property('numbers_unread'))
  assert list(unread) == ['code'] and unread['code'] == ['0~0', '1~1', '2~0']
  rows = _rows(examples)
  temps = sorted(round(v, 4) for row in rows for v in row['temp'].float_list.value)
  assert len(rows) == 200 and temps[0] == pytest.approx(-19.9) and temps[-1] == pytest.approx(19.8)
  revenue = {v for row in rows for v in row['revenue'].float_list.value}
  assert 2.5e6 in revenue and 5000.0 in revenue  # '2.5M' and '5k'
  amounts = sorted(v for row in rows for v in row['amount'].float_list.value)
  assert amounts[0] == 1000.5 and amounts[-1] == 1199.5


def test_a_column_of_mostly_numbers_with_words_among_them_is_named_with_its_words():
  table = pa.table({'x': ['1.5'] * 90 + ['about 3'] * 10, 'y': ['a'] * 100})
  kinds = type_inference.column_types(table)
  assert kinds[0] == type_inference.ColumnType.STRING
  found = type_inference.unread_numbers(table, kinds, ignored={'y'})
  total = {}
  type_inference.add_unread(total, found)
  type_inference.add_unread(total, {'x': [5, 5, ['1~2', 'about 3']]})
  assert type_inference.looks_numeric(total) == {'x': ['about 3', '1~2']}
  assert example_encoding.to_record_batch(table, kinds).num_rows == 100
