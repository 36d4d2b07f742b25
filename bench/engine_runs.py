"""One timed `pipeline.py schema` run of bench.engines on an engine (its flags in ENGINES), and
the local Flink cluster the Flink engines run on: started when it is not running, stopped at the
end when started here; a Flink run whose TaskManager waits for ever for an SDK worker is stopped
and run once more."""

import json
import os
import signal
import subprocess
import sys
import time
from typing import Dict, List, Optional
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MASTER = 'localhost:8081'
FLINK = ('--beam-runner', 'FlinkRunner', '--flink-master', MASTER)
ENGINES = {
  'direct_in_memory': ('--beam-mode', 'in_memory'),
  'direct_workers2': ('--beam-mode', 'multi_processing', '--beam-workers', '2'),
  'direct_workers1': ('--beam-mode', 'multi_processing', '--beam-workers', '1'),
  'flink_p1': FLINK + ('--beam-parallelism', '1'),
  'flink_p2': FLINK + ('--beam-parallelism', '2'),
}
COMPONENTS = ('ExampleGen', 'StatisticsGen')
BOTH = 'ExampleGen+StatisticsGen'


def _example_gen(components: Dict[str, float]) -> Optional[str]:
  return next((c for c in components if c.endswith('ExampleGen')), None)


def _computed_by(output: str) -> List[str]:
  """The statistics artifacts' `computed_by` property ('' where the code does not set it)."""
  import config as cfg
  from metadata import run_reader

  store = run_reader.open_store(os.path.join(output, cfg.METADATA_FILE))
  return sorted(
    {
      a.custom_properties['computed_by'].string_value
      if 'computed_by' in a.custom_properties
      else ''
      for a in store.get_artifacts_by_type('ExampleStatistics')
    }
  )


TERMINAL = ('FINISHED', 'FAILED', 'CANCELED')


def _flink_jobs(job_name: str, cancel: bool = False, settle_s: float = 30.0) -> List[dict]:
  """The run's Flink jobs (all named `job_name`): name, state, seconds and the largest
  parallelism of their vertices. The cluster marks a job FINISHED a moment after Beam's client
  saw it done: up to settle_s for that. cancel: those still running are cancelled first."""
  import urllib.request

  from engines import flink_rest

  deadline = time.monotonic() + settle_s
  while True:
    listed = [job for job in flink_rest.rest('/jobs/overview')['jobs'] if job['name'] == job_name]
    if cancel:
      for job in listed:
        if job['state'] not in TERMINAL:
          request = urllib.request.Request(
            f'http://{MASTER}/jobs/{job["jid"]}?mode=cancel', method='PATCH'
          )
          urllib.request.urlopen(request, timeout=5).close()
      cancel = False
    elif all(job['state'] in TERMINAL for job in listed) or time.monotonic() > deadline:
      break
    time.sleep(0.5)
  jobs = []
  for job in listed:
    detail = flink_rest.rest(f'/jobs/{job["jid"]}')
    jobs.append(
      {
        'name': job['name'],
        'vertices': len(detail.get('vertices', [])),
        'state': job['state'],
        'seconds': job.get('duration', 0) / 1000,
        'parallelism': max((v['parallelism'] for v in detail.get('vertices', [])), default=0),
        'start_ms': job['start-time'],
      }
    )
  return sorted(jobs, key=lambda job: job['start_ms'])


def error_line(output: str, log: str) -> str:
  """Why a run failed: its summary's error (last_run.json), else the log's last error line."""
  try:
    with open(os.path.join(output, 'last_run.json')) as f:
      error = json.load(f).get('error')
    if error:
      return str(error).strip().splitlines()[-1][:400]
  except (OSError, ValueError):
    pass
  with open(log, errors='replace') as f:
    lines = [line.strip() for line in f if line.strip()]
  marked = [line for line in lines if 'error' in line.lower() or 'exception' in line.lower()]
  return ((marked or lines or ['(no output)'])[-1])[:400]


def timed_run(
  engine: str, kind: str, data: str, output: str, timeout: float = 600.0, tries: int = 2
) -> dict:
  """One `pipeline.py schema` process on `engine` (a fresh output folder each attempt): wall
  seconds, ExampleGen's and StatisticsGen's seconds (ML Metadata), who computed the statistics,
  Flink's jobs. A Flink run whose TaskManager waits for an SDK worker that never comes (a known
  hang of the cluster: the run would never end) is stopped, its jobs cancelled, and run again, up
  to `tries` attempts, each failed attempt kept in 'failed_attempts'; on failure, or after
  `timeout` seconds, {'failed': True, 'error': a line}."""
  failed = []
  for attempt in range(tries):
    run = _attempt(engine, kind, data, f'{output}-{attempt}' if attempt else output, timeout)
    if not run.get('hung') or attempt == tries - 1:
      break
    failed.append(run)
    print(f'  {engine} {kind}: {run["error"]}; again', flush=True)
  return dict(run, failed_attempts=failed) if failed else run


def _attempt(engine: str, kind: str, data: str, output: str, timeout: float) -> dict:
  from bench import pipeline_scaling

  argv = [sys.executable, 'pipeline.py', 'schema', '--data', data, '--output', output]
  argv += ['--out', os.path.join(output, 'schema.pbtxt'), '--overwrite', *ENGINES[engine]]
  argv += ['--label', 'label'] if kind == 'csv' else []
  os.makedirs(output, exist_ok=True)
  log = os.path.join(output, 'bench.log')
  flink_engine = engine.startswith('flink')
  job_name = f'bench-engines-{uuid.uuid4().hex[:8]}'
  if flink_engine:
    cluster_started = cluster_up(quiet=True)  # one stopped meanwhile is started again
    argv.append(f'--beam-arg=--job_name={job_name}')  # its jobs, among others on the cluster
    waits = _WorkerWaits()
  started = time.monotonic()
  code, hung = None, ''
  with open(log, 'w') as out:
    child = subprocess.Popen(
      argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )
    while time.monotonic() - started < timeout:
      try:
        code = child.wait(5)
        break
      except subprocess.TimeoutExpired:
        hung = waits.new_line() if flink_engine else ''
        if hung:
          break
    if code is None:
      _stop(child)
  run = {'wall_s': time.monotonic() - started}
  if flink_engine:
    try:
      run['flink_jobs'] = _flink_jobs(job_name, cancel=code is None)
    except OSError as e:  # the cluster went away meanwhile
      run['flink_jobs'] = f'unreadable: {e}'
    run['cluster_started'] = cluster_started
  if hung:
    return dict(run, failed=True, hung=True, exit_code=None, error=f'stopped: Flink: {hung}')
  if code is None:
    return dict(run, failed=True, exit_code=None, error=f'no end after {timeout:.0f} s (stopped)')
  if code != 0:
    return dict(run, failed=True, exit_code=code, error=error_line(output, log))
  seconds = pipeline_scaling.component_seconds(output)
  example_gen = _example_gen(seconds)
  run['components'] = {
    'ExampleGen': seconds[example_gen],
    'StatisticsGen': seconds['StatisticsGen'],
  }
  run['components'][BOTH] = run['components']['ExampleGen'] + run['components']['StatisticsGen']
  run['example_gen'] = example_gen
  run['computed_by'] = _computed_by(output)
  return run


def _stop(child: subprocess.Popen) -> None:
  """SIGTERM to the run's process group, SIGKILL 10 s later."""
  for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
    try:
      os.killpg(child.pid, sig)
    except ProcessLookupError:
      return
    try:
      child.wait(wait)
      return
    except subprocess.TimeoutExpired:
      continue


class _WorkerWaits:
  """The TaskManagers' logs from now on: a line saying a TaskManager still waits for an SDK
  worker to start (Beam logs it every 2 minutes while it waits, and it waits for ever)."""

  MARK = 'Still waiting for startup of environment'

  def __init__(self):
    import glob

    from engines import common, flink

    self._pattern = os.path.join(common.log_dir(flink.NAME), 'flink-*taskexecutor-*.log')
    self._glob = glob.glob
    self._offsets = {path: os.path.getsize(path) for path in glob.glob(self._pattern)}

  def new_line(self) -> str:
    for path in self._glob(self._pattern):
      try:
        with open(path, 'rb') as f:
          f.seek(self._offsets.get(path, 0))
          text = f.read().decode('utf-8', 'replace')
          self._offsets[path] = f.tell()
      except OSError:
        continue
      for line in text.splitlines():
        if self.MARK in line:
          return line.split(' - ', 1)[-1].strip()
    return ''


_STARTED_HERE = []  # set when this invocation started the cluster


def cluster_up(quiet: bool = False, tries: int = 4) -> float:
  """The local cluster up (started when it is not running); the time it was started. A cluster
  being stopped or started by someone else at that moment is tried again."""
  from engines import common, flink

  for attempt in range(tries):
    try:
      if flink.status() is None:
        _STARTED_HERE.append(True)
      state = flink.up(log=(lambda line: None) if quiet else (lambda line: print(line, flush=True)))
      return state.get('started', 0.0)
    except common.EngineError:
      if attempt == tries - 1:
        raise
      time.sleep(15)
  return 0.0


def cluster_down_if_ours() -> None:
  from engines import flink

  if _STARTED_HERE:
    flink.down(log=lambda line: print(line, flush=True))


def cluster_started_here() -> bool:
  """Whether this invocation started the cluster (and cluster_down_if_ours will stop it)."""
  return bool(_STARTED_HERE)
