"""Data files known as git's index knows them: by size, modification time, inode and change time,
and by content (a digest) where those differ from what was recorded.

TFX's ExampleGen driver fingerprints its input by size and modification time only, and `touch -r`
sets a modification time back: an edit of the same size would be served from the cache. The change
time (ctime) cannot be set back by a user (only the clock can), so a file whose four stat fields
are the ones recorded with its digest keeps that digest; any other file is read again. A file
changed less than RACY_NS before it was digested is not recorded (timestamps are coarser than
their nanoseconds: git's "racily clean" entries), so it is read again next time.

`digest(path, index_file)` is what `cli/unchanged.py` compares and what pipeline.py puts in the
ExampleGen's cache key (`DATA_KEY` + path in its code_fingerprint). The index is a JSON file
{absolute path: [size, mtime_ns, inode, ctime_ns, digest]} in the run's local folder.
"""

import glob
import hashlib
import json
import os
import time
from typing import Dict, List, Sequence, Tuple

from utils import atomic, fingerprint

INDEX_FILE = 'data_index.json'
DATA_KEY = 'data content: '  # a code_fingerprint entry that is the content of the data, not code
RACY_NS = 2_000_000_000  # two seconds: coarse file-system clocks, a clock of another machine


def _walk(path: str, patterns: Sequence[str] = ()) -> List[str]:
  """Every file at or below `path` (links followed), or those `patterns` (globs relative to
  `path`) match, sorted."""
  if os.path.isfile(path):
    return [path]
  if patterns:
    found = {f for p in patterns for f in glob.glob(os.path.join(glob.escape(path), p))}
    return sorted(f for f in found if not os.path.isdir(f))
  found = []
  for folder, subfolders, names in os.walk(path, followlinks=True):
    subfolders.sort()
    found += [os.path.join(folder, name) for name in sorted(names)]
  return found


def _load(index_file: str) -> Dict[str, list]:
  try:
    with open(index_file) as f:
      return json.load(f)
  except (OSError, ValueError):  # none yet, or half a file from a full disk: digest everything
    return {}


def listing(
  path: str, index_file: str = '', patterns: Sequence[str] = (), update: bool = True
) -> List[Tuple[str, str]]:
  """(path relative to `path`, content digest) of every file at or below `path` (or that
  `patterns` match: the ExampleGen's file patterns) ('' for a link to nothing); digests recorded
  in `index_file` are reused where the stat fields match, and new ones recorded there unless
  not `update`."""
  index = _load(index_file) if index_file else {}
  started = time.time_ns()
  found, changed = [], False
  root = os.path.abspath(path)
  files = _walk(root, patterns)  # absolute paths: the index's keys
  cut = len(root) + 1  # os.path.relpath costs more than the stat
  for key in files:
    relative = key[cut:] if key != root else os.path.basename(root)
    try:
      stat = os.stat(key)
    except OSError:  # a link to nothing: listed as such
      found.append((relative, ''))
      continue
    fields = [stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns]
    known = index.get(key)
    if known and known[:4] == fields:
      found.append((relative, known[4]))
      continue
    try:
      digest = fingerprint.file_digest(key)
    except OSError:  # unreadable: listed as such (the ExampleGen says why, if it reads it)
      found.append((relative, ''))
      continue
    found.append((relative, digest))
    if max(stat.st_mtime_ns, stat.st_ctime_ns) < started - RACY_NS:
      index[key] = fields + [digest]
      changed = True
  under = root + os.sep
  seen = set(files)
  gone = [k for k in index if k.startswith(under) and k not in seen and not os.path.lexists(k)]
  for key in gone:  # removed files (others there: another pattern's, --infer-data's, kept)
    del index[key]
  if index_file and update and (changed or gone):
    try:
      atomic.write(index_file, json.dumps(index, separators=(',', ':')))
    except OSError:  # no local folder yet (or read-only): digested again next time
      pass
  return found


def digest(
  path: str, index_file: str = '', patterns: Sequence[str] = (), update: bool = True
) -> str:
  """One digest of the relative path and content of every file listing() lists."""
  summed = hashlib.sha256()
  for relative, content in listing(path, index_file, patterns, update):
    summed.update(f'{relative}\0{content}\n'.encode())
  return summed.hexdigest()[:16]
