"""`pipeline.py run --watch`: one process that runs the pipeline, then again on every save of what
the run reads, with TensorFlow, TFX and ML Metadata already loaded (as `tsc --watch` or `cargo
watch` do, without the fresh process).

What is watched, by size and modification time, polled every POLL_SECONDS: the data (`--data`,
`--infer-data`, every file under a folder), the files options name (`--model`, `--schema`,
`--weights`, `--module-file` and the files beside it that it imports), and the project's own
code. A save during a run is seen after it: the snapshot is taken before each run, so that run
finishes and the next one starts. A save of the project's own code restarts the process
(os.execv: a warm process would keep the modules it imported); anything else re-runs in the same
process (a module file and the files beside it are imported anew: trainer/module_file.load), and
TFX's cache re-runs exactly what the save touched. A broken
save (a CSV that no longer reads, a model file that does not build) prints its one line and the
watch goes on; so does a deleted data folder or file an option names (no run until it is back).
Ctrl-C ends it with the run's exit code for an interruption.
"""

import argparse
import ctypes
import gc
import os
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

import config as cfg
from contracts.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED, UserError
from utils import module_reach

POLL_SECONDS = 0.5
pause = time.sleep  # the wait between polls (a test drives the watch through it)
WATCHED_OPTIONS = (
  'data',
  'infer_data',
  'model',
  'module_file',
  'schema',
  'weights',
)  # paths of files or folders


def check(args: argparse.Namespace) -> None:
  """--watch runs locally on local files: UserError otherwise."""
  remote = [
    getattr(args, name)
    for name in WATCHED_OPTIONS + ('output',)
    if _remote(getattr(args, name, ''))
  ]
  if remote:
    raise UserError(f'--watch: {remote[0]} is in object storage; --watch watches local files')
  if getattr(args, 'beam_runner', cfg.DIRECT_RUNNER) != cfg.DIRECT_RUNNER:
    raise UserError(
      '--watch: runs with the DirectRunner only (a cluster runner starts its jobs anew)'
    )


def _remote(path) -> bool:
  return isinstance(path, str) and cfg.is_remote(path)


def watched_paths(args: argparse.Namespace) -> List[str]:
  """The files and folders the options name that the watch follows."""
  paths = []
  for name in WATCHED_OPTIONS:
    path = getattr(args, name, '') or ''
    if (
      not path
      or path in ('imagenet', 'none')
      or (name in ('model', 'module_file') and not path.endswith('.py'))
    ):
      continue
    paths.append(path)
    if name == 'module_file':
      paths += beside_imported(path)
  return paths


def beside_imported(module_file: str) -> List[str]:
  """The files beside a module file that it imports (utils/module_reach.py, as its cache key
  takes them); [] while it does not parse (a save half made) or is gone."""
  try:
    return module_reach.local_imports(module_file)
  except (OSError, SyntaxError, ValueError):
    return []


def snapshot(args: argparse.Namespace, code_digest: Callable[[], str]) -> Tuple[dict, str]:
  """(every watched file's (size, modification time), the project code's digest)."""
  files: Dict[str, List[int]] = {}
  for path in watched_paths(args):
    for found in _files(path):
      try:
        stat = os.stat(found)
      except FileNotFoundError:
        continue
      files[found] = [stat.st_size, stat.st_mtime_ns]
  return files, code_digest()


def _files(path: str) -> List[str]:
  """The file, or every file under the folder."""
  if not os.path.isdir(path):
    return [path]
  found = []
  for root, folders, names in os.walk(path):
    folders.sort()
    found += [os.path.join(root, name) for name in sorted(names)]
  return found


def watch(
  args: argparse.Namespace,
  run_once: Callable[[argparse.Namespace], int],
  code_digest: Callable[[], str],
  restart: Callable[[], None],
  sleep: Optional[Callable[[float], None]] = None,
) -> int:
  """Runs `run_once(args)`, then again whenever the snapshot changes, until Ctrl-C (or a run
  that was interrupted); returns that exit code. A UserError of a run is its one line."""
  check(args)
  sleep = sleep or pause
  while True:
    seen = snapshot(args, code_digest)
    try:
      code = run_once(args)
    except UserError as e:
      print(f'error: {e}', file=sys.stderr, flush=True)
      code = EXIT_BAD_INPUT
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
      return code
    return_freed_memory()
    print(f'watching: the next save runs again (exit code {code}; Ctrl-C ends)', flush=True)
    try:
      now = _next_change(args, code_digest, seen, sleep)
    except KeyboardInterrupt:
      print('watch ended (Ctrl-C)', flush=True)
      return EXIT_INTERRUPTED
    if now[1] != seen[1]:
      print('watching: the project code changed: restarting with it', flush=True)
      restart()
    changed = sorted(
      set(now[0]) ^ set(seen[0]) | {p for p in now[0] if now[0][p] != seen[0].get(p)}
    )
    print(f'watching: {_named(changed)} changed: running again', flush=True)


def return_freed_memory() -> bool:
  """What a run freed, collected and handed back to the system (glibc's malloc_trim): TensorFlow
  frees many small blocks per run that otherwise stay in the process, ~7 MB an edit of RSS
  (docs/operations.md: Watching). False where the C library has no malloc_trim."""
  gc.collect()
  try:
    trim = ctypes.CDLL(None).malloc_trim
  except (AttributeError, OSError):
    return False
  trim(0)
  return True


def _next_change(
  args: argparse.Namespace, code_digest: Callable[[], str], seen: tuple, sleep: Callable
) -> tuple:
  """The first snapshot unlike `seen` with every watched path there: while a file or folder an
  option names is deleted, one line says so and the watch waits for it to come back."""
  gone_said: List[str] = []
  while True:
    now = snapshot(args, code_digest)
    if now != seen:
      gone = [path for path in watched_paths(args) if not os.path.exists(path)]
      if not gone or now[1] != seen[1]:  # a code edit restarts even so
        return now
      if gone != gone_said:
        print(
          f'watching: {_named(gone)} deleted: the next run waits for it (Ctrl-C ends)',
          flush=True,
        )
        gone_said = gone
    sleep(POLL_SECONDS)


def _named(paths: List[str]) -> str:
  shown = ', '.join(os.path.basename(p) for p in paths[:3])
  return shown + (f' and {len(paths) - 3} more' if len(paths) > 3 else '') if paths else 'a file'


def restart_process() -> None:
  """The same command in a fresh process, for code edits (its imports anew)."""
  sys.stdout.flush()
  sys.stderr.flush()
  os.execv(sys.executable, [sys.executable, *sys.argv])
