"""Fingerprints of the project's own code, for TFX's cache key.

TFX fingerprints user code only when it arrives through `module_file`. This project references
its code by module path (`run_fn='trainer.task.run_fn'`, executors by class), so an edit would be
served from the cache. Every component that runs project code therefore carries a
`code_fingerprint` execution property: a JSON object {file: sha256 prefix} of each project source
file its code can import (followed through `import` statements with `ast`, function bodies
included), the data files it reads (the curated schema, a weights file: by content; objects in
object storage by a digest given as `known`), the project modules a model file's text imports,
and `requirements.lock` (the environment). An edit changes the property, so the component and everything that consumes its
outputs run again; `metadata/run_reader.py` names the files that changed.
"""

import ast
import functools
import hashlib
import json
import os
from typing import Dict, Iterable, Optional, Set

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENVIRONMENT_FILE = 'requirements.lock'
PROJECT = (
  'cli',
  'components',
  'config',
  'contracts',
  'data_revisions',
  'kubeflow',
  'metadata',
  'pipeline',
  'records',
  'reporting',
  'trainer',
  'utils',
)


def _module_file(name: str) -> str:
  """`a.b.c` → 'a/b/c.py' or 'a/b/c/__init__.py' (relative to ROOT); '' when not a file."""
  base = name.replace('.', '/')
  for candidate in (base + '.py', base + '/__init__.py'):
    if os.path.isfile(os.path.join(ROOT, candidate)):
      return candidate
  return ''


@functools.lru_cache(maxsize=None)
def _imports(relpath: str, mtime_ns: int) -> tuple:
  """Project files imported by one source file (mtime in the key: an edit is read again)."""
  del mtime_ns
  with open(os.path.join(ROOT, relpath), encoding='utf-8') as f:
    return _imported(f.read())


def _imported(source: str) -> tuple:
  """Project files that the Python `source` imports (function bodies included)."""
  tree = ast.parse(source)
  found = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      names = [node.module] + [f'{node.module}.{alias.name}' for alias in node.names]
    else:
      continue
    for name in names:
      if name.split('.')[0] in PROJECT:
        parts = name.split('.')
        for end in range(len(parts), 0, -1):  # every package on the way is imported too
          found.append(_module_file('.'.join(parts[:end])))
  return tuple(sorted(set(filter(None, found))))


def source_files(*modules: str, imported_by: str = '') -> Set[str]:
  """Every project file that `modules` (and the source text `imported_by`: a model file)
  import, directly or not (relative paths)."""
  todo = [path for path in map(_module_file, modules) if path]
  todo += _imported(imported_by) if imported_by else ()
  seen = set()
  while todo:
    path = todo.pop()
    if path in seen:
      continue
    seen.add(path)
    todo.extend(_imports(path, os.stat(os.path.join(ROOT, path)).st_mtime_ns))
  return seen


def file_digest(path: str) -> str:
  """A local file's content digest (sha256 prefix); a relative path is the project's."""
  digest = hashlib.sha256()
  with open(path if os.path.isabs(path) else os.path.join(ROOT, path), 'rb') as f:
    for block in iter(lambda: f.read(1 << 20), b''):
      digest.update(block)
  return digest.hexdigest()[:16]


def of(
  *modules: str,
  data_files: Iterable[str] = (),
  known: Optional[Dict[str, str]] = None,
  imported_by: str = '',
) -> str:
  """The fingerprint of `modules` (with what they import), `data_files` and the environment.
  known: {path: digest} of files digested elsewhere (objects in object storage); imported_by:
  source text (a model file) whose project imports count too."""
  files = sorted(source_files(*modules, imported_by=imported_by)) + [ENVIRONMENT_FILE]
  digests: Dict[str, str] = {path: file_digest(path) for path in files}
  for path in data_files:
    digests[os.path.relpath(path, ROOT) if path.startswith(ROOT) else path] = file_digest(path)
  digests.update(known or {})
  return json.dumps(digests, sort_keys=True, separators=(',', ':'))


def digests(value) -> Dict[str, str]:
  """{file: digest} of a fingerprint as recorded (a JSON string or an already parsed dict)."""
  if isinstance(value, dict):
    return value
  return json.loads(value) if value else {}
