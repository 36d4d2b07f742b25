"""Files changed the ways a cache could miss."""

import os


def replaced(path, content: bytes) -> None:
  """Another file of the same size in its place, with the old one's modification time."""
  before = os.stat(path)
  assert len(content) == before.st_size
  with open(path, 'wb') as f:
    f.write(content)
  os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
