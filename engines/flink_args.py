"""The Beam arguments that send a pipeline's Beam work to a Flink cluster, with the defaults a
user would otherwise have to know: which job server, which SDK environment, what parallelism.

- The cluster of `make flink-up` (its REST address is in .engines/flink/cluster.json): its
  long-running job server and SDK worker pool (EXTERNAL environment: every Beam step's Python
  code runs in processes of the pool, beside the TaskManagers, not in the submitting process).
- Any other Flink REST address: Beam's FlinkRunner starts the project's job server itself for
  each Beam pipeline (`--flink_job_server_jar`), and the SDK workers run in the submitting
  process (LOOPBACK), which the TaskManagers must be able to reach.
- Parallelism: the cluster's own `parallelism.default` (its REST API), unless given.
- `--experiments=pre_optimize=all` lets the Python SDK fuse and lift combiners before the job
  goes to a portable runner (apache/beam#18584, #24422), as TFX's own Flink example does.

A Flink REST address that does not answer is an EngineError within seconds.
"""

import os
from typing import List

from engines import common, flink, flink_containers, flink_rest

CHECK_SECONDS = 5.0


def normal_master(master: str) -> str:
  """'localhost:8081', 'http://localhost:8081/' → 'localhost:8081'."""
  master = master.strip().rstrip('/')
  return master.split('://', 1)[-1]


def cluster_parallelism(master: str) -> int:
  """The cluster's `parallelism.default` from its REST API (1 when it does not say)."""
  for entry in flink_rest.rest('/jobmanager/config', CHECK_SECONDS, master):
    if entry.get('key') == 'parallelism.default':
      return max(1, int(entry.get('value', 1)))
  return 1


def check_reachable(master: str) -> dict:
  """The REST API's /overview, or an EngineError saying what to do."""
  try:
    return flink_rest.rest('/overview', CHECK_SECONDS, master)
  except (OSError, ValueError) as e:
    reason = getattr(e, 'reason', None) or e
    raise common.EngineError(
      f'no Flink cluster answers there ({reason}); start the local one with '
      '`make flink-up` (docs/operations.md: Flink)'
    ) from None


def local_cluster(master: str) -> dict:
  """cluster.json of `make flink-up` (on loopback, or CONTAINERS=1) when `master` is its REST
  address, else {}."""
  loopback = lambda address: normal_master(address).replace('127.0.0.1', 'localhost')
  state = common.read_state(flink.NAME) or {}
  if not common.alive(state.get('job_server_pid', 0)):
    state = flink_containers.state() or {}
  same = state.get('rest') and loopback(master) == loopback(state['rest'])
  return state if same else {}


def flink_args(master: str, parallelism: int = 0) -> List[str]:
  """FlinkRunner's arguments for the cluster at `master` (checked to answer)."""
  master = normal_master(master)
  overview = check_reachable(master)
  if not overview.get('taskmanagers'):
    raise common.EngineError(f'the Flink cluster at {master} has no TaskManager running')
  parallelism = parallelism or cluster_parallelism(master)
  state = local_cluster(master)
  # The job server submits to `--flink_master`: the containerised cluster's, as its network names it.
  in_cluster = state.get('flink_master', master)
  args = ['--runner=FlinkRunner', f'--flink_master={in_cluster}', f'--parallelism={parallelism}']
  if state:
    args += [
      f'--job_endpoint={state["job_endpoint"]}',
      '--environment_type=EXTERNAL',
      f'--environment_config={state["worker_pool"]}',
    ]
  else:
    jar = job_server_jar()
    args += [f'--flink_job_server_jar={jar}', '--environment_type=LOOPBACK']
  return args + [
    '--experiments=pre_optimize=all',
    # TFX builds an sdist of itself for remote workers unless a dependency flag is set: the
    # worker pool already has this environment (in production: the worker image).
    '--sdk_container_image=local-environment',
  ]


def job_server_jar() -> str:
  """A jar whose manifest runs Beam's Flink job server from the fetched jars (Beam's
  FlinkRunner starts it with `java -jar`): the job server for a cluster not started here."""
  lib = os.path.join(flink.home(), 'job-server', 'lib')
  jar = os.path.join(flink.home(), 'job-server', 'flink-job-server.jar')
  if os.path.isfile(jar):
    return jar
  if not os.path.isdir(lib):
    raise common.EngineError(
      "Beam's Flink job server is not installed: `make flink-up` fetches it "
      '(docs/operations.md: Flink)'
    )
  manifest = os.path.join(flink.home(), 'job-server', 'MANIFEST.MF')
  jars = sorted(name for name in os.listdir(lib) if name.endswith('.jar'))
  lines = ['Manifest-Version: 1.0', f'Main-Class: {flink.JOB_SERVER_MAIN}']
  class_path = ' '.join(f'lib/{name}' for name in jars)
  # Manifest lines are at most 72 bytes; continuation lines start with a space.
  wrapped = [class_path[i : i + 70] for i in range(0, len(class_path), 70)]
  lines.append('Class-Path: ' + '\n '.join(wrapped))
  with open(manifest, 'w') as f:
    f.write('\n'.join(lines) + '\n')
  common.run_quietly(
    ['jar', '--create', '--file', jar + '.tmp', '--manifest', manifest],
    'building the job server jar',
  )
  os.replace(jar + '.tmp', jar)
  return jar
