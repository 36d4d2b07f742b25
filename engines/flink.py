"""A Flink 1.19 cluster on loopback for Beam's FlinkRunner: `python -m engines.flink up|down|status`
(`make flink-up` / `make flink-down`).

`up` installs, once, from pinned and checksummed artifacts (engines/files/): Flink's distribution
from PyPI into .engines/flink/dist and Beam's Flink job server from Maven Central into
.engines/flink/job-server; then starts a JobManager (REST API and web UI on localhost:8081), the
TaskManagers, Beam's job server (localhost:8099) and a Beam SDK worker pool (localhost:27000: the
Python side of every Beam step, as a worker-pool sidecar beside each TaskManager would be in
production), and waits until all of them answer. `down` stops every one of them and checks that
no process of the cluster is left. What is running is in .engines/flink/cluster.json, which the
pipeline's FlinkRunner arguments read (engines.flink_args).
"""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import List, Optional

from engines import cli, common, flink_rest

FLINK_VERSION = '1.19.3'
NAME = 'flink'
REST_PORT = flink_rest.REST_PORT
JOB_PORT, ARTIFACT_PORT, EXPANSION_PORT = 8099, 8098, 8097
WORKER_POOL_PORT = 27000  # below Linux's ephemeral ports (32768-60999): none can hold it
TASK_MANAGERS = 2
FILES = common.FILES
JOB_SERVER_MAIN = 'org.apache.beam.runners.flink.FlinkJobServerDriver'
UNSTAGED_MAIN = 'UnstagedFlinkJobServer'  # files/UnstagedFlinkJobServer.java: jobs ship no jar
FN_SERVERS_MAIN = 'LoopbackFnServers'  # files/LoopbackFnServers.java: SDK workers' servers


def home() -> str:
  return common.engine_dir(NAME)


def flink_home() -> str:
  return os.path.join(home(), 'dist', 'pyflink')


def _job_server_lib() -> str:
  return os.path.join(home(), 'job-server', 'lib')


def install(log=print) -> None:
  """Flink's distribution and Beam's job server, each once, from the pinned files."""
  if not os.path.isfile(os.path.join(flink_home(), 'lib', f'flink-dist-{FLINK_VERSION}.jar')):
    common.install_distribution(NAME, f'Flink {FLINK_VERSION}', os.path.join(home(), 'dist'), log)
  common.fetch_job_server(NAME, _job_server_lib(), log)


def _write_conf() -> str:
  conf = os.path.join(home(), 'conf')
  os.makedirs(conf, exist_ok=True)
  for name in os.listdir(os.path.join(flink_home(), 'conf')):
    if name.startswith('log4j'):
      shutil.copy(os.path.join(flink_home(), 'conf', name), conf)
  with open(os.path.join(FILES, 'flink-config.yaml')) as f:
    text = f.read()
  with open(os.path.join(FILES, 'java-opts.txt')) as f:
    java_opts = f.read().strip()
  run, logs = common.run_dir(NAME), common.log_dir(NAME)
  text += (
    f'env:\n  pid:\n    dir: {run}\n  log:\n    dir: {logs}\n'
    f'  java:\n    opts:\n      all: {java_opts}\n'
  )
  with open(os.path.join(conf, 'config.yaml'), 'w') as f:
    f.write(text)
  with open(os.path.join(conf, 'masters'), 'w') as f:
    f.write(f'localhost:{REST_PORT}\n')
  with open(os.path.join(conf, 'workers'), 'w') as f:
    f.write('localhost\n' * TASK_MANAGERS)
  return conf


def _launchers() -> str:
  """The jar of files/LoopbackJobServer.java and the Java files that build on it."""
  return common.loopback_jar(NAME, _job_server_lib(), UNSTAGED_MAIN, FN_SERVERS_MAIN)


def _loopback_fn_servers() -> str:
  """A jar of Beam's InetSocketAddressServerFactory rewritten to bind the address it is given
  (files/LoopbackFnServers.java), made once from the job server's beam-sdks-java-core jar."""
  lib = _job_server_lib()
  (core,) = glob.glob(os.path.join(lib, 'beam-sdks-java-core-*.jar'))
  launchers, jar = _launchers(), os.path.join(home(), 'loopback-fn-servers.jar')
  if os.path.isfile(jar) and os.path.getmtime(jar) >= os.path.getmtime(launchers):
    return jar
  classpath = os.pathsep.join([launchers, os.path.join(lib, '*')])
  command = ['java', '-cp', classpath, FN_SERVERS_MAIN, core, jar + '.tmp']
  common.run_quietly(command, "binding Beam's Fn API servers to loopback")
  os.replace(jar + '.tmp', jar)
  return jar


def _beam_classpath() -> str:
  """Beam's jars of the job server but Flink's own, after the rewritten server factory: what a
  job of UnstagedFlinkJobServer, which ships none, needs on the JobManager (its input formats)
  and the TaskManagers (its operators, their SDK workers' servers on loopback)."""
  lib = _job_server_lib()
  jars = sorted(name for name in os.listdir(lib) if name.endswith('.jar'))
  beam = [os.path.join(lib, name) for name in jars if not name.startswith('flink-')]
  return os.pathsep.join([_loopback_fn_servers(), *beam])


def _flink_env(conf: str) -> dict:
  # Flink's scripts put HADOOP_CLASSPATH after Flink's own jars on every process's classpath.
  env = dict(
    os.environ,
    FLINK_CONF_DIR=conf,
    FLINK_LOG_DIR=common.log_dir(NAME),
    HADOOP_CLASSPATH=_beam_classpath(),
  )
  env.pop('FLINK_HOME', None)
  return env


def _pids(role: str) -> List[int]:
  """The live pids in Flink's pid files of `role` ('taskexecutor', 'standalonesession')."""
  pids = []
  for path in glob.glob(os.path.join(common.run_dir(NAME), f'flink-*-{role}.pid')):
    with open(path) as f:
      pids += [int(line) for line in f.read().split()]
  return sorted({pid for pid in pids if common.alive(pid)})


def task_manager_pids() -> List[int]:
  """The TaskManagers' process ids (from Flink's pid file)."""
  return _pids('taskexecutor')


def job_manager_pids() -> List[int]:
  return _pids('standalonesession')


def processes(state: Optional[dict] = None) -> dict:
  """Which of the cluster's processes are alive: role → live pids (a dead one: [])."""
  state = common.read_state(NAME) if state is None else state
  alive = lambda key: [pid for pid in [(state or {}).get(key, 0)] if common.alive(pid)]
  return {
    'jobmanager': job_manager_pids(),
    'taskmanagers': task_manager_pids(),
    'job_server': alive('job_server_pid'),
    'worker_pool': alive('worker_pool_pid'),
  }


def log_of(role: str) -> str:
  """The log file to read about one of the cluster's processes (processes()' roles)."""
  flink_role = {'jobmanager': 'standalonesession', 'taskmanagers': 'taskexecutor'}.get(role)
  if flink_role:
    logs = glob.glob(os.path.join(common.log_dir(NAME), f'flink-*-{flink_role}-*.log'))
    return max(logs, key=os.path.getmtime) if logs else common.log_dir(NAME)
  return os.path.join(common.log_dir(NAME), role.replace('_', '-') + '.log')


def _wait_ready(task_managers: int, deadline: float) -> None:
  while True:
    try:
      overview = flink_rest.rest('/overview')
      if (
        overview.get('taskmanagers', 0) >= task_managers
        and common.listening(JOB_PORT)
        and common.listening(WORKER_POOL_PORT)
      ):
        return
    except OSError:
      pass
    if time.monotonic() > deadline:
      raise common.EngineError(
        f'the cluster did not answer within its time; logs: {common.log_dir(NAME)}'
      )
    time.sleep(0.5)


def up(task_managers: int = TASK_MANAGERS, log=print, timeout: float = 120.0) -> dict:
  """Install if needed and start the cluster; returns what cluster.json records. A cluster this
  project already runs is left as it is (started TaskManagers that died are started again); one
  whose JobManager, job server or worker pool died is stopped and started clean (never two)."""
  with common.lock(NAME):
    install(log)
    state = common.read_state(NAME)
    alive = processes(state)
    running = bool(state) and all(alive[key] for key in ('jobmanager', 'job_server', 'worker_pool'))
    if not running and (state or common.processes_of(NAME)):
      gone = ', '.join(role for role, pids in alive.items() if not pids) or 'cluster.json'
      log(f'flink: half up ({gone} gone): stopping the rest, starting clean…')
      _stop(state or {})
    ports = (REST_PORT, JOB_PORT, WORKER_POOL_PORT)
    deadline = time.monotonic() + 15.0  # the ports of processes just stopped, let go
    while not running and any(map(common.listening, ports)) and time.monotonic() < deadline:
      time.sleep(0.5)
    for port in ports:
      if not running and common.listening(port):
        raise common.EngineError(
          f'localhost:{port} is already in use by another process: stop it first'
        )
    conf = _write_conf()
    env = _flink_env(conf)
    bin_dir = os.path.join(flink_home(), 'bin')
    if not running:
      log(f'flink: starting a JobManager and {task_managers} TaskManagers on loopback…')
      common.run_quietly(
        [os.path.join(bin_dir, 'jobmanager.sh'), 'start'], 'starting Flink', env, own_session=True
      )
    missing = task_managers - len(task_manager_pids())
    for _ in range(max(0, missing)):
      common.run_quietly(
        [os.path.join(bin_dir, 'taskmanager.sh'), 'start'],
        'starting a TaskManager',
        env,
        own_session=True,
      )
    if not running:
      log("flink: starting Beam's job server and an SDK worker pool…")
      state = dict(
        rest=f'localhost:{REST_PORT}',
        job_endpoint=f'localhost:{JOB_PORT}',
        worker_pool=f'localhost:{WORKER_POOL_PORT}',
        web_ui=f'http://localhost:{REST_PORT}',
        job_server_pid=_start_job_server(),
        worker_pool_pid=common.start_worker_pool(NAME, WORKER_POOL_PORT),
        started=time.time(),
      )
      common.write_state(NAME, state)
    _wait_ready(task_managers, time.monotonic() + timeout)
    log(f'flink: up: web UI {state["web_ui"]}, Beam job server {state["job_endpoint"]}')
    return state


def _start_job_server() -> int:
  java_opts = [
    '--add-opens=java.base/java.lang=ALL-UNNAMED',
    '--add-opens=java.base/java.util=ALL-UNNAMED',
    '--add-opens=java.base/java.nio=ALL-UNNAMED',
  ]
  artifacts = os.path.join(home(), 'artifacts')
  os.makedirs(artifacts, exist_ok=True)
  lib = _job_server_lib()
  # Flink's log4j and its SLF4J binding: the job server's own log (Beam's and Flink's client's
  # lines, with times) in log/job-server.log, the file its output goes to.
  logging = [
    f'-Dlog4j.configurationFile={os.path.join(home(), "conf", "log4j-console.properties")}',
    f'-Dlog.file={os.path.join(common.log_dir(NAME), "job-server.log")}',
    '-Dconsole.log.level=OFF',
  ]
  log4j = sorted(glob.glob(os.path.join(flink_home(), 'lib', 'log4j-*.jar')))
  classpath = [_launchers(), os.path.join(lib, '*'), *log4j]
  command = [
    'java',
    *java_opts,
    *logging,
    '-cp',
    os.pathsep.join(classpath),
    UNSTAGED_MAIN,
    JOB_SERVER_MAIN,
    f'--flink-master=localhost:{REST_PORT}',
    '--job-host=127.0.0.1',
    f'--job-port={JOB_PORT}',
    f'--artifact-port={ARTIFACT_PORT}',
    f'--expansion-port={EXPANSION_PORT}',
    f'--artifacts-dir={artifacts}',
  ]
  return common.start_daemon(NAME, 'job-server', command)


def down(log=print) -> List[int]:
  """Stop the cluster, its job server and worker pool; returns the processes still alive
  afterwards (none, unless something refused to die)."""
  with common.lock(NAME):
    left = _stop(common.read_state(NAME) or {})
    log('flink: down' + (f'; still alive: {left}' if left else ''))
    return left


def _stop(state: dict) -> List[int]:
  if os.path.isdir(os.path.join(flink_home(), 'bin')):
    env = _flink_env(_write_conf())
    bin_dir = os.path.join(flink_home(), 'bin')
    for script in ('taskmanager.sh', 'jobmanager.sh'):
      subprocess.run(
        [os.path.join(bin_dir, script), 'stop-all'], env=env, capture_output=True, check=False
      )
  for key in ('job_server_pid', 'worker_pool_pid'):
    common.stop_process(state.get(key, 0))
  left = common.stop_leftovers(NAME)
  common.clear_state(NAME)
  return left


def status() -> Optional[dict]:
  """cluster.json, which of its processes are alive and the REST API's overview, or None when
  no cluster of this project runs."""
  state = common.status(NAME, lambda: flink_rest.rest('/overview'))
  return state and dict(state, processes=processes(state))


def status_line() -> str:
  """What `status` prints: cluster.json with its processes and overview, or that none runs."""
  state, leftovers = status(), common.processes_of(NAME)
  return (
    json.dumps(state, indent=2)
    if state
    else f'flink: not running; leftovers: {leftovers}'
    if leftovers
    else 'flink: not running'
  )


def main(argv=None) -> int:
  description = 'A local Flink cluster for --beam-runner FlinkRunner (docs/operations.md: Flink).'
  flags = lambda parser: parser.add_argument('--task-managers', type=int, default=TASK_MANAGERS)
  start = lambda args: up(args.task_managers)
  return cli.main('python -m engines.flink', description, start, down, status_line, argv, {}, flags)


if __name__ == '__main__':
  signal.signal(signal.SIGINT, signal.default_int_handler)
  sys.exit(main())
