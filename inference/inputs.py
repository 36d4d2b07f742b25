"""What `pipeline.py predict --data` holds and its inputs, one by one, in the form of the
signature they are sent to (docs/serving.md):

  images      every file below a folder (any depth; hidden and tool folders left out) or one
              image file; id: its path below --data          → predict_image_bytes
  CSV         rows of .csv files (raw columns, the label may be absent); id: FILE:ROW
                                                           → predict_columns, or predict_text
  TFRecords   records of .tfrecord(.gz) files or Beam shards (data-00000-of-00002); id: FILE:N
                                                           → serving_default

An input that cannot be read (a corrupt image, a file that is not one, a cell that is not a
number) is an `Unreadable` with its reason, not an error: it is listed and skipped.
"""

import math
import os
import re
from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from contracts import csv_dialect, predictions, serving
from contracts.image_files import is_image
from inference import images

IMAGES = 'images'
CSV = 'csv'
TFRECORDS = 'tfrecords'
CSV_SUFFIXES = ('.csv',)
TFRECORD_SUFFIXES = ('.tfrecord', '.tfrecords', '.tfrecord.gz', '.tfrecords.gz', '.gz')
TOOL_FOLDERS = ('__pycache__',)
MIN_TEXT_WORDS = 5  # median words per row from which a column is the free text (predict_text)


class Input(NamedTuple):
  order: Tuple[int, int]  # (file, row): the output keeps the input's order
  id: str
  inputs: Dict[str, object]  # signature input name → one value (bytes, str or float)


class Unreadable(NamedTuple):
  order: Tuple[int, int]
  id: str
  reason: str


class DataFiles(NamedTuple):
  kind: str
  root: str  # ids are relative to it
  files: List[str]  # relative to root, '/'-separated, sorted
  others: List[str]  # files of no data kind in an image folder (skipped: not an image)


class Problem(ValueError):
  """--data or the CSV cannot be predicted at all (cli/predict.py: a UserError)."""


def _hidden(relpath: str) -> bool:
  return any(p.startswith('.') or p in TOOL_FOLDERS for p in relpath.split('/'))


def kind_of_file(path: str) -> Optional[str]:
  lowered = path.lower()
  if lowered.endswith(CSV_SUFFIXES):
    return CSV
  if lowered.endswith(TFRECORD_SUFFIXES):
    return TFRECORDS
  if is_image(lowered):
    return IMAGES
  if re.search(r'-\d{5}-of-\d{5}$', lowered):  # a Beam shard, as ImageExampleGen names them
    return TFRECORDS
  return None


def find(path: str) -> DataFiles:
  """The data files of a local file or folder: a folder holding CSV files is CSV data, one
  holding TFRecord files TFRecords, any other an image folder (files of no image format in it
  are listed in `others`). Raises Problem for what holds nothing to predict."""
  path = os.path.abspath(path)
  if os.path.isfile(path):
    kind = kind_of_file(path)
    if kind is None:
      raise Problem(f'--data {path}: unknown file type (expected an image, .csv or .tfrecord)')
    return DataFiles(kind, os.path.dirname(path), [os.path.basename(path)], [])
  if not os.path.isdir(path):
    raise Problem(f'--data {path}: no such file or folder')
  found = []
  for folder, subfolders, names in os.walk(path, followlinks=True):
    subfolders.sort()
    for name in names:
      relpath = os.path.relpath(os.path.join(folder, name), path).replace(os.sep, '/')
      if not _hidden(relpath):
        found.append(relpath)
  found.sort()
  by_kind = {k: [f for f in found if kind_of_file(f) == k] for k in (CSV, TFRECORDS, IMAGES)}
  data_kinds = [k for k in (CSV, TFRECORDS) if by_kind[k]]
  if len(data_kinds) > 1 or (data_kinds and by_kind[IMAGES]):
    held = ', '.join(f'{len(by_kind[k])} {k}' for k in (CSV, TFRECORDS, IMAGES) if by_kind[k])
    raise Problem(f'--data {path}: holds files of more than one kind ({held}); point it at one')
  if data_kinds:
    return DataFiles(data_kinds[0], path, by_kind[data_kinds[0]], [])
  if not by_kind[IMAGES]:
    raise Problem(
      f'--data {path}: holds no image, CSV or TFRecord files'
      + (f' (found {", ".join(found[:3])}{" …" if len(found) > 3 else ""})' if found else '')
    )
  return DataFiles(IMAGES, path, by_kind[IMAGES], [f for f in found if f not in by_kind[IMAGES]])


# Images -------------------------------------------------------------------------------------


def read_image(order, relpath: str, path: str) -> Union[Input, Unreadable]:
  """One image file as predict_image_bytes' input (inputs: IMAGE_BYTES_INPUT), with whether it
  was turned upright (`inputs['turned']`, removed before sending)."""
  try:
    with open(path, 'rb') as f:
      prepared = images.prepare(f.read())
  except (OSError, ValueError) as e:
    return Unreadable(order, relpath, str(e))
  return Input(
    order,
    relpath,
    {
      serving.IMAGE_BYTES_INPUT: prepared.data,
      TURNED: prepared.turned_upright,
      SIZE: prepared.size,
    },
  )


TURNED = '_turned_upright'  # a mark on an image input, not a signature input
SIZE = '_size'  # a mark on an image input: its (width, height), upright


# CSV ----------------------------------------------------------------------------------------


MISSING_NUMBERS = '_missing_numbers'  # a mark on a CSV input, not a signature input
ROW_IDS = '_row_ids'  # a CSV input's id cells ({predictions column: cell}), not an input


class CsvLayout(NamedTuple):
  dialect: csv_dialect.Dialect
  columns: Dict[str, str]  # signature input name → the CSV column read into it
  ids: Sequence[str] = ()  # the model's id columns this file has: copied to the predictions


def _header(path: str, dialect: csv_dialect.Dialect) -> List[str]:
  return csv_dialect.data_rows(path, dialect, csv_dialect.Counts())[0]


def csv_layout(
  path: str, wanted: Sequence[str], text_column: str = '', id_columns: Sequence[str] = ()
) -> CsvLayout:
  """How a CSV file's columns feed a signature's inputs `wanted` (input names: column_input of
  the training columns, or [TEXT_INPUT]), and which of the model's `id_columns` it has. Other
  columns (the label) are ignored; an input without its column raises Problem naming the
  missing ones."""
  dialect = csv_dialect.sniff(path)
  header = _header(path, dialect)
  if wanted == [serving.TEXT_INPUT]:
    return CsvLayout(
      dialect, {serving.TEXT_INPUT: _text_column(path, header, dialect, text_column)}
    )
  by_input = {serving.column_input(c): c for c in header}
  missing = [name for name in wanted if name not in by_input]
  if missing:
    raise Problem(
      f"{path}: no column for {len(missing)} of the model's {len(wanted)} inputs: "
      f'{", ".join(missing)} (the CSV has: {", ".join(header) or "no header"})'
    )
  ids = [c for c in id_columns if c in header]
  return CsvLayout(dialect, {name: by_input[name] for name in wanted}, ids)


def module_csv_layout(path: str, kinds: Dict[str, str], required: Sequence[str]) -> CsvLayout:
  """How a CSV file's columns feed the tf.Example features a module file's model parses
  (`kinds`, by name): each feature from the column of its name; a column of `required` absent
  raises Problem naming them, others absent are left out of the records."""
  dialect = csv_dialect.sniff(path)
  header = _header(path, dialect)
  missing = [name for name in required if name not in header]
  if missing:
    raise Problem(
      f'{path}: no column for {len(missing)} of the {len(required)} columns the model requires: '
      f'{", ".join(missing)} (the CSV has: {", ".join(header) or "no header"})'
    )
  return CsvLayout(dialect, {name: name for name in kinds if name in header})


def _text_column(path: str, header: List[str], dialect: csv_dialect.Dialect, chosen: str) -> str:
  if chosen:
    if chosen not in header:
      raise Problem(f'--text-column {chosen}: no such column in {path} ({", ".join(header)})')
    return chosen
  if len(header) == 1:
    return header[0]
  words = {c: [] for c in header}
  _, found = csv_dialect.data_rows(path, dialect, csv_dialect.Counts())
  for i, (_, cells) in enumerate(found):
    if i == 200:
      break
    row = dict(zip(header, cells))
    for c in header:
      words[c].append(len((row.get(c) or '').split()))
  texts = [c for c, counts in words.items() if counts and np.median(counts) >= MIN_TEXT_WORDS]
  if len(texts) != 1:
    raise Problem(f'{path}: which column holds the text? ({", ".join(header)}): give --text-column')
  return texts[0]


def read_csv(
  file_index: int,
  relpath: str,
  path: str,
  layout: CsvLayout,
  kinds: Dict[str, str],
  counts: Optional[csv_dialect.Counts] = None,
) -> Iterator[Union[Input, Unreadable]]:
  """The rows of one CSV file as inputs of the signature whose input dtypes are `kinds`
  (input name → 'float', 'double' or 'string'), read by the dialect's row rules
  (contracts/csv_dialect.py): a row repeating the header is skipped, an inf or nan number cell is
  missing (both counted into `counts`), a text cell is sent as written, and a row of another width than the header or whose
  number cell is not a number is Unreadable; the columns of its missing number cells (NaN: the
  model's missing value) are in `inputs[MISSING_NUMBERS]`. ROW counts data rows from 1 (blank
  lines and repeated headers left out)."""
  counts = csv_dialect.Counts() if counts is None else counts
  decimal_comma = layout.dialect.decimal_comma
  header, found = csv_dialect.data_rows(path, layout.dialect, counts)
  for row_number, (line, cells) in enumerate(found, start=1):
    row = dict(zip(header, cells))
    order, input_id = (file_index, row_number), f'{relpath}:{row_number}'
    values, missing = {}, []
    problem = csv_dialect.width_problem(len(cells), len(header))
    problem = f'line {line} {problem}' if problem else ''
    for name, column in layout.columns.items():
      if problem:
        break
      cell = row[column]
      if kinds.get(name) in ('float', 'double'):
        try:
          # as training reads it: `$13.08`, `8.91%` numbers, placeholders and inf NaN
          values[name] = csv_dialect.number(cell, decimal_comma, counts)
        except ValueError:
          problem = f'column {column}: {cell[:40]!r} is not a number'
          break
        if math.isnan(values[name]):
          missing.append(column)
      else:
        values[name] = cell  # as written, `NA` too; '' missing (csv_dialect: a text cell)
    if missing:
      values[MISSING_NUMBERS] = missing
    if layout.ids:
      values[ROW_IDS] = {predictions.carried(c): row.get(c) or '' for c in layout.ids}
    yield Unreadable(order, input_id, problem) if problem else Input(order, input_id, values)


# TFRecords ----------------------------------------------------------------------------------


def read_tfrecords(file_index: int, relpath: str, path: str) -> Iterator[Union[Input, Unreadable]]:
  """The records of one TFRecord file (GZIP when it ends in .gz) as serving_default inputs; a
  damaged record ends the file's records with one Unreadable saying so."""
  import tensorflow as tf

  with open(path, 'rb') as f:
    compression = 'GZIP' if f.read(2) == b'\x1f\x8b' else ''  # GZIP's magic, whatever the name
  number = 0
  try:
    for record in tf.data.TFRecordDataset(path, compression_type=compression).as_numpy_iterator():
      number += 1
      yield Input((file_index, number), f'{relpath}:{number}', {serving.EXAMPLES_INPUT: record})
  except tf.errors.OpError as e:
    yield Unreadable(
      (file_index, number + 1),
      f'{relpath}:{number + 1}',
      f'damaged TFRecord file: records from here on not read ({e.message.splitlines()[0]})',
    )
