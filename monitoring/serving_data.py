"""Serving data as serialized tf.Examples with the training schema's features: PredictionLog
TFRecords (predict_columns or serving_default requests), tf.Example TFRecords or a CSV file (as a
spreadsheet exports it: contracts/csv_dialect.py, as `predict` reads it).

Every value is typed by the training schema (INT, FLOAT, BYTES), so the serving statistics are
computed exactly as the training ones; an empty cell is a missing value, and a number column's
cells are read as training read them (contracts/text_numbers.py: `$13.08`, `8.91%`; `unknown`
missing), and a CSV's rows by the dialect's row rules (a repeated header skipped, inf / nan
missing, both counted; a row of another width refused). Columns the schema does not have are
refused by name (contracts.errors.UserError).
"""

import glob
import math
import os
from typing import Dict, Iterable, List, Optional, Sequence

import numpy as np

from contracts import csv_dialect, record_features, request_log, serving
from contracts.errors import UserError

CSV, TFRECORDS, PREDICTION_LOG = 'csv', 'tfrecords', 'prediction_log'


def files(path: str) -> List[str]:
  if not os.path.exists(path):
    raise UserError(f'--serving-data {path}: no such file or folder')
  if os.path.isfile(path):
    return [path]
  found = sorted(
    f
    for f in glob.glob(os.path.join(glob.escape(path), '**', '*'), recursive=True)
    if os.path.isfile(f) and not os.path.basename(f).startswith('.')
  )
  if not found:
    raise UserError(f'--serving-data {path}: an empty folder')
  return found


def _gzipped(path: str) -> bool:
  with open(path, 'rb') as f:
    return f.read(2) == b'\x1f\x8b'


def _records(path: str) -> Iterable[bytes]:
  import tensorflow as tf

  compression = 'GZIP' if _gzipped(path) else ''
  try:
    yield from tf.data.TFRecordDataset(path, compression_type=compression).as_numpy_iterator()
  except tf.errors.OpError as e:
    raise UserError(
      f'--serving-data {path}: not a TFRecord file ({e.message.splitlines()[0]})'
    ) from None


def kind_of(files: Sequence[str]) -> str:
  """CSV, TFRECORDS or PREDICTION_LOG, from the first file's name or first record."""
  if all(f.lower().endswith(('.csv', '.tsv', '.txt')) for f in files):
    return CSV
  from tensorflow_serving.apis import prediction_log_pb2

  first = next(iter(_records(files[0])), None)
  if first is None:
    raise UserError(f'--serving-data {files[0]}: no records')
  try:
    if prediction_log_pb2.PredictionLog.FromString(first).WhichOneof('log_type'):
      return PREDICTION_LOG
  except Exception:  # a DecodeError: not a PredictionLog
    pass
  return TFRECORDS


def _feature_types(schema) -> Dict[str, int]:
  return {f.name: f.type for f in schema.feature}


def _example(row: Dict[str, list], types: Dict[str, int]) -> bytes:
  import tensorflow as tf
  from tensorflow_metadata.proto.v0 import schema_pb2

  example = tf.train.Example()
  for name, values in row.items():
    # an empty cell: the key with no values, as CsvExampleGen writes it
    feature = example.features.feature[name]
    kind = types[name]
    if kind == schema_pb2.INT:
      feature.int64_list.SetInParent()
      feature.int64_list.value.extend(int(v) for v in values)
    elif kind == schema_pb2.FLOAT:
      feature.float_list.SetInParent()
      feature.float_list.value.extend(float(v) for v in values)
    else:
      feature.bytes_list.SetInParent()
      feature.bytes_list.value.extend(
        v if isinstance(v, bytes) else str(v).encode() for v in values
      )
  return example.SerializeToString()


def _unknown(columns: Iterable[str], types: Dict[str, int], where: str) -> None:
  unknown = [c for c in columns if c not in types]
  if unknown:
    raise UserError(
      f'{where}: columns the training schema does not have: {", ".join(unknown)} '
      f'(it has {", ".join(sorted(types))})'
    )


def _cell(
  text: str, kind: int, column: str, where: str, decimal_comma: bool, counts: csv_dialect.Counts
) -> list:
  """A cell's values as training read it (contracts/csv_dialect.py): [] for an empty one or, in
  a number column, a placeholder or inf / nan (counted); numbers written as text read as numbers
  (csv_dialect.number); a text cell as written (surrounding spaces and `NA` kept)."""
  from tensorflow_metadata.proto.v0 import schema_pb2

  if not text:
    return []
  if kind not in (schema_pb2.INT, schema_pb2.FLOAT):
    return [text.encode()]
  try:
    number = csv_dialect.number(text, decimal_comma, counts)
    if math.isnan(number):
      return []
    if kind == schema_pb2.FLOAT:
      return [number]
    if number != int(number):
      raise ValueError(text)
    return [int(number)]
  except (ValueError, OverflowError):
    name = 'an integer' if kind == schema_pb2.INT else 'a number'
    raise UserError(f'{where}: column {column}: {text!r} is not {name}, as in training') from None


def _csv_examples(path: str, types: Dict[str, int], counts: csv_dialect.Counts) -> List[bytes]:
  """The rows of a CSV file by the dialect's row rules (contracts/csv_dialect.py): repeated
  headers skipped and inf / nan cells missing, both counted into `counts`; a row of another
  width refused."""
  dialect = csv_dialect.sniff(path)
  header, rows = csv_dialect.data_rows(path, dialect, counts)
  if not header:
    raise UserError(f'--serving-data {path}: an empty CSV file')
  _unknown(header, types, f'--serving-data {path}')
  examples = []
  for number, cells in rows:
    if not any(c.strip() for c in cells):
      continue
    problem = csv_dialect.width_problem(len(cells), len(header))
    if problem:
      raise UserError(f'--serving-data {path}: line {number} {problem}')
    where = f'{path}:{number}'
    row = {
      column: _cell(cell, types[column], column, where, dialect.decimal_comma, counts)
      for column, cell in zip(header, cells)
    }
    examples.append(_example(row, types))
  return examples


def _log_examples(path: str, types: Dict[str, int]) -> List[bytes]:
  by_input = {serving.column_input(name): name for name in types}
  examples = []
  for request in request_log.read([path]):
    if request.signature == serving.SERVING_DEFAULT:
      examples.extend(bytes(r) for r in np.asarray(request.inputs[serving.EXAMPLES_INPUT]).ravel())
      continue
    if request.signature != serving.COLUMNS:
      raise UserError(
        f'--serving-data {path}: {request.signature} requests; monitor reads '
        f'{serving.COLUMNS} and {serving.SERVING_DEFAULT} ones'
      )
    _unknown([n for n in request.inputs if n not in by_input], {n: 0 for n in by_input}, f'{path}')
    columns = {by_input[n]: np.asarray(v) for n, v in request.inputs.items()}
    size = len(next(iter(columns.values()))) if columns else 0
    for i in range(size):
      row = {}
      for name, values in columns.items():
        cell = np.asarray(values[i]).ravel().tolist()
        row[name] = [
          c for c in cell if c not in (b'', '') and not (isinstance(c, float) and np.isnan(c))
        ]
      examples.append(_example(row, types))
  return examples


def examples(
  path: str, schema, counts: Optional[csv_dialect.Counts] = None, label: str = ''
) -> List[bytes]:
  """Serialized tf.Examples of every row or request in `path` (a file or a folder); a CSV's
  repeated headers and inf / nan cells counted into `counts`. TFRecords whose first records hold
  none of the schema's features but the `label` are refused, as `predict` refuses them
  (contracts/record_features.py); a feature some file lacks is flagged by the comparison."""
  counts = csv_dialect.Counts() if counts is None else counts
  paths = files(path)
  if any(p.lower().endswith(('.png', '.jpg', '.jpeg', '.bmp')) for p in paths):
    raise UserError(f'--serving-data {path}: images, but the serving model takes columns')
  kind = kind_of(paths)
  types = _feature_types(schema)
  found: List[bytes] = []
  for name in paths:
    if kind == CSV:
      found.extend(_csv_examples(name, types, counts))
    elif kind == PREDICTION_LOG:
      found.extend(_log_examples(name, types))
    else:
      records = [bytes(r) for r in _records(name)]
      first = record_features.held(records[: record_features.FIRST_RECORDS])
      columns = [c for c in types if c != label]
      record_features.absent(columns, first, f'--serving-data {name}', allowed=True)
      if records:
        import tensorflow as tf

        keys = tf.train.Example.FromString(records[0]).features.feature.keys()
        _unknown(sorted(keys), types, name)
      found.extend(records)
  if not found:
    raise UserError(f'--serving-data {path}: no rows')
  return found
