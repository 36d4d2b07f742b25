"""Arrow tables of CSV cells → tf.Examples, the same as TFX's CsvExampleGen builds, and each row's
content hash (no TFX here).

CsvExampleGen builds a tf.train.Example per row in Python: 37-43 s for 200,000 rows x 11 numeric
columns on this machine. What must be done is 1.5 s on one core: pyarrow's CSV reader 0.11 s
(csv_ranges.py), tfx-bsl's C++ RecordBatchToExamples 1.10 s, the TFRecord write 0.28 s.

  as_read()       a STRING column's cells as written, the others' as their numbers read
                  (csv_ranges.decimal_points), to encode and hash;
  to_examples()   the range's columns as Arrow lists of one value (none for an empty cell,
                  and, unlike CsvExampleGen, none for inf or nan in a FLOAT column: counted;
                  a NUMBER_TEXT column's numbers as floats, its other cells none: counted;
                  no feature kind at all for an UNKNOWN column, as CsvExampleGen's
                  tf.train.Feature()) encoded by RecordBatchToExamples;
  row_hashes()    a hash of each row's cells, that decides its split.
"""

from typing import Dict, List, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from components.csv_example_gen.type_inference import ColumnType, non_empty
from contracts import text_numbers


def as_read(table: pa.Table, numbers: pa.Table, types: Sequence[ColumnType]) -> pa.Table:
  """The cells a range is encoded and hashed from: a STRING column's from `table` (as written),
  the others' from `numbers` (decimal_points of it)."""
  columns = [
    cells if kind == ColumnType.STRING else read
    for cells, read, kind in zip(table.columns, numbers.columns, types)
  ]
  return pa.Table.from_arrays(columns, table.column_names)


def to_record_batch(
  table: pa.Table,
  types: Sequence[ColumnType],
  non_finite: Optional[list] = None,
  from_text: Optional[Dict[str, list]] = None,
) -> pa.RecordBatch:
  """The table's columns as the lists RecordBatchToExamples encodes: one value per cell, none
  for an empty cell or an inf / nan one in a FLOAT column (no number to learn from: they made
  every prediction NaN; each such cell's count appended to `non_finite`), a null list (a
  feature without a kind) in an UNKNOWN column; a NUMBER_TEXT column's cells read by
  text_numbers.read_array, none where no number ({column: [placeholders, others, forms]} added
  to `from_text`; forms: text_numbers.FORMS)."""
  found = [] if non_finite is None else non_finite
  texts = {} if from_text is None else from_text
  lists = [
    _as_list(column.combine_chunks(), kind, found, texts.setdefault(name, [0, 0, []]))
    if kind == ColumnType.NUMBER_TEXT
    else _as_list(column.combine_chunks(), kind, found)
    for name, column, kind in zip(table.column_names, table.columns, types)
  ]
  return pa.RecordBatch.from_arrays(lists, table.column_names)


def _as_list(
  cells: pa.Array, kind: ColumnType, non_finite: list, from_text: Optional[list] = None
) -> pa.Array:
  if kind == ColumnType.UNKNOWN:
    return pa.nulls(len(cells), pa.large_list(pa.int64()))
  if kind == ColumnType.NUMBER_TEXT:
    read, placeholders, odd, forms = text_numbers.read_array(cells)
    from_text[0] += placeholders
    from_text[1] += odd
    from_text[2] = sorted(set(from_text[2]) | set(forms))
    present = pc.is_valid(read).to_numpy(zero_copy_only=False)
    return _one_per_cell(len(cells), *_finite(read.drop_null(), present, len(cells), non_finite))
  filled = non_empty(cells)
  values = _values(filled, kind)
  present = None  # per cell: whether it holds a value (None: every cell does)
  if len(filled) != len(cells):
    present = pc.greater(pc.binary_length(cells), 0).to_numpy(zero_copy_only=False)
  if kind == ColumnType.FLOAT:
    values, present = _finite(values, present, len(cells), non_finite)
  return _one_per_cell(len(cells), values, present)


def _finite(values: pa.Array, present, cells: int, non_finite: list):
  """(values, present) without the inf and nan values (their count appended to non_finite)."""
  finite = pc.is_finite(values)
  if pc.all(finite).as_py():  # a numeric scan: costs nothing when all are numbers
    return values, present
  kept = finite.to_numpy(zero_copy_only=False)
  non_finite.append(int(len(kept) - kept.sum()))
  present = np.ones(cells, bool) if present is None else present.copy()
  present[np.flatnonzero(present)[~kept]] = False
  return values.filter(finite), present


def _one_per_cell(cells: int, values: pa.Array, present) -> pa.Array:
  """Lists of one value per cell where `present` (None: every cell), of none elsewhere."""
  if present is None:
    offsets = np.arange(cells + 1, dtype=np.int64)
  else:
    offsets = np.zeros(cells + 1, dtype=np.int64)
    np.cumsum(present, out=offsets[1:])
  if values.type == pa.float64():
    values = values.cast(pa.float32(), safe=False)
  return pa.LargeListArray.from_arrays(pa.array(offsets), values)


def _values(filled: pa.Array, kind: ColumnType) -> pa.Array:
  """Non-empty cells as the column's values (float: to a double, then float32, as Python's
  float() and the proto's FloatList do); by pyarrow's cast, or where it refuses a cell that
  Python reads ('+5', ' 5', '1_000'), by Python."""
  if kind == ColumnType.STRING:
    return filled.cast(pa.binary())
  try:
    parsed = filled.cast(pa.int64() if kind == ColumnType.INT else pa.float64())
  except pa.ArrowInvalid:
    read = int if kind == ColumnType.INT else float
    parsed = pa.array(
      [read(value) for value in filled.cast(pa.binary()).to_pylist()],
      pa.int64() if kind == ColumnType.INT else pa.float64(),
    )
  return parsed if kind == ColumnType.INT else parsed.cast(pa.float32(), safe=False)


def to_examples(
  table: pa.Table,
  types: Sequence[ColumnType],
  non_finite: Optional[list] = None,
  from_text: Optional[Dict[str, list]] = None,
) -> List[bytes]:
  """Serialized tf.Examples of the table's rows, in order (tfx-bsl's C++ encoder); inf and nan
  cells of FLOAT columns left out and counted into `non_finite`, the cells of NUMBER_TEXT
  columns that are no number into `from_text` (to_record_batch)."""
  from tfx_bsl.coders import example_coder

  if not table.num_rows:
    return []
  return example_coder.RecordBatchToExamples(to_record_batch(table, types, non_finite, from_text))


_PRIME = np.uint64(0x100000001B3)  # FNV's 64-bit prime: odd, so invertible modulo 2**64
_PRIME_INVERSE = np.uint64(pow(0x100000001B3, -1, 1 << 64))


def row_hashes(table: pa.Table) -> np.ndarray:
  """A 64-bit hash of each row's cells (uint64), the same on every machine, run and range cut:
  per cell a polynomial hash of its bytes, from prefix sums (vectorized), mixed column by column
  and finished with splitmix64's mixer. Equal rows hash equal (and so share a split). Each cell's
  hash is mixed before it joins the row's: with the cells' own polynomial, ('10.0', 'w6') and
  ('20.0', 'w5') summed to the same hash."""
  hashes = np.zeros(table.num_rows, dtype=np.uint64)
  with np.errstate(over='ignore'):
    for column in table.columns:
      cells = column.combine_chunks().cast(pa.binary())
      hashes = hashes * _PRIME + _mixed(_cell_hashes(cells)) + np.uint64(1)
    return _mixed(hashes)


def _mixed(hashes: np.ndarray) -> np.ndarray:
  """splitmix64's finalizer, element-wise (a new array)."""
  with np.errstate(over='ignore'):
    hashes = hashes ^ (hashes >> np.uint64(30))
    hashes *= np.uint64(0xBF58476D1CE4E5B9)
    hashes ^= hashes >> np.uint64(27)
    hashes *= np.uint64(0x94D049BB133111EB)
    hashes ^= hashes >> np.uint64(31)
  return hashes


def _cell_hashes(cells: pa.Array) -> np.ndarray:
  """sum over a cell's bytes b_k of (b_k + 1) * PRIME**k, k counted from the cell's start."""
  offsets = np.frombuffer(cells.buffers()[1], dtype=np.int32)[
    cells.offset : cells.offset + len(cells) + 1
  ]
  data = np.frombuffer(cells.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
  offsets = offsets - offsets[0]
  starts, ends = offsets[:-1], offsets[1:]
  prefix = np.zeros(len(data) + 1, dtype=np.uint64)
  np.cumsum((data.astype(np.uint64) + np.uint64(1)) * _powers(_PRIME, len(data)), out=prefix[1:])
  return (prefix[ends] - prefix[starts]) * _powers(_PRIME_INVERSE, len(data) + 1)[starts]


def _powers(base: np.uint64, count: int) -> np.ndarray:
  """base**0 .. base**(count - 1) modulo 2**64."""
  powers = np.full(count, base, dtype=np.uint64)
  powers[:1] = 1
  return np.cumprod(powers, out=powers)
