"""The Flink cluster in containers: `python -m engines.flink_containers up|down|status|put`
(`make flink-up CONTAINERS=1` / `make flink-down`).

As on Kubernetes, nothing of this machine's disk is visible to the cluster: a JobManager, two
TaskManagers, a Beam SDK worker pool beside each TaskManager (the project's image, a sidecar: the
two share the network namespace of an idle container, as a pod's containers share its sandbox, so
either restarts without cutting the other off) and Beam's job server run in containers on their
own Docker network. They share one named volume, the job server's staging folder (what Flink's and
Beam's job jars and staged artifacts need), and nothing else. Data and pipeline roots go through
object storage: an S3 server (moto, standing in for S3 or a MinIO) on the network's gateway address,
the one address that both this machine and the containers reach. The REST API and the job server
publish on 127.0.0.1 only.

What runs is recorded in .engines/flink-containers/cluster.json, which engines.flink_args reads
for `--flink-master localhost:8081` just as it reads the loopback cluster's.
"""

import json
import os
import subprocess
import sys
import time
from typing import Dict, List, Optional

from engines import cli, common, flink, flink_rest

NAME = 'flink-containers'
LABEL = 'tfrecord-pipeline.flink-containers'
PREFIX = 'tfrecord-flink'
NETWORK = f'{PREFIX}-net'
STAGING_VOLUME = f'{PREFIX}-staging'
STAGING = '/staging'
FLINK_IMAGE = 'tfrecord-flink:local'
PROJECT_IMAGE = 'tfrecord-pipeline:local'
BASE_STANDIN = 'tfrecord-pipeline-base:py3.10'
OFFICIAL_BASE = 'python:3.10-slim-bookworm'
JOB_MANAGER = f'{PREFIX}-jobmanager'
JOB_SERVER = f'{PREFIX}-job-server'
WORKER_POOL_PORT = 50000  # in each TaskManager's network namespace, as a sidecar's is in a pod
# The sidecars' worker pool: the project's warm pool (engines/worker_pool.py: workers forked from
# a process that imported TensorFlow, TFX, TFMA and TFDV once), or Beam's boot program, which
# starts a fresh Python per worker and installs the packages a job stages (--requirements_file,
# --extra_package), which the warm pool does not.
# Each: (docker run options, command).
SDK_WORKERS = {
  'warm': (
    ['--entrypoint', 'python'],
    ['-m', 'engines.worker_pool', '--host', '127.0.0.1', '--port', str(WORKER_POOL_PORT)],
  ),
  'boot': ([], ['--worker_pool']),  # Beam's pool listens on every interface of the pod
}
S3_PORT = 9000
S3_BUCKETS = ('data', 'runs')
S3_KEYS = {'AWS_ACCESS_KEY_ID': 'test', 'AWS_SECRET_ACCESS_KEY': 'test', 'AWS_REGION': 'us-east-1'}
DOCKERFILE = os.path.join(common.FILES, 'flink.Dockerfile')


def docker(*args: str, check: bool = True, timeout: float = 600) -> str:
  """A docker command's stdout; an EngineError with its last line when it fails."""
  try:
    done = subprocess.run(
      ['docker', *args], capture_output=True, text=True, timeout=timeout, check=False
    )
  except FileNotFoundError:
    raise common.EngineError(
      'docker is missing (apt-get install docker.io; .ci/docker up)'
    ) from None
  if check and done.returncode:
    last = (done.stderr.strip().splitlines() or ['exit %d' % done.returncode])[-1]
    raise common.EngineError(f'docker {args[0]}: {last}')
  return done.stdout.strip()


def task_managers(count: int = flink.TASK_MANAGERS) -> List[str]:
  return [f'{PREFIX}-taskmanager-{i + 1}' for i in range(count)]


def worker_pools(count: int = flink.TASK_MANAGERS) -> List[str]:
  return [f'{PREFIX}-worker-pool-{i + 1}' for i in range(count)]


def pods(count: int = flink.TASK_MANAGERS) -> List[str]:
  """The containers that hold each TaskManager's network namespace, shared with its worker pool
  (a pod's sandbox): either can die and restart without cutting the other off."""
  return [f'{PREFIX}-pod-{i + 1}' for i in range(count)]


def address(name: str) -> str:
  """A container's address on the cluster's network."""
  return docker(
    'inspect', '-f', f'{{{{(index .NetworkSettings.Networks "{NETWORK}").IPAddress}}}}', name
  )


def container_config() -> dict:
  """engines/files/flink-config.yaml with the container network's addresses: every process binds
  inside its own container, and only the ports published on 127.0.0.1 reach this machine."""
  import yaml

  with open(os.path.join(common.FILES, 'flink-config.yaml')) as f:
    config = yaml.safe_load(f)
  with open(os.path.join(common.FILES, 'java-opts.txt')) as f:
    java_opts = f.read().strip()
  config['jobmanager'].update({'bind-host': '0.0.0.0'})
  config['jobmanager']['rpc']['address'] = JOB_MANAGER
  config['taskmanager']['bind-host'] = '0.0.0.0'
  config['taskmanager'].pop('host', None)  # each TaskManager's own address on the network
  config['rest'].update({'address': JOB_MANAGER, 'bind-address': '0.0.0.0'})
  config['env'] = {'java': {'opts': {'all': java_opts}}}
  return config


def build_image(log=print) -> str:
  """tfrecord-flink:local from the pinned Flink distribution and job server (installed first)."""
  import yaml

  flink.install(log)
  context = flink.home()
  os.makedirs(os.path.join(context, 'container'), exist_ok=True)
  with open(os.path.join(context, 'container', 'config.yaml'), 'w') as f:
    yaml.safe_dump(container_config(), f, sort_keys=False)
  with open(os.path.join(context, '.dockerignore'), 'w') as f:
    f.write('*\n!dist/pyflink/bin\n!dist/pyflink/lib\n!dist/pyflink/plugins\n')
    f.write('!dist/pyflink/conf\n!job-server/lib\n!container\n')
  base = BASE_STANDIN if docker('image', 'inspect', BASE_STANDIN, check=False) else OFFICIAL_BASE
  log(f'flink: building {FLINK_IMAGE} on {base}…')
  docker(
    'build', '-q', '-f', DOCKERFILE, '--build-arg', f'BASE={base}', '--label', LABEL,
    '-t', FLINK_IMAGE, context, timeout=1800,
  )  # fmt: skip
  return FLINK_IMAGE


def gateway() -> str:
  """The network's gateway: this machine's address on it, reachable from every container."""
  return docker('network', 'inspect', '-f', '{{(index .IPAM.Config 0).Gateway}}', NETWORK)


def s3_env(state: dict) -> Dict[str, str]:
  """The AWS_* variables that point a client at the cluster's S3 server."""
  return {'AWS_ENDPOINT_URL': state['s3_endpoint'], **S3_KEYS}


def rest_address(master: str) -> str:
  """`master` as this machine reaches it: the JobManager's name on the cluster's network (what
  the job server is given) is its REST port published on loopback; any other is itself."""
  return f'localhost:{flink.REST_PORT}' if master == f'{JOB_MANAGER}:{flink.REST_PORT}' else master


def running(name: str) -> bool:
  return docker('inspect', '-f', '{{.State.Running}}', name, check=False) == 'true'


def state() -> Optional[dict]:
  """cluster.json while the cluster's job server container runs, else None."""
  recorded = common.read_state(NAME)
  return recorded if recorded and running(JOB_SERVER) else None


def _run_container(name: str, image: str, options: List[str], command: List[str]) -> None:
  """A detached, labelled container on the cluster's network (or `--network container:…`)."""
  network = [] if '--network' in options else ['--network', NETWORK]
  docker(
    'run', '-d', '--name', name, '--label', LABEL, '--log-opt', 'max-size=20m',
    *network, *options, image, *command,
  )  # fmt: skip


def _start_s3(address: str) -> int:
  """moto's S3 server on the network's gateway address (with its buckets)."""
  command = [sys.executable, '-m', 'moto.server', '-H', address, '-p', str(S3_PORT)]
  pid = common.start_daemon(NAME, 's3', command)
  deadline = time.monotonic() + 30
  while not common.listening(S3_PORT, address):
    if not common.alive(pid) or time.monotonic() > deadline:
      raise common.EngineError(f'the S3 server did not start; log: {common.log_dir(NAME)}/s3.log')
    time.sleep(0.2)
  import boto3

  client = boto3.client('s3', endpoint_url=f'http://{address}:{S3_PORT}', **_boto_keys())
  for bucket in S3_BUCKETS:
    client.create_bucket(Bucket=bucket)
  return pid


def _boto_keys() -> dict:
  return dict(
    aws_access_key_id=S3_KEYS['AWS_ACCESS_KEY_ID'],
    aws_secret_access_key=S3_KEYS['AWS_SECRET_ACCESS_KEY'],
    region_name=S3_KEYS['AWS_REGION'],
  )


def _job_server_command() -> List[str]:
  return [
    'java',
    '--add-opens=java.base/java.lang=ALL-UNNAMED',
    '--add-opens=java.base/java.util=ALL-UNNAMED',
    '--add-opens=java.base/java.nio=ALL-UNNAMED',
    # Flink's own log4j (and its SLF4J binding) so that the job server logs to `docker logs`.
    '-Dlog4j.configurationFile=/opt/flink/conf/log4j-console.properties',
    '-cp',
    '/opt/beam-job-server/lib/*:/opt/flink/lib/log4j-slf4j-impl-2.17.1.jar:/opt/flink/lib/log4j-api-2.17.1.jar:/opt/flink/lib/log4j-core-2.17.1.jar',
    flink.JOB_SERVER_MAIN,
    f'--flink-master={JOB_MANAGER}:{flink.REST_PORT}',
    '--job-host=0.0.0.0',  # inside its container; published on 127.0.0.1 only
    f'--job-port={flink.JOB_PORT}',
    f'--artifact-port={flink.ARTIFACT_PORT}',
    f'--expansion-port={flink.EXPANSION_PORT}',
    f'--artifacts-dir={STAGING}',
  ]


def up(log=print, timeout: float = 300.0, sdk_workers: str = 'warm') -> dict:
  """Build the Flink image if needed and start the cluster, its sidecars' pools `sdk_workers`
  (SDK_WORKERS); returns what cluster.json records."""
  with common.lock(NAME):
    current = state()
    if current:
      stopped = [name for name in _names() if not running(name)]
      if stopped:  # `docker kill`ed or stopped: Docker's restart policy leaves those stopped
        log(f'flink: starting {", ".join(stopped)} again')
        docker('start', *stopped)
        _wait_ready(time.monotonic() + timeout)
      log(f'flink: the containerised cluster is up: web UI {current["web_ui"]}')
      return current
    for port in (flink.REST_PORT, flink.JOB_PORT, flink.ARTIFACT_PORT):
      if common.listening(port):
        raise common.EngineError(
          f'localhost:{port} is already in use (the loopback cluster? `make flink-down`)'
        )
    if not docker('image', 'inspect', PROJECT_IMAGE, check=False):
      raise common.EngineError(
        f'the SDK workers run in {PROJECT_IMAGE}: build it with `make image`'
      )
    _remove_all()
    build_image(log)
    log(f'flink: starting a JobManager, {flink.TASK_MANAGERS} TaskManagers with an SDK worker pool '
        'each and the job server in containers…')  # fmt: skip
    docker('network', 'create', '--label', LABEL, NETWORK)
    docker('volume', 'create', '--label', LABEL, STAGING_VOLUME)
    address = gateway()
    endpoint = f'http://{address}:{S3_PORT}'
    s3_pid = _start_s3(address)
    staging = ['-v', f'{STAGING_VOLUME}:{STAGING}']
    published = lambda *ports: [a for p in ports for a in ('-p', f'127.0.0.1:{p}:{p}')]
    hostname = lambda name: ['--hostname', name]
    _run_container(
      JOB_MANAGER,
      FLINK_IMAGE,
      hostname(JOB_MANAGER) + published(flink.REST_PORT),
      ['jobmanager.sh', 'start-foreground'],
    )
    environment = [
      a for k, v in s3_env({'s3_endpoint': endpoint}).items() for a in ('-e', f'{k}={v}')
    ]
    # A crashed TaskManager or pool (a JVM's fatal error, the OOM killer) is restarted by Docker
    # into its pod's namespace, as the kubelet restarts a pod's container.
    restarted = ['--restart', 'on-failure']
    for pod, manager, pool in zip(pods(), task_managers(), worker_pools()):
      named = hostname(manager) + ['--network-alias', manager]
      _run_container(pod, FLINK_IMAGE, named, ['sleep', 'infinity'])
      in_pod = ['--network', f'container:{pod}', *restarted]
      _run_container(manager, FLINK_IMAGE, in_pod + staging, ['taskmanager.sh', 'start-foreground'])
      # A worker pool on port 50000 of the pod, as Beam's Flink-on-Kubernetes sidecar.
      options, command = SDK_WORKERS[sdk_workers]
      _run_container(pool, PROJECT_IMAGE, in_pod + environment + options, command)
    ports = published(flink.JOB_PORT, flink.ARTIFACT_PORT, flink.EXPANSION_PORT)
    _run_container(
      JOB_SERVER, FLINK_IMAGE, hostname(JOB_SERVER) + staging + ports, _job_server_command()
    )
    current = dict(
      containers=True,
      rest=f'localhost:{flink.REST_PORT}',
      flink_master=f'{JOB_MANAGER}:{flink.REST_PORT}',
      job_endpoint=f'localhost:{flink.JOB_PORT}',
      worker_pool=f'localhost:{WORKER_POOL_PORT}',
      web_ui=f'http://localhost:{flink.REST_PORT}',
      s3_endpoint=endpoint,
      s3_pid=s3_pid,
      sdk_workers=sdk_workers,
      started=time.time(),
    )
    common.write_state(NAME, current)
    _wait_ready(time.monotonic() + timeout)
    log(f'flink: up in containers: web UI {current["web_ui"]}, Beam job server '
        f'{current["job_endpoint"]}, S3 {endpoint} (buckets: {", ".join(S3_BUCKETS)})')  # fmt: skip
    return current


def _wait_ready(deadline: float) -> None:
  while True:
    try:
      ready = flink_rest.rest('/overview').get('taskmanagers', 0) >= flink.TASK_MANAGERS
    except OSError:
      ready = False
    if ready and _job_server_answers() and all(_pool_listens(pool) for pool in worker_pools()):
      return
    dead = [name for name in _names() if not running(name)]
    if dead or time.monotonic() > deadline:
      why = f'{", ".join(dead)} stopped' if dead else 'it did not answer within its time'
      raise common.EngineError(f'the containerised cluster did not start: {why} (docker logs NAME)')
    time.sleep(1)


def _job_server_answers() -> bool:
  """A gRPC handshake with the job server (a published port accepts before the server listens)."""
  import grpc

  with grpc.insecure_channel(f'localhost:{flink.JOB_PORT}') as channel:
    try:
      grpc.channel_ready_future(channel).result(timeout=2)
      return True
    except grpc.FutureTimeoutError:
      return False


def _pool_listens(pool: str) -> bool:
  probe = f'exec 3<>/dev/tcp/127.0.0.1/{WORKER_POOL_PORT}'
  return not subprocess.run(
    ['docker', 'exec', pool, 'bash', '-c', probe], capture_output=True
  ).returncode


def _logs(name: str) -> str:
  done = subprocess.run(['docker', 'logs', name], capture_output=True, text=True, check=False)
  return done.stdout + done.stderr


def _names() -> List[str]:
  return [JOB_MANAGER, *pods(), *task_managers(), *worker_pools(), JOB_SERVER]


def _remove_all() -> None:
  """Every container, network and volume labelled as this cluster's; the S3 server."""
  containers = docker('ps', '-aq', '--filter', f'label={LABEL}', check=False).split()
  if containers:
    docker('rm', '-f', *containers, check=False)
  for kind in ('network', 'volume'):
    names = docker(kind, 'ls', '-q', '--filter', f'label={LABEL}', check=False).split()
    if names:
      docker(kind, 'rm', *names, check=False)
  common.stop_process((common.read_state(NAME) or {}).get('s3_pid', 0))
  common.clear_state(NAME)


def down(log=print) -> List[str]:
  """Stop and remove every container, the network and the staging volume; returns what is left."""
  with common.lock(NAME):
    _remove_all()
    left = docker('ps', '-aq', '--filter', f'label={LABEL}', check=False).split()
    left += docker('network', 'ls', '-q', '--filter', f'label={LABEL}', check=False).split()
    log('flink: containers down' + (f'; still there: {left}' if left else ''))
    return left


def put(path: str, log=print) -> str:
  """Upload a file or folder to s3://data/<its name> on the cluster's S3 server; its URL."""
  current = state()
  if not current:
    raise common.EngineError('the containerised cluster is not running: make flink-up CONTAINERS=1')
  if not os.path.exists(path):
    raise common.EngineError(f'{path} does not exist')
  import boto3

  client = boto3.client('s3', endpoint_url=current['s3_endpoint'], **_boto_keys())
  name = os.path.basename(os.path.normpath(path))
  files = (
    [(os.path.join(root, f), os.path.relpath(os.path.join(root, f), path)) for root, _, fs in os.walk(path) for f in fs]
    if os.path.isdir(path)
    else [(path, '')]
  )  # fmt: skip
  for local, relative in files:
    client.upload_file(local, 'data', f'{name}/{relative}' if relative else name)
  url = f's3://data/{name}'
  log(f'flink: {len(files)} file(s) uploaded: {url}')
  return url


def status_line() -> str:
  """What `status` prints: cluster.json with which containers run, or that none runs."""
  current = state()
  alive = {name: running(name) for name in _names()}
  return json.dumps(dict(current, containers=alive), indent=2) if current else 'flink: not running'


def _put(args) -> None:
  if not args.path:
    raise cli.UsageError('put needs a PATH')
  print(put(args.path, log=lambda line: print(line, file=sys.stderr)))


def _env(args) -> None:
  current = state() or {}
  print('\n'.join(f'export {k}={v}' for k, v in s3_env(current).items()) if current else '')


def arguments(parser) -> None:
  parser.add_argument('path', nargs='?', help='put: the file or folder to upload')
  parser.add_argument(
    '--sdk-workers',
    choices=sorted(SDK_WORKERS),
    default='warm',
    help="up: the sidecars' SDK worker pools: the project's warm pool (default) or Beam's boot "
    'program, which installs the packages a job stages',
  )


def _up(args) -> None:
  up(sdk_workers=args.sdk_workers)


def main(argv=None) -> int:
  description = 'The Flink cluster in containers (docs/operations.md: Flink in containers).'
  more = {'put': _put, 'env': _env}
  prog = 'python -m engines.flink_containers'
  return cli.main(prog, description, _up, down, status_line, argv, more, arguments)


if __name__ == '__main__':
  sys.exit(main())
