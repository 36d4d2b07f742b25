"""What the local engine clusters share: their folders under .engines/, processes started and
stopped by pid, a lock against two `up`s at once, the state file, checksummed jars."""

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from typing import Callable, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINES_DIR = os.environ.get('TFRP_ENGINES_DIR', os.path.join(ROOT, '.engines'))
STATE_FILE = 'cluster.json'
ENGINE_ENV = 'TFRP_ENGINE'  # set in the environment of an engine's worker pool and its workers


class EngineError(Exception):
  """An engine cluster could not be installed, started or reached: one `error:` line."""


def engine_dir(name: str) -> str:
  path = os.path.join(ENGINES_DIR, name)
  os.makedirs(path, exist_ok=True)
  return path


def _sub(name: str, sub: str) -> str:
  path = os.path.join(engine_dir(name), sub)
  os.makedirs(path, exist_ok=True)
  return path


def run_dir(name: str) -> str:
  return _sub(name, 'run')


def log_dir(name: str) -> str:
  return _sub(name, 'log')


@contextlib.contextmanager
def lock(name: str):
  """One `up` or `down` of an engine at a time (two test workers, two shells)."""
  with open(os.path.join(engine_dir(name), '.lock'), 'w') as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    try:
      yield
    finally:
      fcntl.flock(f, fcntl.LOCK_UN)


def read_state(name: str) -> Optional[dict]:
  try:
    with open(os.path.join(engine_dir(name), STATE_FILE)) as f:
      return json.load(f)
  except (OSError, ValueError):
    return None


def write_state(name: str, state: dict) -> None:
  path = os.path.join(engine_dir(name), STATE_FILE)
  with open(path + '.tmp', 'w') as f:
    json.dump(state, f, indent=2)
  os.replace(path + '.tmp', path)


def status(name: str, overview: Callable[[], object], errors=(OSError,)) -> Optional[dict]:
  """The cluster's cluster.json with `overview` (what its REST API answers now; the error as
  'unreachable: …' when it raises one of `errors`), or None when no cluster of `name` runs."""
  state = read_state(name)
  if not state:
    return None
  try:
    return dict(state, overview=overview())
  except errors as e:
    return dict(state, overview=f'unreachable: {e}')


def clear_state(name: str) -> None:
  with contextlib.suppress(FileNotFoundError):
    os.remove(os.path.join(engine_dir(name), STATE_FILE))


FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'files')


def install_distribution(name: str, what: str, target: str, log=print) -> None:
  """files/<name>-requirements.txt (hash-pinned) into `target` with pip, --no-deps (never into
  .venv: these pin other Beam versions), atomically: a partial install is never left there."""
  log(f'{name}: installing {what} (PyPI, checked against its hashes)…')
  partial = target + '.partial'
  shutil.rmtree(partial, ignore_errors=True)
  requirements = os.path.join(FILES, f'{name}-requirements.txt')
  run_quietly(
    [
      sys.executable,
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--no-deps',
      '--require-hashes',
      '--target',
      partial,
      '-r',
      requirements,
    ],
    f'installing {what}',
  )
  shutil.rmtree(target, ignore_errors=True)
  os.replace(partial, target)


def fetch_job_server(name: str, lib: str, log=print) -> None:
  """Beam's job server for engine `name`: files/<name>-job-server.pom.xml's runtime jars from
  Maven Central into `lib`, each checked against files/<name>-job-server.sha256 (once)."""
  checksums = os.path.join(FILES, f'{name}-job-server.sha256')
  if jars_match(lib, checksums):
    return
  log(f"{name}: fetching Beam's job server (Maven Central, checked against sha256)…")
  partial = lib + '.partial'
  shutil.rmtree(partial, ignore_errors=True)
  run_quietly(
    [
      'mvn',
      '--batch-mode',
      '--quiet',
      '-f',
      os.path.join(FILES, f'{name}-job-server.pom.xml'),
      'dependency:copy-dependencies',
      f'-DoutputDirectory={partial}',
      '-DincludeScope=runtime',
    ],
    "fetching Beam's job server",
  )
  bad = jar_mismatches(partial, checksums)
  if bad:
    raise EngineError(f'job server jars do not match their checksums: {", ".join(bad[:3])}')
  open(os.path.join(partial, '.checked'), 'w').close()
  shutil.rmtree(lib, ignore_errors=True)
  os.replace(partial, lib)


LOOPBACK_MAIN = 'LoopbackJobServer'  # files/LoopbackJobServer.java: Beam's job server on loopback


def loopback_jar(name: str, lib: str, *mains: str) -> str:
  """files/LoopbackJobServer.java and files/<main>.java of each of `mains` (Flink's, which build
  on it), compiled (once, and again when one changes) against the job server's jars in `lib`, as
  a jar to put first on the job server's classpath."""
  sources = sorted({os.path.join(FILES, f'{source}.java') for source in (LOOPBACK_MAIN, *mains)})
  jar = os.path.join(engine_dir(name), 'loopback-job-server.jar')
  if os.path.isfile(jar) and os.path.getmtime(jar) >= max(map(os.path.getmtime, sources)):
    return jar
  classes = jar[: -len('.jar')]
  shutil.rmtree(classes, ignore_errors=True)
  what = 'building the loopback job server launcher'
  run_quietly(['javac', '-nowarn', '-d', classes, '-cp', os.path.join(lib, '*'), *sources], what)
  run_quietly(['jar', '--create', '--file', jar + '.tmp', '-C', classes, '.'], what)
  shutil.rmtree(classes, ignore_errors=True)
  os.replace(jar + '.tmp', jar)
  return jar


def run_quietly(
  command: List[str], what: str, env: Optional[dict] = None, own_session: bool = False
) -> None:
  """Run a set-up step; its output only in the error when it fails. own_session: in a session
  of its own, as the daemons it leaves behind are then (Flink's scripts background the JVM in
  the caller's process group, where a signal to that group, from a test runner or a terminal,
  would reach the cluster)."""
  try:
    done = subprocess.run(
      command,
      env=env,
      capture_output=True,
      text=True,
      check=False,
      start_new_session=own_session,
    )
  except FileNotFoundError:
    raise EngineError(f'{what}: {command[0]} is not installed') from None
  if done.returncode:
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    raise EngineError(f'{what} failed (exit {done.returncode}): ' + ' | '.join(tail))


def alive(pid: int) -> bool:
  if not pid:
    return False
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:
    return True
  try:  # a zombie child counts as gone
    with open(f'/proc/{pid}/stat') as f:
      return f.read().split(') ')[-1][:1] != 'Z'
  except OSError:
    return False


def listening(port: int, host: str = '127.0.0.1') -> bool:
  with socket.socket() as s:
    s.settimeout(0.5)
    return s.connect_ex((host, port)) == 0


def start_daemon(name: str, what: str, command: List[str], env: Optional[dict] = None) -> int:
  """Start `command` in its own session, output to <engine>/log/<what>.log; its pid."""
  with open(os.path.join(log_dir(name), f'{what}.log'), 'ab') as out:
    process = subprocess.Popen(
      command,
      stdin=subprocess.DEVNULL,
      stdout=out,
      stderr=subprocess.STDOUT,
      env=env,
      start_new_session=True,
      cwd=ROOT,
    )
  with open(os.path.join(run_dir(name), f'{what}.pid'), 'w') as f:
    f.write(str(process.pid))
  return process.pid


def start_worker_pool(name: str, port: int) -> int:
  """The project's warm SDK worker pool (engines.worker_pool) on loopback: each Beam step's Python
  worker is a process forked from one that has imported TensorFlow, TFX, TFMA and TFDV once, with
  this project's code importable (what a worker-pool sidecar's image holds in production)."""
  env = dict(
    os.environ,
    PYTHONPATH=ROOT,
    PYTHONWARNINGS='ignore',
    TF_CPP_MIN_LOG_LEVEL='3',
    **{ENGINE_ENV: name},  # whose pool it is: processes_of(name) and nothing else's
  )
  command = [sys.executable, '-m', 'engines.worker_pool', f'--port={port}', '--host=127.0.0.1']
  return start_daemon(name, 'worker-pool', command, env)


def stop_process(pid: int, grace: float = 10.0) -> None:
  """SIGTERM to the process group of `pid` (never this process's own group), then SIGKILL after
  `grace` seconds."""
  if not alive(pid):
    return
  for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
    with contextlib.suppress(ProcessLookupError, PermissionError):
      group = os.getpgid(pid)
      if group == os.getpgrp():  # a daemon started from this process's group (pytest): it alone
        os.kill(pid, sig)
      else:
        os.killpg(group, sig)
    deadline = time.monotonic() + wait
    while alive(pid) and time.monotonic() < deadline:
      time.sleep(0.1)
    if not alive(pid):
      return


def processes_of(name: str) -> List[int]:
  """This engine's processes: those whose command line names its folder (the JVMs) or whose
  environment names it and that run in this checkout (its worker pool and the SDK workers that
  pool started; another checkout's pool on the same machine has the same environment)."""
  marker, tag = engine_dir(name).encode(), f'{ENGINE_ENV}={name}'.encode()
  found = []
  for entry in os.listdir('/proc'):
    if not entry.isdigit() or int(entry) == os.getpid():
      continue
    try:
      with open(f'/proc/{entry}/cmdline', 'rb') as f:
        cmdline = f.read()
      with open(f'/proc/{entry}/environ', 'rb') as f:
        environ = f.read().split(b'\0')
    except OSError:
      continue
    if (marker in cmdline or (tag in environ and _cwd(entry) == ROOT)) and alive(int(entry)):
      found.append(int(entry))
  return found


def _cwd(pid: str) -> str:
  try:
    return os.readlink(f'/proc/{pid}/cwd')
  except OSError:
    return ''


def stop_leftovers(name: str) -> List[int]:
  """Stop every process still running from this engine's folder; the pids that survived."""
  for pid in processes_of(name):
    stop_process(pid, grace=5.0)
  return processes_of(name)


def _sha256(path: str) -> str:
  digest = hashlib.sha256()
  with open(path, 'rb') as f:
    for block in iter(lambda: f.read(1 << 20), b''):
      digest.update(block)
  return digest.hexdigest()


def jar_mismatches(folder: str, checksums: str) -> List[str]:
  """The jars of `checksums` (sha256sum's format) missing from `folder` or different there."""
  bad = []
  with open(checksums) as f:
    for line in f:
      digest, jar = line.split()
      path = os.path.join(folder, jar)
      if not os.path.isfile(path) or _sha256(path) != digest:
        bad.append(jar)
  return bad


def jars_match(folder: str, checksums: str) -> bool:
  """Checked once after a fetch; later calls only look that every jar is there."""
  marker = os.path.join(folder, '.checked')
  if os.path.isfile(marker):
    with open(checksums) as f:
      return all(os.path.isfile(os.path.join(folder, line.split()[1])) for line in f)
  if os.path.isdir(folder) and not jar_mismatches(folder, checksums):
    open(marker, 'w').close()
    return True
  return False
