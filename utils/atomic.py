"""Write-then-rename: a reader sees all of a file (or folder) or none of it.

Local paths use os and a temporary sibling; gs:// and s3:// paths go through TFX's fileio (an
object store publishes an object only when its upload completes).
"""

import contextlib
import os
import shutil
import tempfile
from typing import Iterator, Union

REMOTE_PREFIXES = ('gs://', 's3://')


def write(path: str, data: Union[str, bytes]) -> str:
  """Writes `data` (text as UTF-8) to `path` atomically; returns `path`."""
  mode = 'w' if isinstance(data, str) else 'wb'
  with open_atomically(path, mode) as f:
    f.write(data)
  return path


@contextlib.contextmanager
def open_atomically(path: str, mode: str = 'w') -> Iterator:
  """A file object whose content appears at `path` when the block ends without an error."""
  if path.startswith(REMOTE_PREFIXES):
    from tfx.dsl.io import fileio

    temporary = f'{path}.partial-{os.getpid()}'
    try:
      with fileio.open(temporary, mode) as f:
        yield f
      fileio.rename(temporary, path, overwrite=True)
    finally:
      if fileio.exists(temporary):
        fileio.remove(temporary)
    return
  folder = os.path.dirname(os.path.abspath(path))
  os.makedirs(folder, exist_ok=True)
  encoding = None if 'b' in mode else 'utf-8'
  with tempfile.NamedTemporaryFile(
    mode, dir=folder, prefix='.partial-', delete=False, encoding=encoding
  ) as f:
    try:
      yield f
    except BaseException:
      f.close()
      os.remove(f.name)
      raise
  os.chmod(f.name, 0o644)
  os.replace(f.name, path)


@contextlib.contextmanager
def folder_atomically(path: str) -> Iterator[str]:
  """A local staging folder that becomes `path` when the block ends without an error."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  staging = tempfile.mkdtemp(prefix='.partial-', dir=os.path.dirname(path))
  try:
    yield staging
    os.rename(staging, path)
  finally:
    shutil.rmtree(staging, ignore_errors=True)
