"""A CSV input's header and first rows looked at before the run, read as every reader reads them
(contracts/csv_dialect.py: byte-order mark, `,` `;` or tab, decimal commas, header names
stripped): what CsvExampleGen would fail on or read wrongly, and whether it holds free text."""

from cli.inputs import data_paths
import config as cfg
from contracts import csv_dialect, dates, labels, text_numbers
from contracts.errors import UserError

MIN_TEXT_WORDS = 5  # median words per row above which a string column is free text
_SNIFF_ROWS = 200
_SNIFF_BYTES = 1 << 20  # CSV bytes looked at before the run (rows, encoding, labels)
MIN_ROWS = 2  # CSV data rows: one for each split at least
MIN_ID_ROWS = 20  # rows with a label of their own each, at least, that make it an id column
SHIFTED_SHARE = 0.95  # first rows whose cell is the next row's label, from which it is named


def text_column(
  csv_path: str, label: str, chosen: str = '', label_default: str = '', classes: bool = True
) -> str:
  """The CSV's free-text column ('' for tabular data): `chosen`, or detected as the only column
  besides the label, holding at least MIN_TEXT_WORDS words per row on median. Raises UserError
  for what CsvExampleGen would fail on later (encoding, no rows, text labels)
  and for rows without a label when there is no `label_default`, and free text beside other
  columns (unless `chosen`); `classes` (the task is classification without --label-threshold):
  integer labels (`3` or `3.0`) are classes, refused when they look like a number to regress or
  name a class per row, and numbers not all integers are refused (label_task decides the task
  first)."""
  import collections
  import statistics

  columns, rows = _first_rows(csv_path)
  _check_header(csv_path, columns)
  for name, what in ((label, '--label'), (chosen, '--text-column')):
    if name and name not in columns:
      raise UserError(
        f'{what} {name}: no such column in {csv_path} (columns: {", ".join(columns)})'
      )
  if len(rows) < MIN_ROWS:
    raise UserError(
      f'--data {csv_path}: {len(rows)} data row(s) under the header; '
      f'training and evaluation need at least {MIN_ROWS}'
    )
  if not label_default:
    _check_label_values(csv_path, label, [row[label] for row in rows])
  else:
    _check_label_default(csv_path, label, label_default, [row[label] for row in rows])
  values = [label_default if labels.is_missing(r[label]) else r[label] for r in rows]
  _check_label_is_no_id(csv_path, label, values, classes)
  fractions = _all_read_as(float, values) and any(not float(v).is_integer() for v in values)
  if classes and values and fractions:  # `0.0`/`1.0` are class ids written as decimals
    raise UserError(
      labels.float_label_message(
        label, f'the first {len(values)} rows of {csv_path}', statistics.median(map(float, values))
      )
    )
  if classes and values and _all_read_as(float, values):
    counts = collections.Counter(float(value) for value in values)
    if labels.looks_regressed(counts):
      raise UserError(
        labels.regression_message(label, counts, f'the first {len(values)} rows of {csv_path}')
      )
  if chosen:
    return chosen
  others = [c for c in columns if c != label]
  words = {c: statistics.median(len((row[c] or '').split()) for row in rows) for c in others}
  texts = [c for c in others if words[c] >= MIN_TEXT_WORDS]
  if len(others) == 1:
    return others[0] if texts else ''
  if texts:  # hashed as one category per row, free text teaches a table's model nothing
    raise UserError(
      f'--data {csv_path}: column {texts[0]!r} holds free text ({words[texts[0]]:g} words per row '
      f"on median) beside {len(others) - 1} other column(s); a table's model would hash each "
      f'text whole as one category: train on the text with --text-column {texts[0]} (the other '
      'columns are then left out), or drop the column'
    )
  return ''


def label_task(csv_path: str, label: str, threshold, asked: str) -> tuple:
  """(task, why) from the label's values in the first rows (labels.decide_task); UserError for
  a task the values cannot have. A label column that is not there is left to text_column."""
  columns, rows = _first_rows(csv_path)
  if label not in columns:
    return labels.decide_task(label, [], '', threshold, asked)
  values = [row[label].strip() for row in rows if not labels.is_missing(row[label])]
  try:
    return labels.decide_task(
      label, values, f'the first {len(rows)} rows of {csv_path}', threshold, asked
    )
  except ValueError as e:
    raise UserError(str(e)) from None


def refuse_tfx_dialect(csv_path: str) -> None:
  """--csv-reader tfx: TFX's CsvExampleGen reads UTF-8 comma-separated files and keeps spaces
  around header names: a byte-order mark, a `;` or tab delimiter or a spaced header name is
  refused (UserError, one line) where the default reader reads them."""
  import csv

  first = _head(csv_path).partition(b'\n')[0]
  dialect = csv_dialect.header(first)[0]
  written = next(csv.reader([first.decode('utf-8', 'replace').rstrip('\r')]), [])
  spaced = [name for name in written if name != name.strip()]
  odd = (
    'starts with a byte-order mark (Excel\'s "CSV UTF-8")'
    if dialect.bom
    else f'is {csv_dialect.NAMES[dialect.delimiter]}-separated'
    if dialect.delimiter != ','
    else f'has spaces around header names ({spaced[0]!r})'
    if spaced
    else ''
  )
  if odd:
    raise UserError(
      f"--csv-reader tfx: {csv_path} {odd}, which TFX's reader cannot read as meant; leave out "
      '--csv-reader tfx (the default reader reads it), or save it as UTF-8 CSV with commas, '
      'without a byte-order mark or spaces around header names'
    )


def refuse_numbers_as_text(csv_path: str) -> None:
  """--csv-reader tfx: TFX's CsvExampleGen reads a column of numbers written as text (`$13.08`,
  `8.91%`, `unknown` among numbers) as strings, hashed as a category: refused (UserError) when
  the first rows hold one, as the project's reader would read it (contracts/text_numbers.py)."""
  import pyarrow as pa

  columns, rows = _first_rows(csv_path)
  written = []
  for column in columns:
    cells = [row[column] or '' for row in rows]
    if not _all_read_as(float, [c for c in cells if c.strip()]):
      if text_numbers.readable(text_numbers.census(pa.array(cells, pa.string()))):
        written.append(column)
  if written:
    raise UserError(
      f'--csv-reader tfx: {", ".join(written)} in {csv_path} hold numbers written as text '
      "($13.08, 8.91%, 1,234.5, 'unknown'), which TFX's reader hashes as categories; leave out "
      '--csv-reader tfx (the default reader reads them as numbers), or write them as numbers'
    )


def refuse_ambiguous_dates(csv_path: str, order: str, skipped=()) -> None:
  """A column of slash dates whose first rows hold no field above 12 (05/03/2024), without
  --date-order: refused in one line naming the column and the flag (contracts/dates.py); the
  `skipped` columns (the label, ids: no model input) are not looked at."""
  columns, rows = _first_rows(csv_path)
  cells = {c: [row[c] or '' for row in rows] for c in columns if c not in skipped}
  for name, read in sorted(dates.columns(cells, order).items()):
    if not read.order:
      raise UserError(
        dates.ambiguous_line(name, cells[name], f'the first {len(rows)} rows of {csv_path}')
      )


def _first_rows(csv_path: str) -> tuple:
  """(the header's columns, the first _SNIFF_ROWS rows as dicts) as
  contracts/csv_dialect.py reads them, a number's decimal comma read as a point (12,5 as 12.5,
  as the Arrow ExampleGen types the columns): a header again mid-file is skipped, as ExampleGen
  skips it."""
  import io

  head = _head(csv_path)
  text = _utf8(csv_path, head)
  if len(head) == _SNIFF_BYTES:  # the last row may be cut short
    text = text[: text.rfind('\n') + 1]
  dialect = csv_dialect.header(head.partition(b'\n')[0])[0]
  found = csv_dialect.stream_rows(io.StringIO(text, newline=''), dialect)
  columns = csv_dialect.names(next(found, (0, []))[1])
  cell = text_numbers.with_decimal_point if dialect.decimal_comma else str
  rows = []
  for _, (_, cells) in zip(range(_SNIFF_ROWS), found):
    cells = cells + [''] * (len(columns) - len(cells))  # a short row's missing cells empty
    rows.append({c: cell(v) for c, v in zip(columns, cells)})
  return columns, [r for r in rows if any((r[c] or '').strip() != c for c in columns)]


def _utf8(csv_path: str, head: bytes) -> str:
  """The first bytes of a CSV as text (a byte-order mark left in: csv_dialect reads past it);
  UserError when they are no UTF-8."""
  try:
    return head.decode('utf-8')
  except UnicodeDecodeError as e:
    if e.start >= len(head) - 3:  # a character cut at the end of the sample
      return head[: e.start].decode('utf-8')
    line = head[: e.start].count(b'\n') + 1
    raise UserError(
      f'--data {csv_path}: not UTF-8 (byte 0x{head[e.start]:02x} on line {line}); '
      'convert it, e.g. iconv -f latin1 -t utf-8'
    ) from None


def _check_header(csv_path: str, columns: list) -> None:
  """What CsvExampleGen would read wrongly: a column name given twice (one column dropped
  without a word)."""
  twice = sorted({name for name in columns if columns.count(name) > 1})
  if twice:
    raise UserError(
      f'--data {csv_path}: the header names column{"s" if len(twice) > 1 else ""} '
      f'{", ".join(map(repr, twice))} more than once; CsvExampleGen would keep one of each and '
      'drop the others without a word: give every column its own name'
    )


def _check_label_is_no_id(csv_path: str, label: str, values: list, classes: bool) -> None:
  """Class ids or names that differ in every row looked at (MIN_ID_ROWS at least) name no
  classes: an id column given as --label would train a class per row. A number to regress (or
  made two classes by --label-threshold) may well differ in every row, unless it counts the rows
  (0, 1, 2, … in file order: a row number)."""
  if len(values) < MIN_ID_ROWS or len(set(values)) < len(values) or _floats(values):
    return
  counted = _all_read_as(int, values) and all(
    int(b) - int(a) == 1 for a, b in zip(values, values[1:])
  )
  if not classes and not counted:
    return
  raise UserError(
    f'--label {label}: every one of the first {len(values)} rows of {csv_path} has its own '
    f'value ({len(values)} distinct); a label names classes shared by many rows — is this an '
    'id column?'
  )


def _floats(values: list) -> bool:
  """Whether CsvExampleGen reads `values` as floats: numbers, not all of them integers."""
  return not _all_read_as(int, values) and _all_read_as(float, values)


def _all_read_as(kind: type, values: list) -> bool:
  try:
    for value in values:
      kind(value)
  except ValueError:
    return False
  return True


def _check_label_default(csv_path: str, label: str, default: str, values: list) -> None:
  """--label-default of the label column's kind: ExampleGen writes it into the rows before it
  types the column, so a name among integers would turn every class id into a name."""
  present = [value for value in values if not labels.is_missing(value)]
  for kind, what in ((int, 'class ids (integers)'), (float, 'numbers')):
    if present and _all_read_as(kind, present):
      if not _all_read_as(kind, [default]):
        raise UserError(
          f"--label-default {default!r}: label '{label}' holds {what} in the first "
          f'{len(values)} rows of {csv_path}; give one of those'
        )
      return


def _check_label_values(csv_path: str, label: str, values: list) -> None:
  """Every row needs a label (class ids, class names, or a float turned binary by a
  threshold): a missing one would silently change what is learned."""
  missing = sum(1 for value in values if labels.is_missing(value))
  if missing:
    raise UserError(
      f'--label {label}: {missing} of the first {len(values)} rows of {csv_path} have no value; '
      'fill them in, drop those rows, or say what they mean with --label-default'
    )


def _head(csv_path: str, size: int = _SNIFF_BYTES) -> bytes:
  """The first `size` bytes of a CSV file, local or in object storage."""
  with (
    data_paths.gfile().GFile(csv_path, 'rb')
    if cfg.is_remote(csv_path)
    else open(csv_path, 'rb') as f
  ):
    return f.read(size)


def csv_header(path: str) -> list:
  """The column names of a CSV file's first line (local or in object storage), as
  contracts/csv_dialect.header reads them."""
  return csv_dialect.header(_head(path).partition(b'\n')[0])[1]


def shifted_label_columns(csv_path: str, label: str) -> str:
  """What the run's first lines say of the columns that hold the label of the next row in file
  order ('' for none): a time series' next value, unknown when predicting (R² 0.94 in the issue's
  run) if the rows run oldest first, yet the previous value, which may stay, if newest first;
  file order does not say which, so they are named, not refused. Read on the first rows (the
  ExampleGen shuffles rows into splits: file order is known only here)."""
  columns, rows = _first_rows(csv_path)
  if label not in columns or len(rows) < MIN_ID_ROWS:
    return ''
  values = [row[label].strip() for row in rows]
  found = []
  for column in columns:
    if column == label:
      continue
    cells = [row[column].strip() for row in rows]
    pairs = [(c, v) for c, v in zip(cells, values[1:]) if c and v]
    ahead = sum(_same(c, v) for c, v in pairs)
    along = sum(_same(c, v) for c, v in zip(cells, values) if c and v)
    if pairs and ahead >= SHIFTED_SHARE * len(pairs) and along < SHIFTED_SHARE * len(pairs):
      found.append(column)
  if not found:
    return ''
  named = ', '.join(repr(c) for c in found)
  return (
    f"{named} holds the next row's {label} in the first {len(rows)} rows of {csv_path}: if rows "
    'run oldest first, a value not known when predicting (drop it); newest first, the previous '
    'value'
  )


def _same(cell: str, value: str) -> bool:
  """Two cells of one number (`3` and `3.0`) or of one text."""
  try:
    return float(cell) == float(value)
  except ValueError:
    return cell == value
