"""What knowing data files as git does (utils/data_index.py, issue 60) costs the nothing-changed
check of `pipeline.py run` (cli/unchanged.py).

  .venv/bin/python -m bench.data_index [--quick] [--files N] [--repeats N] [--json OUT]

Two folders: the embedded digits (1,797 8x8 PNGs, cli.inputs.default_data.write_digits) and N
small files (default 10,000 of 1-2 KB in 100 folders; --quick: 200). Per folder, the median
of --repeats calls (default 5; --quick: 1) of:
  stat_only  every file's size and modification time (os.walk and os.stat: what cli/unchanged.py
             compared before issue 60, and what TFX's driver fingerprints);
  cold       data_index.digest with no index: every file read and hashed (a first run, a copied
             folder, every file touched);
  warm       data_index.digest with the index the cold call wrote, nothing changed: four stat
             fields compared per file, nothing read (the nothing-changed check);
  added      warm - stat_only: the seconds the nothing-changed check gained.
The index is written 2.5 s after the files (data_index.RACY_NS: a file changed within 2 s of
being digested is read again), and a file then edited with its size and time set back must
change the digest (the index measured is one that works).
"""

import argparse
import os
import statistics
import tempfile
import time

from bench import figures as figures_file
from utils import data_index

DEFAULT_FILES, QUICK_FILES = 10_000, 200


def _stat_only(path: str) -> list:
  found = []
  for folder, subfolders, names in os.walk(path, followlinks=True):
    subfolders.sort()
    for name in sorted(names):
      stat = os.stat(os.path.join(folder, name))
      found.append([name, stat.st_size, stat.st_mtime_ns])
  return found


def _small_files(path: str, count: int) -> str:
  for i in range(count):
    folder = os.path.join(path, f'{i % 100:03d}')
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f'{i:05d}.txt'), 'wb') as f:
      f.write(os.urandom(1024 + i % 1024))
  return path


def _timed(call, repeats: int) -> float:
  seconds = []
  for _ in range(repeats):
    started = time.perf_counter()
    call()
    seconds.append(time.perf_counter() - started)
  return round(statistics.median(seconds), 4)


def measure(path: str, index: str, repeats: int) -> dict:
  """stat_only, cold, warm and added seconds of one folder; an edit with its stat set back seen."""
  files = sum(len(names) for _, _, names in os.walk(path))

  def cold():
    if os.path.exists(index):
      os.remove(index)
    data_index.digest(path, index)

  found = {
    'files': files,
    'stat_only': _timed(lambda: _stat_only(path), repeats),
    'cold': _timed(cold, repeats),
  }
  before = data_index.digest(path, index)
  found['warm'] = _timed(lambda: data_index.digest(path, index), repeats)
  found['added'] = round(found['warm'] - found['stat_only'], 4)
  edited = min(os.path.join(folder, name) for folder, _, names in os.walk(path) for name in names)
  kept = os.stat(edited)
  with open(edited, 'rb') as f:
    content = f.read()
  time.sleep(0.05)  # past the file system's clock tick: the edit gets a new change time
  with open(edited, 'wb') as f:
    f.write(bytes(b ^ 1 for b in content))
  os.utime(edited, ns=(kept.st_atime_ns, kept.st_mtime_ns))  # `touch -r`
  found['edit_seen'] = data_index.digest(path, index) != before
  return found


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument('--quick', action='store_true', help=f'{QUICK_FILES} files, 1 repeat')
  parser.add_argument('--files', type=int, default=0, help=f'default {DEFAULT_FILES}')
  parser.add_argument('--repeats', type=int, default=0, help='default 5 (quick: 1)')
  parser.add_argument('--json', help='also write the figures here')
  args = parser.parse_args(argv)
  count = args.files or (QUICK_FILES if args.quick else DEFAULT_FILES)
  repeats = args.repeats or (1 if args.quick else 5)
  from cli.inputs import default_data

  with tempfile.TemporaryDirectory(prefix='bench-data-index-') as scratch:
    folders = {
      'digits': default_data.write_digits(os.path.join(scratch, 'digits')),
      'small_files': _small_files(os.path.join(scratch, 'small'), count),
    }
    time.sleep(data_index.RACY_NS / 1e9 + 0.5)  # the files older than the racy window
    figures = {
      'repeats': repeats,
      **{
        name: measure(path, os.path.join(scratch, f'{name}.json'), repeats)
        for name, path in folders.items()
      },
    }
  for name in folders:
    found = figures[name]
    print(
      f'{name}: {found["files"]} files: stat only {found["stat_only"]:.3f} s, cold digest '
      f'{found["cold"]:.3f} s, warm (nothing changed) {found["warm"]:.3f} s, added '
      f'{found["added"]:+.3f} s; edit with size and time set back seen: {found["edit_seen"]}'
    )
  figures_file.save(figures, args.json)
  return figures


if __name__ == '__main__':
  main()
