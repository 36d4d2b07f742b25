"""After the shard writers: copies placed in one split (the image ExampleGen's), rows whose
content is in two input splits counted (the CSV ExampleGen's), on small inputs without Beam."""

import numpy as np

from components import duplicates, regroup

SPLITS = ['train', 'eval']


def test_copies_written_to_two_splits_end_in_one():
  # Per shard, per split: (path, label id, content, near hashes); a.png and b.png are copies.
  written = [
    {'train': [('a.png', 0, 11, [5])], 'eval': []},
    {'train': [], 'eval': [('b.png', 0, 11, [5])]},
    {'train': [('c.png', 1, 99, [2**64 - 1])], 'eval': []},
  ]
  placed = regroup.Placed(written, SPLITS)
  found = placed.regroup(50, duplicates.GROUP, ['cat', 'dog'])
  assert found.counts['num_duplicates'] == 2 and not found.excluded
  (group,) = found.listing['largest_groups']
  assert [m['path'] for m in group] == ['a.png', 'b.png'] and group[0]['split'] == group[1]['split']
  assert len({0, 1} & set(placed.moves())) == 1  # one copy's shard: moved to the other's split
  counts = placed.counts()
  assert sum(counts['split'].values()) == 3 and counts['class'] == {0: 2, 1: 1}


def test_csv_rows_in_two_input_splits_counted(tmp_path):
  rows = str(tmp_path / 'rows')
  tasks = [('train', 'a.csv', 0, 9, 1, 0, 1), ('eval', 'b.csv', 0, 9, 1, 0, 1)]
  for (split, *_), content in zip(tasks, ([1, 2, 3], [3, 4])):
    np.savez(
      f'{rows}-{split}-00000.npz',
      content=np.array(content, dtype=np.uint64),
      labels=np.array(['x'] * len(content)),
      chosen=np.zeros(len(content), dtype=np.int64),
    )
  facts = regroup.csv_rows(
    str(tmp_path), tasks, SPLITS, False, rows, duplicates.GROUP, 'label', [], presplit=True
  )
  assert facts == {
    'examples': 5,
    'duplicates': 2,
    'left_out': {'train': 0, 'eval': 0},
    'across_splits': 2,
  }
