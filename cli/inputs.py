"""Checks --data and --output before anything is written, and lays out the embedded data."""

import glob
import json
import os
import shutil
import struct
import tempfile
from typing import NamedTuple, Optional, Tuple

import config as cfg
from contracts import artifacts, atomic
from contracts.errors import UserError


class DataSource(NamedTuple):
  kind: str  # cfg.IMAGES, cfg.CSV or cfg.TFRECORDS
  root: str  # folder handed to the ExampleGen as input_base
  pattern: str  # files under root, with {SPAN} / {VERSION} for data versions
  spans: tuple = ()  # the span numbers found (span-<N> folders)
  splits: tuple = ()  # TFRecords already split: ((name, pattern), …) from Split-<name> folders
  images: int = 0  # image files found (the latest data version's); 0 for other kinds


# Data versions: <root>/span-<N>/… or <root>/span-<N>/version-<M>/…, the newest read by default.
SPAN_FOLDER = 'span-{SPAN}'
VERSION_FOLDER = 'version-{VERSION}'
CLASS_FOLDERS = '*/*'  # images: <class>/<file>
UNLABELED_IMAGES = '*'  # unlabeled images (--infer-data): what lies right below the folder

_CSV_SUFFIXES = ('.csv',)
_TFRECORD_SUFFIXES = ('.tfrecord', '.tfrecords', '.tfrecord.gz', '.tfrecords.gz')
_KNOWN = (
  '(expected a folder of class folders, .csv, .tfrecord or .tfrecord.gz, or Split-* '
  'folders of TFRecords)'
)


def _gfile():
  import tensorflow as tf

  return tf.io.gfile


def _exists(path: str) -> bool:
  return _gfile().exists(path) if cfg.is_remote(path) else os.path.exists(path)


def _isdir(path: str) -> bool:
  return _gfile().isdir(path) if cfg.is_remote(path) else os.path.isdir(path)


def _isfile(path: str) -> bool:
  return _exists(path) and not _isdir(path)


def _visible(path: str) -> list:
  """The folder's entries, hidden ones left out (object stores list folders with a '/')."""
  names = (
    [e.rstrip('/') for e in _gfile().listdir(path)] if cfg.is_remote(path) else os.listdir(path)
  )
  return [e for e in names if not e.startswith('.')]


def _suffix_kind(path: str):
  lowered = path.lower()
  if lowered.endswith(_CSV_SUFFIXES):
    return cfg.CSV
  if lowered.endswith(_TFRECORD_SUFFIXES) or (lowered.endswith('.gz') and _gzip_tfrecord(path)):
    return cfg.TFRECORDS
  return None


def _gzip_tfrecord(path: str) -> bool:
  """Whether a .gz file (TFX names shards `data_tfrecord-….gz`) reads as GZIP TFRecords."""
  import tensorflow as tf

  try:
    for _ in tf.data.TFRecordDataset(path, compression_type='GZIP').take(1):
      return True  # at least one intact record
  except (tf.errors.DataLossError, tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError):
    pass
  return False


def _split_folders(path: str) -> tuple:
  """((name, 'Split-<name>/*'), …) when `path` is laid out like a TFX Examples artifact."""
  entries = _visible(path)
  names = sorted(
    e[len('Split-') :] for e in entries if e.startswith('Split-') and _isdir(os.path.join(path, e))
  )
  if not names or len(names) != len(entries):
    return ()
  if not {'train', 'eval'} <= set(names):
    raise UserError(
      f'--data {path}: Split-* folders need at least Split-train and Split-eval '
      f'(found {", ".join(names)})'
    )
  return tuple((name, f'Split-{name}/*') for name in names)


def _numbered(path: str, prefix: str) -> list:
  """Sorted N of <path>/<prefix>N folders when they are all the folder holds, else []."""
  entries = _visible(path)
  numbers = sorted(
    int(e[len(prefix) :])
    for e in entries
    if e.startswith(prefix) and e[len(prefix) :].isdigit() and _isdir(os.path.join(path, e))
  )
  return numbers if numbers and len(numbers) == len(entries) else []


def _folder_contents(path: str):
  """(kind, file pattern relative to `path`, image files) of a folder of CSV, TFRecord or class
  folders."""
  entries = _visible(path)
  if not entries:
    raise UserError(f'--data {path}: the folder is empty')
  files = sorted(e for e in entries if _isfile(os.path.join(path, e)))
  folders = sorted(e for e in set(entries) - set(files) if not _skipped(e))
  found = None
  for kind, suffixes in ((cfg.CSV, _CSV_SUFFIXES), (cfg.TFRECORDS, _TFRECORD_SUFFIXES)):
    matching = [f for f in files if f.lower().endswith(suffixes)]
    if matching:
      found = matching, (kind, '*' + _one_suffix(path, matching, suffixes))
      break
  gzipped = [f for f in files if f.lower().endswith('.gz')]
  if not found and gzipped and _gzip_tfrecord(os.path.join(path, gzipped[0])):
    found = gzipped, (cfg.TFRECORDS, '*.gz')
  if found and folders:  # which one the user means is a guess: ask
    raise UserError(
      f'--data {path}: holds both folders ({_some(folders)}) and data files '
      f'({_some(found[0])}); point --data at the file(s) or move them out of the image folder'
    )
  if found:
    return (*found[1], 0)
  return cfg.IMAGES, CLASS_FOLDERS, check_image_tree(path)


def _one_suffix(path: str, files: list, suffixes: tuple) -> str:
  """The suffix all `files` share: ExampleGen reads one file pattern, and a second suffix would
  leave its files out without a word."""
  by_suffix = {}
  for name in files:
    by_suffix.setdefault(next(s for s in suffixes if name.lower().endswith(s)), []).append(name)
  if len(by_suffix) > 1:
    kinds = ', '.join(
      f'{suffix} ({_some(names, 1)})' for suffix, names in sorted(by_suffix.items())
    )
    raise UserError(
      f'--data {path}: holds {kinds}: one kind of file is read at a time; '
      'give them one suffix (compress all of them or none)'
    )
  return next(iter(by_suffix))


def _skipped(name: str) -> bool:
  from components.image_example_gen import folder  # Beam's file systems: only when needed

  return folder.skipped(name)


def _some(names: list, shown: int = 3) -> str:
  return ', '.join(names[:shown]) + (
    f' and {len(names) - shown} more' if len(names) > shown else ''
  )


def resolve_data(path: str) -> DataSource:
  """Decides which ExampleGen reads `path`; raises UserError for anything unusable."""
  if not _exists(path):
    raise UserError(f'--data {path}: no such file or folder')
  path = path.rstrip('/') if cfg.is_remote(path) else os.path.abspath(path)
  if _isfile(path):
    kind = _suffix_kind(path)
    if kind is None and path.lower().endswith('.txt'):
      raise UserError(
        f'--data {path}: a .txt file is not read; if it is CSV (a header row, then '
        'comma-separated rows), give it a .csv name'
      )
    if kind is None:
      raise UserError(f'--data {path}: unknown file type {_KNOWN}')
    return DataSource(kind, os.path.dirname(path), os.path.basename(path))
  splits = _split_folders(path)
  if splits:
    return DataSource(cfg.TFRECORDS, path, splits[0][1], splits=splits)
  spans = _numbered(path, 'span-')
  if not spans:
    kind, files, images = _folder_contents(path)
    return DataSource(kind, path, files, images=images)
  latest = os.path.join(path, f'span-{spans[-1]}')
  versions = _numbered(latest, 'version-')
  folders = f'{SPAN_FOLDER}/{VERSION_FOLDER}' if versions else SPAN_FOLDER
  kind, files, images = _folder_contents(
    os.path.join(latest, f'version-{versions[-1]}') if versions else latest
  )
  return DataSource(kind, path, f'{folders}/{files}', tuple(spans), images=images)


MIN_TEXT_WORDS = 5  # median words per row above which a string column is free text
_SNIFF_ROWS = 200
_SNIFF_BYTES = 1 << 20  # CSV bytes looked at before the run (rows, encoding, labels)
MIN_ROWS = 2  # CSV data rows: one for each split at least
MIN_ID_ROWS = 20  # rows with a label of their own each, at least, that make it an id column
_OTHER_DELIMITERS = {';': 'semicolon', '\t': 'tab'}  # Excel's exports in some locales


def data_bytes(source: DataSource) -> int:
  """The size of a local source's CSV or TFRecord files, every span and split (0: images, or
  object storage, where it is not asked for)."""
  if source.kind == cfg.IMAGES or cfg.is_remote(source.root):
    return 0
  patterns = [pattern for _, pattern in source.splits] or [source.pattern]
  found = set()
  for pattern in patterns:
    wildcard = pattern.replace('{SPAN}', '*').replace('{VERSION}', '*')
    found.update(glob.glob(os.path.join(glob.escape(source.root), wildcard)))
  return sum(os.path.getsize(path) for path in found if os.path.isfile(path))


def sample_file(source: DataSource) -> str:
  """One data file of the newest version (to look at its header or first record)."""
  pattern = os.path.join(
    source.root if cfg.is_remote(source.root) else glob.escape(source.root),
    source.pattern.replace('{SPAN}', '*').replace('{VERSION}', '*'),
  )
  files = sorted(_gfile().glob(pattern) if cfg.is_remote(pattern) else glob.glob(pattern))
  if not files:
    raise UserError(f'--data {source.root}: no files match {source.pattern}')
  return files[-1]


def text_column(csv_path: str, label: str, chosen: str = '', label_default: str = '') -> str:
  """The CSV's free-text column ('' for tabular data): `chosen`, or detected as the only column
  besides the label, holding at least MIN_TEXT_WORDS words per row on median. Raises UserError
  for what CsvExampleGen would fail on later (encoding, byte-order mark, no rows, text labels)
  and for rows without a label when there is no `label_default`."""
  import csv
  import io
  import statistics

  with _gfile().GFile(csv_path, 'rb') if cfg.is_remote(csv_path) else open(csv_path, 'rb') as f:
    head = f.read(_SNIFF_BYTES)
  text = _utf8(csv_path, head)
  if len(head) == _SNIFF_BYTES:  # the last row may be cut short
    text = text[: text.rfind('\n') + 1]
  reader = csv.DictReader(io.StringIO(text, newline=''))
  columns = reader.fieldnames or []
  rows = [row for _, row in zip(range(_SNIFF_ROWS), reader)]
  _check_header(csv_path, text.partition('\n')[0].rstrip('\r'), columns, (label, chosen))
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
  _check_label_is_no_id(
    csv_path, label, [label_default if _missing(r[label]) else r[label] for r in rows]
  )
  if chosen:
    return chosen
  others = [c for c in columns if c != label]
  if len(others) != 1:
    return ''
  words = statistics.median(len((row[others[0]] or '').split()) for row in rows)
  return others[0] if words >= MIN_TEXT_WORDS else ''


def _utf8(csv_path: str, head: bytes) -> str:
  """The first bytes of a CSV as text: CsvExampleGen reads UTF-8 without a byte-order mark."""
  if head.startswith(b'\xef\xbb\xbf'):
    raise UserError(
      f'--data {csv_path}: starts with a UTF-8 byte-order mark (Excel\'s "CSV UTF-8"), which '
      'CsvExampleGen would read into the first column name; save it without one'
    )
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


def _check_header(csv_path: str, line: str, columns: list, named: tuple) -> None:
  """What CsvExampleGen would read wrongly: a header of another delimiter (a column named by a
  flag not found, the delimiter more common than commas), a column name given twice (one
  column dropped without a word)."""
  if any(name and name not in columns for name in named):
    delimiter = max(_OTHER_DELIMITERS, key=line.count)
    if delimiter in line and line.count(delimiter) >= len(columns):
      shown = (line if len(line) <= 60 else line[:60] + '…').replace('\t', '\\t')
      raise UserError(
        f'--data {csv_path}: the header looks {_OTHER_DELIMITERS[delimiter]}-separated '
        f'({shown}); CsvExampleGen reads comma-separated files: save it as CSV with commas'
      )
  twice = sorted({name for name in columns if columns.count(name) > 1})
  if twice:
    raise UserError(
      f'--data {csv_path}: the header names column{"s" if len(twice) > 1 else ""} '
      f'{", ".join(map(repr, twice))} more than once; CsvExampleGen would keep one of each and '
      'drop the others without a word: give every column its own name'
    )


def _check_label_is_no_id(csv_path: str, label: str, values: list) -> None:
  """Class ids or names that differ in every row looked at (MIN_ID_ROWS at least) name no
  classes: an id column given as --label would train a class per row. A float label is turned
  binary by --label-threshold and may well differ in every row."""
  if len(values) < MIN_ID_ROWS or len(set(values)) < len(values) or _floats(values):
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


def _check_label_values(csv_path: str, label: str, values: list) -> None:
  """Every row needs a label (class ids, class names, or a float turned binary by a
  threshold): a missing one would silently change what is learned."""
  missing = sum(1 for value in values if _missing(value))
  if missing:
    raise UserError(
      f'--label {label}: {missing} of the first {len(values)} rows of {csv_path} have no value; '
      'fill them in, drop those rows, or say what they mean with --label-default'
    )


def _missing(value) -> bool:
  """An empty cell, or one pandas and spreadsheets write for 'no value' (nan, NA, …)."""
  return (value or '').strip().lower() in ('', 'nan', 'na', 'n/a', 'null', 'none')


def holds_sequence_examples(tfrecord_path: str) -> bool:
  """Whether the file's first record is a SequenceExample with feature lists; raises UserError
  when there is no first record or it is not a tf.Example / SequenceExample."""
  import tensorflow as tf

  compression = 'GZIP' if tfrecord_path.endswith('.gz') else ''
  try:
    first = next(iter(tf.data.TFRecordDataset(tfrecord_path, compression_type=compression)), None)
    first = None if first is None else first.numpy()
  except (tf.errors.DataLossError, tf.errors.InvalidArgumentError):
    first = _first_intact_record(tfrecord_path, compression)  # damage further on: salvaged
  if first is None:
    raise UserError(f'--data {tfrecord_path}: holds no records')
  sequence = _parsed(tf.train.SequenceExample, first)
  if sequence is not None and sequence.feature_lists.feature_list:
    return True
  example = _parsed(tf.train.Example, first)
  if example is None or not example.features.feature:
    raise UserError(
      f'--data {tfrecord_path}: its first record is not a tf.Example or tf.SequenceExample '
      'with features'
    )
  return False


def _first_intact_record(tfrecord_path: str, compression: str) -> bytes:
  """The first record whose CRCs check (the project's scan), or UserError when none does."""
  from records import scan

  report, data = scan.scan(tfrecord_path)
  if report.good and report.spans:
    start, end = report.spans[0]
    if data is None:
      with _gfile().GFile(tfrecord_path, 'rb') as f:
        f.seek(start)
        data, start = f.read(end - start), 0
    (length,) = struct.unpack_from('<Q', data, start)
    return bytes(data[start + scan.HEADER : start + scan.HEADER + length])
  with _gfile().GFile(tfrecord_path, 'rb') as f:
    gzipped = f.read(2) == b'\x1f\x8b'
  raise UserError(
    f'--data {tfrecord_path}: '
    + (
      'GZIP-compressed; name it *.tfrecord.gz or *.gz so that it is read as such'
      if gzipped and not compression
      else 'not a TFRecord file (no record in it checks)'
    )
  )


def salvage_tfrecords(source: DataSource, destination: str) -> Tuple[DataSource, Optional[dict]]:
  """Scans a local TFRecord input with the project's shard scan. Clean: (source, None). Damaged:
  every file is copied below `destination` with its intact records only (same layout; a copy
  newer than its original is kept, so re-runs stay cached), and the source read from there;
  with the scan's totals, also written to `destination`/DAMAGE_FILE for the summary."""
  from records import scan

  if cfg.is_remote(source.root):
    return source, None
  patterns = [source.pattern] + [pattern for _, pattern in source.splits]
  files = sorted(
    {
      path
      for pattern in patterns
      for path in glob.glob(
        os.path.join(
          glob.escape(source.root), pattern.replace('{SPAN}', '*').replace('{VERSION}', '*')
        )
      )
      if os.path.isfile(path)
    }
  )
  reports = scan.check_all(files)  # in parallel; copies are written below, for damage only
  if all(report.clean for report in reports):
    return source, None
  for path in files:
    target = os.path.join(destination, os.path.relpath(path, source.root))
    if not (os.path.exists(target) and os.path.getmtime(target) >= os.path.getmtime(path)):
      scan.check(path, target, salvage_clean=True)
  totals = dict(scan.totals(reports), damaged=[r.summary() for r in reports if not r.clean])
  atomic.write(os.path.join(destination, artifacts.DAMAGE_FILE), json.dumps(totals, indent=2))
  return source._replace(root=destination), totals


def _parsed(proto_class, record: bytes):
  import warnings

  from google.protobuf.message import DecodeError

  try:
    with warnings.catch_warnings():  # "Unexpected end-group tag": not this proto, said below
      warnings.simplefilter('ignore', RuntimeWarning)
      return proto_class.FromString(record)
  except DecodeError:
    return None


def check_image_tree(path: str) -> int:
  """The number of images under `path`; raises UserError unless it holds at least two class
  folders with images."""
  from components.image_example_gen import folder

  listing = folder.list_image_folder(path)
  if not listing.labels:
    raise UserError(f'--data {path}: no class folders, CSV or TFRecord files in it {_KNOWN}')
  if not listing.images:
    raise UserError(f'--data {path}: no images ({folder.IMAGE_SUFFIXES}) in its class folders')
  classes = sorted({listing.labels[f.label] for f in listing.images})
  if len(classes) < 2:
    raise UserError(
      f'--data {path}: only one class folder with images ({classes[0]!r}); '
      'a classifier needs at least two'
    )
  return len(listing.images)


def unlabeled_images(path: str, flag: str) -> str:
  """The folder of a flag's unlabeled images (any depth; files of other kinds are skipped and
  listed); raises UserError for a file, a missing folder or one without images."""
  from components.image_example_gen import folder

  if not _exists(path):
    raise UserError(f'{flag} {path}: no such folder')
  if _isfile(path):
    raise UserError(f'{flag} {path}: a folder of images, not a file')
  root = path.rstrip('/') if cfg.is_remote(path) else os.path.abspath(path)
  if not folder.list_unlabeled(root).images:
    raise UserError(f'{flag} {path}: no images ({folder.IMAGE_SUFFIXES}) in it')
  return root


def check_outside_data(data: str, kind: str, flag: str, path: str) -> None:
  """Raises UserError when `path` (--output, --local-dir) is the --data folder or below it,
  other than in a hidden folder: a data folder is listed whole (an image folder to its last
  file, other folders for their data files or span-<N> folders), so the pipeline's own files
  would be read as data, and the data would change with every run."""
  if not _isdir(data):
    return  # one file: only it is read, whatever lies beside it
  if cfg.is_remote(data) or cfg.is_remote(path):
    folder, inside = data.rstrip('/'), path.rstrip('/')
  else:
    folder, inside = os.path.realpath(data), os.path.realpath(path)
  below = folder.rstrip('/') + '/'
  if not (inside == folder or inside.startswith(below)) or _skipped(inside[len(below) :]):
    return
  raise UserError(
    f'{flag} {path} is inside --data {data}: '
    + (
      'its files would be read as images (an extra class)'
      if kind == cfg.IMAGES
      else 'the next run would take its folder for part of the data'
    )
    + f'; choose {"an output" if flag == "--output" else "a " + flag} outside the data folder'
  )


def check_output(path: str) -> str:
  """Creates the output folder if needed and proves it writable; returns its absolute path."""
  pattern = sorted(set(path) & set('[]*?'))
  if pattern:  # Beam and TFX find artifact files by glob patterns built on this path
    raise UserError(
      f'--output {path}: {" ".join(pattern)} would be read as glob patterns by Beam and TFX, '
      'which find artifact files by pattern; choose a path without them'
    )
  if cfg.is_remote(path):
    return _check_remote_output(path.rstrip('/'))
  path = os.path.abspath(path)
  if os.path.exists(path) and not os.path.isdir(path):
    raise UserError(f'--output {path}: exists and is not a folder')
  created = not os.path.exists(path)
  try:
    os.makedirs(path, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path, prefix='.write-test-'):
      pass
  except OSError as e:
    if created and os.path.isdir(path):
      shutil.rmtree(path, ignore_errors=True)
    raise UserError(f'--output {path}: not writable ({e.strerror or e})') from None
  return path


def _check_remote_output(path: str) -> str:
  """Writes and deletes a marker object under a gs:// or s3:// output to prove access."""
  probe = f'{path}/.write-test-{os.getpid()}'
  try:
    _gfile().makedirs(path)
    with _gfile().GFile(probe, 'w') as f:
      f.write('ok')
    _gfile().remove(probe)
  except Exception as e:  # errors differ per store and plugin
    raise UserError(
      f'--output {path}: not writable ({str(e).splitlines()[0] if str(e) else e!r})'
    ) from None
  return path


def check_metadata(path: str) -> None:
  """Raises UserError when an existing ML Metadata store is not an SQLite database."""
  if not os.path.exists(path):
    return
  with open(path, 'rb') as f:
    header = f.read(16)
  if header != b'SQLite format 3\x00':
    raise UserError(
      f'{path}: not an SQLite database (damaged?); move it away to start afresh '
      '(every component then runs again)'
    )


def local_state_dir(output: str) -> str:
  """Where metadata.sqlite, logs and the run report go for a gs:// or s3:// --output:
  ML Metadata's SQLite store needs a local file (output/remote/<scheme>/<bucket>/<path>)."""
  scheme, rest = output.split('://', 1)
  return os.path.abspath(os.path.join('output', 'remote', scheme, *rest.strip('/').split('/')))


def write_digits(dest: str) -> str:
  """scikit-learn's 1,797 labelled 8×8 digits as <dest>/<digit>/<index>.png (grayscale).

  Written once, into a temporary folder renamed at the end, so an interrupted first run
  never leaves a partial tree (and file mtimes stay put, which keeps ExampleGen cached).
  """
  if os.path.isdir(dest):
    return dest
  import numpy as np
  import PIL.Image
  from sklearn.datasets import load_digits

  digits = load_digits()
  with atomic.folder_atomically(dest) as staging:
    for index, (pixels, target) in enumerate(zip(digits.images, digits.target)):
      class_dir = os.path.join(staging, str(target))
      os.makedirs(class_dir, exist_ok=True)
      gray = np.round(pixels * (255.0 / 16.0)).astype(np.uint8)  # 0..16 → 0..255
      PIL.Image.fromarray(gray, 'L').save(os.path.join(class_dir, f'{index:04d}.png'))
  return dest
