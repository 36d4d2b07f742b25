"""What --data is: which ExampleGen reads it, with which file pattern, spans and splits."""

import glob
import os
from typing import NamedTuple

from cli.inputs import data_paths, image_folders, tfrecord_probe
import config as cfg
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

_CSV_SUFFIXES = ('.csv',)
_TFRECORD_SUFFIXES = ('.tfrecord', '.tfrecords', '.tfrecord.gz', '.tfrecords.gz')


def name_kind(path: str):
  """CSV / TFRECORDS by a data file's name alone, else None (nothing is read)."""
  lowered = path.lower()
  if lowered.endswith(_CSV_SUFFIXES):
    return cfg.CSV
  if lowered.endswith(_TFRECORD_SUFFIXES):
    return cfg.TFRECORDS
  return None


def _suffix_kind(path: str):
  """name_kind, and a .gz file that reads as gzipped TFRecords is TFRECORDS."""
  if path.lower().endswith('.gz') and not name_kind(path):
    return cfg.TFRECORDS if tfrecord_probe.reads_as_gzip_tfrecords(path) else None
  return name_kind(path)


def _split_folders(path: str, resplit: bool) -> tuple:
  """((name, 'Split-<name>/*'), …) when `path` is laid out like a TFX Examples artifact; without
  Split-train and Split-eval only when they are to be re-split (resplit)."""
  entries = data_paths.visible_entries(path)
  names = sorted(
    e[len('Split-') :]
    for e in entries
    if e.startswith('Split-') and data_paths.isdir(os.path.join(path, e))
  )
  if not names or len(names) != len(entries):
    return ()
  if not resplit and not {'train', 'eval'} <= set(names):
    raise UserError(
      f'--data {path}: Split-* folders need at least Split-train and Split-eval '
      f'(found {", ".join(names)}); or give --eval-percent to split their records again'
    )
  return tuple((name, f'Split-{name}/*') for name in names)


def _numbered(path: str, prefix: str) -> list:
  """Sorted N of <path>/<prefix>N folders when they are all the folder holds, else []."""
  entries = data_paths.visible_entries(path)
  numbers = sorted(
    int(e[len(prefix) :])
    for e in entries
    if e.startswith(prefix)
    and e[len(prefix) :].isdigit()
    and data_paths.isdir(os.path.join(path, e))
  )
  return numbers if numbers and len(numbers) == len(entries) else []


def _folder_contents(path: str):
  """(kind, file pattern relative to `path`, image files) of a folder of CSV, TFRecord or class
  folders."""
  entries = data_paths.visible_entries(path)
  if not entries:
    raise UserError(f'--data {path}: the folder is empty')
  files = sorted(e for e in entries if data_paths.isfile(os.path.join(path, e)))
  folders = sorted(e for e in set(entries) - set(files) if not data_paths.skipped(e))
  found = None
  for kind, suffixes in ((cfg.CSV, _CSV_SUFFIXES), (cfg.TFRECORDS, _TFRECORD_SUFFIXES)):
    matching = [f for f in files if f.lower().endswith(suffixes)]
    if matching:
      found = matching, (kind, '*' + _one_suffix(path, matching, suffixes))
      break
  gzipped = [f for f in files if f.lower().endswith('.gz')]
  if (
    not found and gzipped and tfrecord_probe.reads_as_gzip_tfrecords(os.path.join(path, gzipped[0]))
  ):
    found = gzipped, (cfg.TFRECORDS, '*.gz')
  if found and folders:  # which one the user means is a guess: ask
    raise UserError(
      f'--data {path}: holds both folders ({_some(folders)}) and data files '
      f'({_some(found[0])}); point --data at the file(s) or move them out of the image folder'
    )
  if found:
    return (*found[1], 0)
  return cfg.IMAGES, image_folders.CLASS_FOLDERS, image_folders.check_image_tree(path)


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


def _some(names: list, shown: int = 3) -> str:
  return ', '.join(names[:shown]) + (
    f' and {len(names) - shown} more' if len(names) > shown else ''
  )


def resolve_data(path: str, resplit: bool = False) -> DataSource:
  """Decides which ExampleGen reads `path`; raises UserError for anything unusable. resplit:
  Split-* folders are to be split again (--eval-percent), so any of them will do."""
  if not data_paths.exists(path):
    raise UserError(f'--data {path}: no such file or folder')
  path = path.rstrip('/') if cfg.is_remote(path) else os.path.abspath(path)
  if data_paths.isfile(path):
    kind = _suffix_kind(path)
    if kind is None and path.lower().endswith('.txt'):
      raise UserError(
        f'--data {path}: a .txt file is not read; if it is CSV (a header row, then '
        'comma-separated rows), give it a .csv name'
      )
    if kind is None and tfrecord_probe.uncompressed_tfrecords(path):
      raise UserError(
        f'--data {path}: TFRecords without a .tfrecord name: rename it *.tfrecord to read it'
      )
    if kind is None:
      raise UserError(f'--data {path}: unknown file type {data_paths.EXPECTED_LAYOUTS}')
    return DataSource(kind, os.path.dirname(path), os.path.basename(path))
  splits = _split_folders(path, resplit)
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


def data_bytes(source: DataSource) -> int:
  """The size of a local source's CSV or TFRecord files, every span and split (0: images, or
  object storage, where it is not asked for)."""
  if source.kind == cfg.IMAGES or cfg.is_remote(source.root):
    return 0
  return sum(os.path.getsize(path) for path in local_files(source))


def local_files(source: DataSource) -> list:
  """The files of a local source, every span, version and split, sorted."""
  patterns = [source.pattern] + [pattern for _, pattern in source.splits]
  found = {
    path
    for pattern in patterns
    for path in glob.glob(os.path.join(glob.escape(source.root), _any_version(pattern)))
  }
  return sorted(path for path in found if os.path.isfile(path))


def _any_version(pattern: str) -> str:
  """A source's file pattern with every span and version matched."""
  return pattern.replace('{SPAN}', '*').replace('{VERSION}', '*')


def sample_file(source: DataSource) -> str:
  """One data file of the newest version (to look at its header or first record)."""
  pattern = os.path.join(
    source.root if cfg.is_remote(source.root) else glob.escape(source.root),
    _any_version(source.pattern),
  )
  files = sorted(data_paths.gfile().glob(pattern) if cfg.is_remote(pattern) else glob.glob(pattern))
  if not files:
    raise UserError(f'--data {source.root}: no files match {source.pattern}')
  return files[-1]
