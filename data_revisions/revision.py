"""Which snapshot of the data a run read, for ML Metadata (docs/data.md: Data revisions).

- `of_data(path)`: a local --data inside a git work tree: the commit checked out, whether the tree
  is dirty under the data path (for data DVC tracks: whether the files differ from the hash in
  their .dvc file, as `dvc status` says), the DVC hash (md5) of the tracked path and the file
  that records it (`<path>.dvc`, or `dvc.lock` for a stage's output). s3:// data: the endpoint
  (lakeFS's S3 gateway: `s3://REPOSITORY/COMMIT/path`) and the path.
- `stage(data, rev, folder)`: `--data-rev REV`: the data as of a git revision of a DVC repository,
  read with DVC's own file system (`DVCFileSystem(repo, rev=…)`: git for the .dvc files, the local
  DVC cache for the content, a remote only when the cache lacks it), copied to
  `folder/<commit>/<path in the repository>` once per commit (written aside, then renamed).

Both return the Examples artifact's custom properties (PROPERTIES), recorded after the run.
"""

import contextlib
import os
import shutil
import subprocess
from typing import Dict, Optional, Tuple
import uuid

from contracts.errors import UserError, first_line
from metadata import connection

os.environ.setdefault('DVC_NO_ANALYTICS', '1')  # DVC reports usage unless told not to

COMMIT, DIRTY, DVC_MD5, DVC_FILE, REV, SOURCE, S3_ENDPOINT = (
  'data_git_commit',
  'data_git_dirty',
  'data_dvc_md5',
  'data_dvc_file',
  'data_rev',
  'data_source',
  'data_s3_endpoint',
)
PROPERTIES = (COMMIT, DIRTY, DVC_MD5, DVC_FILE, REV, SOURCE, S3_ENDPOINT)
STAGED_FOLDER = 'data-revisions'  # under the output's local folder: --data-rev's copies


def staging_folder(local_dir: str) -> str:
  return os.path.join(local_dir, STAGED_FOLDER)


def of_run(config, data: str) -> Dict[str, object]:
  """The properties of the data a run (a PipelineConfig) reads: --data-rev's staged copy's,
  or those of `data` (the file or folder --data named) as it is now."""
  if config.data_rev:
    return stage(config.data_source, config.data_rev, staging_folder(config.local_dir))[1]
  return of_data(data)


def record(metadata_path: str, examples_uri: str, properties: Dict[str, object]) -> None:
  """Sets the properties on the Examples artifact at examples_uri, where it has none yet (a
  cached data version keeps those of the run that first read it)."""
  store = connection.open_or_create(metadata_path)
  for artifact in store.get_artifacts_by_uri(examples_uri):
    if COMMIT in artifact.custom_properties or SOURCE in artifact.custom_properties:
      continue
    for name, value in properties.items():
      if isinstance(value, int):
        artifact.custom_properties[name].int_value = value
      else:
        artifact.custom_properties[name].string_value = str(value)
    store.put_artifacts([artifact])


def _git(folder: str, *args: str) -> Optional[str]:
  """git's output in `folder`, or None when git fails (not a work tree, no such revision)."""
  try:
    done = subprocess.run(
      ['git', '-C', folder, *args], capture_output=True, text=True, timeout=60, check=False
    )
  except OSError:  # no git on this machine
    return None
  return done.stdout.strip() if done.returncode == 0 else None


def _read_yaml(text: str) -> dict:
  import yaml

  try:
    loaded = yaml.safe_load(text)
  except yaml.YAMLError:
    return {}
  return loaded if isinstance(loaded, dict) else {}


def _tracked(relpath: str, read) -> Tuple[str, str]:
  """(the .dvc file or dvc.lock, the md5) of what DVC tracks at `relpath` or a folder above it
  ('', '' when nothing does); read(repo-relative path) → the file's text or None."""
  parts = relpath.split('/') if relpath not in ('', '.') else []
  for end in range(len(parts), 0, -1):
    covering = '/'.join(parts[:end])
    dvc_file = covering + '.dvc'
    for out in _read_yaml(read(dvc_file) or '').get('outs') or []:
      if os.path.normpath(os.path.join(os.path.dirname(covering), out.get('path', ''))) == covering:
        return dvc_file, str(out.get('md5', ''))
    for stage in (_read_yaml(read('dvc.lock') or '').get('stages') or {}).values():
      for out in (stage or {}).get('outs') or []:
        if os.path.normpath(out.get('path', '')) == covering:
          return 'dvc.lock', str(out.get('md5', ''))
  return '', ''


def _dvc_dirty(root: str, dvc_file: str) -> bool:
  """Whether the tracked files differ from their .dvc hash (DVC's status: hashes cached by
  DVC's state, so a second look at unchanged files reads no content)."""
  from dvc.repo import Repo

  target = os.path.join(root, dvc_file) if dvc_file.endswith('.dvc') else None
  with Repo(root) as repo:
    return bool(repo.status(targets=[target] if target else None))


def of_data(data: str) -> Dict[str, object]:
  """The properties of --data as it is now ({} outside git and object storage)."""
  if data.startswith('s3://'):
    endpoint = os.environ.get('AWS_ENDPOINT_URL_S3') or os.environ.get('AWS_ENDPOINT_URL') or ''
    return {SOURCE: data, **({S3_ENDPOINT: endpoint} if endpoint else {})}
  if '://' in data:
    return {}
  data = os.path.realpath(data)
  root = _git(
    data if os.path.isdir(data) else os.path.dirname(data), 'rev-parse', '--show-toplevel'
  )
  if root is None:
    return {}
  relpath = os.path.relpath(data, os.path.realpath(root)).replace(os.sep, '/')
  commit = _git(root, 'rev-parse', 'HEAD') or ''
  dvc_file, md5 = _tracked(relpath, lambda p: _read_file(os.path.join(root, p)))
  if not dvc_file and _git(root, 'check-ignore', '--quiet', '--', relpath) is not None:
    return {}  # ignored by git, tracked by nothing: not a snapshot of anything
  changed = _git(root, 'status', '--porcelain', '--', relpath, *([dvc_file] if dvc_file else []))
  dirty = bool(changed) or (bool(dvc_file) and _dvc_dirty(root, dvc_file))
  return {
    COMMIT: commit,
    DIRTY: int(dirty or not commit),
    **({DVC_MD5: md5, DVC_FILE: dvc_file} if dvc_file else {}),
  }


def _read_file(path: str) -> Optional[str]:
  try:
    with open(path, encoding='utf-8') as f:
      return f.read()
  except OSError:
    return None


def _dvc_root(data: str) -> Optional[str]:
  folder = os.path.abspath(data if os.path.isdir(data) else os.path.dirname(data))
  while True:
    if os.path.isdir(os.path.join(folder, '.dvc')):
      return folder
    parent = os.path.dirname(folder)
    if parent == folder:
      return None
    folder = parent


def stage(data: str, rev: str, folder: str) -> Tuple[str, Dict[str, object]]:
  """(the staged copy of `data` at git revision `rev`, its properties). Raises UserError for a
  path outside a DVC repository, a revision that does not exist, a path the revision lacks,
  and content neither the local cache nor a reachable remote has."""
  flag = f'--data-rev {rev}'
  if '://' in data:
    raise UserError(f'{flag}: --data must be a local path inside a DVC repository, not {data}')
  root = _dvc_root(data)
  if root is None:
    raise UserError(f'{flag}: --data {data} is not inside a DVC repository (no .dvc folder above)')
  commit = _git(root, 'rev-parse', '--verify', '--quiet', f'{rev}^{{commit}}')
  if not commit:
    raise UserError(f'{flag}: no such revision in the git repository {root}')
  relpath = os.path.relpath(os.path.abspath(data), root).replace(os.sep, '/')
  target = os.path.join(folder, commit[:12], relpath)
  dvc_file, md5 = _tracked(relpath, lambda p: _git(root, 'show', f'{commit}:{p}'))
  properties = {
    REV: rev,
    COMMIT: commit,
    DIRTY: 0,
    SOURCE: os.path.abspath(data),
    **({DVC_MD5: md5, DVC_FILE: dvc_file} if dvc_file else {}),
  }
  if os.path.exists(target):  # staged by an earlier run: only complete copies are renamed there
    return target, properties
  from dvc.api import DVCFileSystem

  fs = DVCFileSystem(root, rev=commit)
  if not fs.exists(relpath):
    raise UserError(f'{flag}: {relpath} is not in the repository at {commit[:12]}')
  partial = os.path.join(folder, commit[:12], f'.partial-{uuid.uuid4().hex}')
  try:
    fs.get(relpath, os.path.join(partial, 'copy'), recursive=True)
  except Exception as e:  # DVC's own errors: the cache lacks it, the remote is not reachable
    raise UserError(
      f'{flag}: {relpath} at {commit[:12]} could not be read from the local DVC cache or a '
      f'remote ({first_line(e)}); `dvc fetch` it first'
    ) from None
  else:
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
      os.rename(os.path.join(partial, 'copy'), target)
    except OSError:
      if not os.path.exists(target):
        raise
      # another run staged the same revision meanwhile: its copy is as complete
  finally:
    shutil.rmtree(partial, ignore_errors=True)
    with contextlib.suppress(OSError):  # the commit's folder, when nothing was staged in it
      os.rmdir(os.path.dirname(partial))
  return target, properties
