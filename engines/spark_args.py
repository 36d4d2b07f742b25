"""The Beam arguments that send a pipeline's Beam work to a Spark standalone cluster: the local
one of `python -m engines.spark up` (its long-running job server and SDK worker pool) or any
other master (a job server per Beam pipeline, SDK workers in the submitting process). A master
that does not answer is an EngineError within seconds."""

import os
import socket
from typing import List, Tuple

from engines import common, spark

CHECK_SECONDS = 5.0
RUNNER_JAR = 'beam-runners-spark-3-2.62.0.jar'


def normal_master(master: str) -> Tuple[str, int]:
  """'spark://localhost:7077', 'localhost:7077', 'localhost' → ('localhost', 7077)."""
  rest = master.strip().rstrip('/')
  if '://' in rest:
    scheme, rest = rest.split('://', 1)
    if scheme != 'spark':
      raise common.EngineError(f'{master!r} is not a Spark standalone master (spark://HOST:PORT)')
  host, _, port = rest.partition(':')
  try:
    return host or 'localhost', int(port or spark.MASTER_PORT)
  except ValueError:
    raise common.EngineError(f'{master!r} is not a Spark master URL (spark://HOST:PORT)') from None


def check_reachable(host: str, port: int) -> None:
  """A TCP connection to the Master's RPC port within CHECK_SECONDS, or an EngineError."""
  try:
    with socket.create_connection((host, port), timeout=CHECK_SECONDS):
      pass
  except OSError as e:
    reason = e.strerror or type(e).__name__
    raise common.EngineError(
      f'no Spark master answers at spark://{host}:{port} ({reason}); start the local one with '
      '`python -m engines.spark up`'
    ) from None


def local_cluster(host: str, port: int) -> dict:
  """cluster.json of `python -m engines.spark up` when host:port is its Master, else {}."""
  state = common.read_state(spark.NAME) or {}
  local = host in ('localhost', '127.0.0.1') and port == spark.MASTER_PORT
  return state if local and state and common.alive(state.get('job_server_pid', 0)) else {}


def spark_args(master: str, parallelism: int = 0) -> List[str]:
  """SparkRunner's arguments for the Spark master at `master` (checked to answer).

  The local cluster: its long-running job server and SDK worker pool (EXTERNAL environment).
  Any other master: Beam's SparkRunner starts a job server from this project's jars for each
  Beam pipeline (`--spark_job_server_jar`) and runs the SDK workers in the submitting process
  (LOOPBACK), which the executors must be able to reach.

  `parallelism` is accepted for the same call as engines.flink_args.flink_args and not used: no
  Beam option sets a Spark job's parallelism; each Beam job's application takes the free cores
  of the cluster's Workers, and Spark splits reads into that many partitions.
  """
  host, port = normal_master(master)
  check_reachable(host, port)
  url = f'spark://{host}:{port}'
  state = local_cluster(host, port)
  if state:
    try:
      answer = spark.master_json(CHECK_SECONDS, state['web_ui'])
    except (OSError, ValueError) as e:
      raise common.EngineError(
        f'the Spark master at {url} does not answer on its web UI ({e})'
      ) from None
    if not spark.alive_workers(answer):
      raise common.EngineError(f'the Spark cluster at {url} has no Worker running')
    args = [
      '--runner=SparkRunner',
      f'--spark_master_url={url}',
      f'--job_endpoint={state["job_endpoint"]}',
      '--environment_type=EXTERNAL',
      f'--environment_config={state["worker_pool"]}',
      # What the driver sends each application's executors: by default every jar of the job
      # server's classpath, Spark's own included (413 MB copied into each application's work
      # folder); the executors already load Beam's jars (spark.executor.extraClassPath), so
      # only the runner's own small jar.
      f'--files_to_stage={os.path.join(spark.job_server_lib(), RUNNER_JAR)}',
    ]
  else:
    args = [
      '--runner=SparkRunner',
      f'--spark_master_url={url}',
      f'--spark_job_server_jar={job_server_jar()}',
      '--environment_type=LOOPBACK',
    ]
  del parallelism  # see the docstring
  return args + [
    # Fusion and combiner lifting in the Python SDK before the job reaches the portable runner,
    # and a read split into many partitions instead of one (apache/beam#24422).
    '--experiments=pre_optimize=all',
    # TFX builds an sdist of itself for remote workers unless a dependency flag is set: the
    # worker pool already has this environment (in production: the worker image).
    '--sdk_container_image=local-environment',
  ]


def job_server_jar() -> str:
  """A jar whose manifest runs Beam's Spark job server from the fetched jars and Spark's (Beam's
  SparkRunner starts it with `java -jar`), with the module openings Spark needs on Java 17."""
  jar = os.path.join(spark.home(), 'job-server', 'spark-job-server.jar')
  if os.path.isfile(jar):
    return jar
  if not os.path.isdir(spark.job_server_lib()) or not os.path.isdir(spark.spark_jars()):
    raise common.EngineError(
      "Beam's Spark job server is not installed: `python -m engines.spark up` fetches it"
    )
  base = os.path.dirname(jar)
  entries = []
  for folder in (spark.job_server_lib(), spark.spark_jars()):
    relative = os.path.relpath(folder, base)
    entries += [
      f'{relative}/{name}' for name in sorted(os.listdir(folder)) if name.endswith('.jar')
    ]
  opens = ' '.join(
    option.split('=', 1)[1].rsplit('=', 1)[0]
    for option in spark.JAVA_MODULE_OPTIONS
    if option.startswith('--add-opens=')
  )
  lines = ['Manifest-Version: 1.0', f'Main-Class: {spark.JOB_SERVER_MAIN}', f'Add-Opens: {opens}']
  class_path = ' '.join(entries)
  lines.append('Class-Path: ' + class_path)
  manifest = os.path.join(base, 'MANIFEST.MF')
  with open(manifest, 'w') as f:
    # Manifest lines are at most 72 bytes; continuation lines start with a space.
    for line in lines:
      f.write(
        line[:70] + ''.join('\n ' + line[i : i + 70] for i in range(70, len(line), 70)) + '\n'
      )
  common.run_quietly(
    ['jar', '--create', '--file', jar + '.tmp', '--manifest', manifest],
    'building the job server jar',
  )
  os.replace(jar + '.tmp', jar)
  return jar
