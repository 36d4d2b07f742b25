"""components/id_columns.py: the columns present and unique in every row, over batches of rows
combined in any grouping (as Beam combines them)."""

from components import id_columns


def _combined(batches, grouping):
  """UniqueColumns over `batches`, added in groups (`grouping`: sizes) then merged."""
  combiner = id_columns.UniqueColumns()
  accumulators, start = [], 0
  for size in grouping:
    accumulator = combiner.create_accumulator()
    for batch in batches[start : start + size]:
      accumulator = combiner.add_input(accumulator, batch)
    accumulators.append(accumulator)
    start += size
  return combiner.extract_output(combiner.merge_accumulators(accumulators))


def test_a_column_is_an_id_only_when_present_and_different_in_every_row():
  batches = [
    (10, {'id': list(range(10)), 'code': list(range(100, 110)), 'gap': list(range(10))}),
    (10, {'id': list(range(10, 20)), 'code': list(range(30, 40)), 'gap': None}),  # a row lacks it
    (10, {'id': list(range(20, 30)), 'code': list(range(40, 50))}),  # gap absent
    (
      5,
      {
        'id': [b'a', b'b', b'c', b'd', b'e'],
        'code': [100, 201, 202, 203, 204],
        'gap': [1, 2, 3, 4, 5],
      },
    ),
  ]
  for grouping in ([4], [1, 1, 1, 1], [2, 2], [1, 3]):
    assert _combined(batches, grouping) == ['id'], grouping  # code: 100 twice, across batches


def test_fewer_rows_than_min_rows_have_no_id():
  rows = id_columns.MIN_ROWS - 1
  assert _combined([(rows, {'id': list(range(rows))})], [1]) == []
  assert _combined([(rows, {'id': list(range(rows))}), (1, {'id': [-1]})], [1, 1]) == ['id']


def test_a_column_of_dates_or_times_is_no_id():
  assert id_columns.dated(['2024-03-23T14:19:54', '2024-03-23T14:19:55'])
  assert id_columns.dated(['05/03/2024'])  # whatever its order
  assert not id_columns.dated(['s1', 's2'])
