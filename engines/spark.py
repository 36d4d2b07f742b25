"""A Spark 3.5 standalone cluster on loopback for Beam's SparkRunner:
`python -m engines.spark up|down|status`.

`up` installs, once, from pinned and checksummed artifacts (engines/files/): Spark's distribution
(pyspark from PyPI: bin/, jars/) into .engines/spark/dist and Beam's Spark 3 job server (its
runner module and runtime dependencies from Maven Central) into .engines/spark/job-server; then
starts a standalone Master (spark://localhost:7077, web UI and its JSON on localhost:8080), two
Workers of one core (web UIs on localhost:8082, 8083), Beam's job server (localhost:8199, bound
to loopback by files/LoopbackJobServer.java) and a Beam SDK worker pool
(localhost:27100: the Python side of every Beam step), and waits until all of them answer.
`down` stops every one of them and checks that no process of the cluster is left. What is
running is in .engines/spark/cluster.json, which engines.spark_args reads.

Each Beam job is one Spark application: the job server is its driver (a SparkContext in the job
server's JVM, against the Master) and the Worker starts its executors, which find Beam's jars on
their classpath (spark.executor.extraClassPath) and run each fused Python stage in the SDK worker
pool. Spark's Python side (pyspark) is not used: Beam's Python SDK only talks to the job server.
"""

import json
import os
import signal
import sys
import time
from typing import List, Optional
import urllib.request

from engines import cli, common

SPARK_VERSION = '3.5.7'
NAME = 'spark'
MASTER_PORT = 7077
MASTER_UI_PORT = 8080
WORKER_UI_PORT = 8082  # the first Worker's; the second's is the next port
JOB_PORT, ARTIFACT_PORT, EXPANSION_PORT = 8199, 8198, 8197
WORKER_POOL_PORT = 27100  # below Linux's ephemeral ports (32768-60999): none can hold it
# Two Workers of one core each: an application's executors are spread over both, so one lost
# executor's tasks have a live executor to go to while the Worker starts another.
WORKERS = 2
WORKER_KEYS = tuple(f'worker{i}_pid' for i in range(1, WORKERS + 1))
WORKER_CORES = 1
WORKER_MEMORY = '4g'
EXECUTOR_MEMORY = '2g'
FILES = common.FILES
JOB_SERVER_MAIN = 'org.apache.beam.runners.spark.SparkJobServerDriver'
MASTER_URL = f'spark://localhost:{MASTER_PORT}'
# What Spark's launcher gives its own JVMs on Java 17 (org.apache.spark.launcher.JavaModuleOptions);
# the job server is a Spark driver started without the launcher, so it needs them too.
JAVA_MODULE_OPTIONS = [
  '-XX:+IgnoreUnrecognizedVMOptions',
  *(
    f'--add-opens=java.base/{package}=ALL-UNNAMED'
    for package in (
      'java.lang',
      'java.lang.invoke',
      'java.lang.reflect',
      'java.io',
      'java.net',
      'java.nio',
      'java.util',
      'java.util.concurrent',
      'java.util.concurrent.atomic',
      'jdk.internal.ref',
      'sun.nio.ch',
      'sun.nio.cs',
      'sun.security.action',
      'sun.util.calendar',
    )
  ),
  '--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED',
  '-Djdk.reflect.useDirectMethodHandle=false',
]


def home() -> str:
  return common.engine_dir(NAME)


def spark_home() -> str:
  return os.path.join(home(), 'dist', 'pyspark')


def spark_jars() -> str:
  return os.path.join(spark_home(), 'jars')


def job_server_lib() -> str:
  return os.path.join(home(), 'job-server', 'lib')


def install(log=print) -> None:
  """Spark's distribution and Beam's job server, each once, from the pinned files."""
  if not os.path.isfile(os.path.join(spark_jars(), f'spark-core_2.12-{SPARK_VERSION}.jar')):
    common.install_distribution(NAME, f'Spark {SPARK_VERSION}', os.path.join(home(), 'dist'), log)
  common.fetch_job_server(NAME, job_server_lib(), log)


def _folder(sub: str) -> str:
  path = os.path.join(home(), sub)
  os.makedirs(path, exist_ok=True)
  return path


def _write_conf() -> str:
  """SPARK_CONF_DIR of the Master and Worker: loopback only, no REST submission server."""
  conf = _folder('conf')
  with open(os.path.join(conf, 'spark-defaults.conf'), 'w') as f:
    f.write(
      '# Written by engines/spark.py for the local cluster of `python -m engines.spark up`.\n'
      'spark.master.rest.enabled false\n'
      'spark.ui.showConsoleProgress false\n'
      # Finished applications' executor folders (their staged jars and logs), after a day.
      'spark.worker.cleanup.enabled true\n'
      'spark.worker.cleanup.appDataTtl 86400\n'
    )
  # The job server's log (Beam's and the Spark driver's lines): log4j2 has no configuration of
  # its own there, and would print errors only.
  with open(os.path.join(conf, 'log4j2.properties'), 'w') as f:
    f.write(
      'rootLogger.level = info\n'
      'rootLogger.appenderRef.stdout.ref = console\n'
      'appender.console.type = Console\n'
      'appender.console.name = console\n'
      'appender.console.target = SYSTEM_ERR\n'
      'appender.console.layout.type = PatternLayout\n'
      'appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex\n'
      'logger.jetty.name = org.sparkproject.jetty\n'
      'logger.jetty.level = warn\n'
    )
  return conf


def _spark_env() -> dict:
  env = dict(
    os.environ,
    SPARK_HOME=spark_home(),
    SPARK_CONF_DIR=_write_conf(),
    SPARK_LOCAL_IP='127.0.0.1',
    SPARK_LOCAL_HOSTNAME='localhost',
    SPARK_LOCAL_DIRS=_folder('tmp'),
    SPARK_WORKER_DIR=_folder('work'),
    SPARK_DAEMON_MEMORY='512m',
  )
  for name in (
    'SPARK_MASTER_OPTS',
    'SPARK_WORKER_OPTS',
    'SPARK_DAEMON_JAVA_OPTS',
    'SPARK_CLASSPATH',
    'PYSPARK_PYTHON',
    'HADOOP_CONF_DIR',
    'YARN_CONF_DIR',
  ):
    env.pop(name, None)
  return env


def master_json(timeout: float = 3.0, ui: str = f'localhost:{MASTER_UI_PORT}') -> dict:
  """The standalone Master's state (workers, active and completed applications) from its web
  UI's /json/ (the host:port of the web UI, or a URL)."""
  url = ui if '://' in ui else f'http://{ui}'
  with urllib.request.urlopen(url.rstrip('/') + '/json/', timeout=timeout) as answer:
    return json.load(answer)


def alive_workers(state: dict) -> int:
  return sum(1 for worker in state.get('workers', []) if worker.get('state') == 'ALIVE')


def _wait_ready(state: dict, deadline: float) -> None:
  """Until the Master has a live Worker and the job server and worker pool listen. The pool's
  port lies in Linux's ephemeral range (32768-60999): a client socket that happens to hold it
  makes the pool exit at once ('Address already in use'); it is started again, up to 3 times."""
  restarts = 0
  while True:
    try:
      answer = master_json()
      if (
        answer.get('status') == 'ALIVE'
        and alive_workers(answer) >= WORKERS
        and common.listening(JOB_PORT)
        and common.listening(WORKER_POOL_PORT)
      ):
        return
    except (OSError, ValueError):
      pass
    if not common.alive(state['worker_pool_pid']) and restarts < 3:
      restarts += 1
      time.sleep(1.0)
      state['worker_pool_pid'] = common.start_worker_pool(NAME, WORKER_POOL_PORT)
      common.write_state(NAME, state)
    for key in ('master_pid', *WORKER_KEYS, 'job_server_pid'):
      if not common.alive(state[key]):
        what = key[: -len('_pid')].replace('_', ' ')
        raise common.EngineError(f'the {what} exited at start; see {common.log_dir(NAME)}')
    if time.monotonic() > deadline:
      raise common.EngineError(
        f'the cluster did not answer within its time; logs: {common.log_dir(NAME)}'
      )
    time.sleep(0.5)


def up(log=print, timeout: float = 120.0) -> dict:
  """Install if needed and start the cluster; returns what cluster.json records. A cluster this
  project already runs is left as it is (a Master, Worker, job server or worker pool of it that
  died is started again)."""
  with common.lock(NAME):
    install(log)
    state = common.read_state(NAME) or {}
    ours = {
      key: state.get(key, 0)
      for key in ('master_pid', *WORKER_KEYS, 'job_server_pid', 'worker_pool_pid')
    }
    ports = {
      'master_pid': (MASTER_PORT, MASTER_UI_PORT),
      **{key: (WORKER_UI_PORT + i,) for i, key in enumerate(WORKER_KEYS)},
      'job_server_pid': (JOB_PORT, ARTIFACT_PORT, EXPANSION_PORT),
      'worker_pool_pid': (WORKER_POOL_PORT,),
    }
    for key, key_ports in ports.items():
      if common.alive(ours[key]):
        continue
      for port in key_ports:
        if common.listening(port):
          raise common.EngineError(
            f'localhost:{port} is already in use by another process: stop it first'
          )
    env = _spark_env()
    spark_class = os.path.join(spark_home(), 'bin', 'spark-class')
    started = []
    if not common.alive(ours['master_pid']):
      log(f'spark: starting a standalone Master and {WORKERS} Workers on loopback…')
      ours['master_pid'] = common.start_daemon(
        NAME,
        'master',
        [
          spark_class,
          'org.apache.spark.deploy.master.Master',
          '--host',
          'localhost',
          '--port',
          str(MASTER_PORT),
          '--webui-port',
          str(MASTER_UI_PORT),
        ],
        env,
      )
      started.append('master')
    for i, key in enumerate(WORKER_KEYS):
      if common.alive(ours[key]):
        continue
      ours[key] = common.start_daemon(
        NAME,
        key[: -len('_pid')],
        [
          spark_class,
          'org.apache.spark.deploy.worker.Worker',
          MASTER_URL,
          '--host',
          'localhost',
          '--webui-port',
          str(WORKER_UI_PORT + i),
          '--cores',
          str(WORKER_CORES),
          '--memory',
          WORKER_MEMORY,
          '--work-dir',
          _folder('work'),
        ],
        env,
      )
      started.append(key[: -len('_pid')])
    if not common.alive(ours['job_server_pid']):
      log("spark: starting Beam's job server and an SDK worker pool…")
      ours['job_server_pid'] = _start_job_server(env)
      started.append('job server')
    if not common.alive(ours['worker_pool_pid']):
      ours['worker_pool_pid'] = common.start_worker_pool(NAME, WORKER_POOL_PORT)
      started.append('worker pool')
    if started or not state:
      state = dict(
        master=MASTER_URL,
        web_ui=f'http://localhost:{MASTER_UI_PORT}',
        master_json=f'http://localhost:{MASTER_UI_PORT}/json/',
        worker_web_uis=[f'http://localhost:{WORKER_UI_PORT + i}' for i in range(WORKERS)],
        rest=None,  # Spark's REST submission server (6066) stays off: the job server submits
        job_endpoint=f'localhost:{JOB_PORT}',
        worker_pool=f'localhost:{WORKER_POOL_PORT}',
        spark_version=SPARK_VERSION,
        **ours,
        started=state.get('started') if not started else time.time(),
      )
      common.write_state(NAME, state)
    _wait_ready(state, time.monotonic() + timeout)
    log(
      f'spark: up: master {state["master"]}, web UI {state["web_ui"]}, '
      f'Beam job server {state["job_endpoint"]}'
    )
    return state


def _classpath() -> str:
  """Beam's jars first (their newer guava, gson, jackson win), then Spark's."""
  return os.path.join(job_server_lib(), '*') + os.pathsep + os.path.join(spark_jars(), '*')


def _start_job_server(env: dict) -> int:
  artifacts = _folder('artifacts')
  spark_conf = {
    # The executors that the Worker starts for each Beam job load Beam's classes from here
    # rather than from the driver (which would send them every jar of its classpath).
    'spark.executor.extraClassPath': os.path.join(job_server_lib(), '*'),
    'spark.executor.memory': EXECUTOR_MEMORY,
    'spark.driver.host': 'localhost',
    'spark.driver.bindAddress': '127.0.0.1',
    'spark.ui.showConsoleProgress': 'false',
  }
  log4j = os.path.join(env['SPARK_CONF_DIR'], 'log4j2.properties')
  command = [
    'java',
    '-Xmx2g',
    *JAVA_MODULE_OPTIONS,
    f'-Dlog4j2.configurationFile=file:{log4j}',
    *(f'-D{key}={value}' for key, value in spark_conf.items()),
    '-cp',
    common.loopback_jar(NAME, job_server_lib()) + os.pathsep + _classpath(),
    common.LOOPBACK_MAIN,
    JOB_SERVER_MAIN,
    f'--spark-master-url={MASTER_URL}',
    '--job-host=127.0.0.1',
    f'--job-port={JOB_PORT}',
    f'--artifact-port={ARTIFACT_PORT}',
    f'--expansion-port={EXPANSION_PORT}',
    f'--artifacts-dir={artifacts}',
  ]
  return common.start_daemon(NAME, 'job-server', command, env)


def processes() -> List[int]:
  """This cluster's processes (common.processes_of: its folder's JVMs, its worker pool)."""
  return common.processes_of(NAME)


def down(log=print) -> List[int]:
  """Stop the cluster, its job server and worker pool; returns the processes still alive
  afterwards (none, unless something refused to die)."""
  with common.lock(NAME):
    state = common.read_state(NAME) or {}
    # The job server first (its running applications end), then the Worker (and the executors
    # it started: they are in its process group), then the Master.
    for key in ('job_server_pid', 'worker_pool_pid', *WORKER_KEYS, 'master_pid'):
      common.stop_process(state.get(key, 0))
    for pid in processes():
      common.stop_process(pid, grace=5.0)
    left = processes()
    common.clear_state(NAME)
    log('spark: down' + (f'; still alive: {left}' if left else ''))
    return left


def status() -> Optional[dict]:
  """cluster.json and the Master's JSON, or None when no cluster of this project runs."""
  return common.status(NAME, _overview, errors=(OSError, ValueError))


def _overview() -> dict:
  """What the Master's JSON says of the cluster: workers, cores, memory, applications."""
  answer = master_json()
  overview = {
    key: answer.get(key)
    for key in ('status', 'aliveworkers', 'cores', 'coresused', 'memory', 'memoryused')
  }
  overview['activeapps'] = [app.get('name') for app in answer.get('activeapps', [])]
  overview['completedapps'] = len(answer.get('completedapps', []))
  return overview


def status_line() -> str:
  """What `status` prints: cluster.json with the Master's overview, or that none runs."""
  state = status()
  return json.dumps(state, indent=2) if state else 'spark: not running'


def main(argv=None) -> int:
  description = "A local Spark standalone cluster for Beam's SparkRunner."
  return cli.main(
    'python -m engines.spark', description, lambda args: up(), down, status_line, argv
  )


if __name__ == '__main__':
  signal.signal(signal.SIGINT, signal.default_int_handler)
  sys.exit(main())
