"""Faults for the engine tests: which TaskManager is busy, a thread that kills one in the middle of
each named Flink job (SIGKILL, or `docker kill` of its container, and has `up` bring one back), one
that SIGKILLs a Spark executor, and the listening sockets of processes."""

import os
import re
import subprocess
import time
from typing import Dict, List, Optional, Tuple

from engines import common, flink, flink_rest
from utils import background

MASTER = f'localhost:{flink.REST_PORT}'


def busy_task_managers(master: str = MASTER) -> List[Tuple[str, int]]:
  """(host, RPC port) of each TaskManager with a slot in use (from REST's `path`)."""
  found = []
  for manager in flink_rest.rest('/taskmanagers', master=master)['taskmanagers']:
    if manager['freeSlots'] < manager['slotsNumber']:
      host, port = manager['path'].split('@', 1)[1].split('/', 1)[0].rsplit(':', 1)
      found.append((host, int(port)))
  return found


def busy_task_manager_pid(master: str = MASTER) -> Optional[int]:
  """The pid of a TaskManager of this machine with a slot in use (None when none is busy): found
  by its RPC port among the listening sockets."""
  for _, port in busy_task_managers(master):
    listing = subprocess.run(
      ['ss', '-Hltnp', f'sport = :{port}'], capture_output=True, text=True, check=False
    ).stdout
    for pid in re.findall(r'pid=(\d+)', listing):
      return int(pid)
  return None


def kill_task_manager() -> Optional[int]:
  """SIGKILL a busy TaskManager of this machine, then `flink.up` starts one in its place for the
  jobs after it: its pid (None when none was busy)."""
  pid = busy_task_manager_pid()
  if pid:
    os.kill(pid, 9)
    while common.alive(pid):  # a JVM takes a moment to die: `up` would count it still
      time.sleep(0.1)
    flink.up(log=lambda line: None)
  return pid


def kill_task_manager_container() -> Optional[str]:
  """`docker kill` of a busy TaskManager's container of the containerised cluster, then
  `flink_containers.up` starts it again (Docker's restart policy leaves a killed container
  stopped): its name (None when none was busy)."""
  from engines import flink_containers as containers

  hosts = {host for host, _ in busy_task_managers()}
  for pod, manager in zip(containers.pods(), containers.task_managers()):
    if hosts & {manager, containers.address(pod)}:
      containers.docker('kill', manager)
      while containers.running(manager):
        time.sleep(0.1)
      containers.up(log=lambda line: None)
      return manager
  return None


class TaskManagerKiller(background.Background):
  """`with TaskManagerKiller(prefixes) as killer:` around a run: the first running Flink job whose
  name starts with each prefix loses its busy TaskManager a few seconds into its work, by `kill`
  (kill_task_manager: SIGKILL on the loopback cluster; kill_task_manager_container), which brings
  one back for the jobs after it. killer.killed: prefix → what `kill` returned (pid, container)."""

  # A job ships no jar on the loopback cluster (engines/files/UnstagedFlinkJobServer.java): the
  # BulkInferrer's on 8 images runs its tasks for about 2 s, so the kill comes half a second in.
  def __init__(
    self, prefixes: Tuple[str, ...], into_job_seconds: float = 0.5, kill=kill_task_manager
  ):
    self.prefixes, self.into_job_seconds, self._kill = prefixes, into_job_seconds, kill
    self.killed: Dict[str, object] = {}
    super().__init__()

  def _running(self) -> Optional[str]:
    """The prefix of a job running tasks now that has not lost a TaskManager yet."""
    for job in flink_rest.rest('/jobs/overview')['jobs']:
      if job['state'] != 'RUNNING' or not job['tasks'].get('running'):
        continue
      for prefix in self.prefixes:
        if prefix not in self.killed and job['name'].startswith(prefix):
          return prefix
    return None

  def _run(self) -> None:
    while not self._stop.wait(0.1):
      try:
        prefix = self._running()
        if not prefix:
          continue
        time.sleep(self.into_job_seconds)  # into the job's work, not its deployment
        killed = self._kill()
      except OSError:
        continue
      if killed:
        self.killed[prefix] = killed


class SparkExecutorKiller(background.Background):
  """`with SparkExecutorKiller() as killer:` around a run: the first Spark executor seen running
  for some seconds (started, its SDK worker asked for, tasks under way) is SIGKILLed
  (killer.killed: its pid, or None)."""

  def __init__(self, into_job_seconds: float = 8.0):
    self.into_job_seconds = into_job_seconds
    self.killed: Optional[int] = None
    super().__init__()

  def _run(self) -> None:
    from engines import spark

    while not self._stop.wait(0.5):
      executors = [pid for pid in spark.processes() if b'ExecutorBackend' in _cmdline(pid)]
      if executors:
        time.sleep(self.into_job_seconds)
        if common.alive(executors[0]):
          os.kill(executors[0], 9)
          self.killed = executors[0]
          return


def _cmdline(pid: int) -> bytes:
  try:
    with open(f'/proc/{pid}/cmdline', 'rb') as f:
      return f.read()
  except OSError:
    return b''


def _socket_inodes(pid: int) -> set:
  inodes = set()
  try:
    for fd in os.listdir(f'/proc/{pid}/fd'):
      target = os.readlink(f'/proc/{pid}/fd/{fd}')
      if target.startswith('socket:['):
        inodes.add(target[len('socket:[') : -1])
  except OSError:
    pass
  return inodes


def _address(hex_address: str) -> Tuple[str, int]:
  """/proc/net/tcp{,6}'s 'ADDR:PORT' (hex, the address in host byte order) → (address, port)."""
  address, port = hex_address.split(':')
  if len(address) == 8:
    octets = bytes.fromhex(address)[::-1]
    return '.'.join(str(b) for b in octets), int(port, 16)
  words = [bytes.fromhex(address[i : i + 8])[::-1].hex() for i in range(0, 32, 8)]
  groups = [''.join(words)[i : i + 4] for i in range(0, 32, 4)]
  return ':'.join(g.lstrip('0') or '0' for g in groups), int(port, 16)


LISTEN = '0A'


def listening_sockets(pids: List[int]) -> List[Tuple[int, str, int]]:
  """(pid, address, port) of every TCP socket the processes listen on."""
  owner = {inode: pid for pid in pids for inode in _socket_inodes(pid)}
  found = []
  for table in ('/proc/net/tcp', '/proc/net/tcp6'):
    with open(table) as f:
      for line in f.read().splitlines()[1:]:
        fields = line.split()
        if fields[3] == LISTEN and fields[9] in owner:
          found.append((owner[fields[9]], *_address(fields[1])))
  return sorted(set(found))


WILDCARDS = ('0.0.0.0', '0:0:0:0:0:0:0:0', '0:0:0:0:0:ffff:0:0')


def assert_loopback_only(pids: List[int], ports: set) -> None:
  """The processes listen on `ports` (at least) and on no wildcard address (a TaskManager's
  per-job Fn API servers included: engines/files/LoopbackFnServers.java)."""
  sockets = listening_sockets(pids)
  assert ports <= {port for _, _, port in sockets}, sockets
  wildcard = [s for s in sockets if s[1] in WILDCARDS]
  assert wildcard == [], f'on every interface: {wildcard}'
