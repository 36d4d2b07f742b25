"""A Flink cluster's REST API read: any GET as JSON, and a Beam counter's live sum over a running
job's tasks (what components/beam_progress.py shows of a Beam step on Flink)."""

import base64
import json
from typing import Optional
import urllib.request

REST_PORT = 8081
USER_COUNTER_URN = 'beam:metric:user:sum_int64:v1'


def rest(path: str, timeout: float = 3.0, master: str = f'localhost:{REST_PORT}'):
  """GET the Flink REST API at `master` (host:port or a URL): the decoded JSON."""
  url = master if '://' in master else f'http://{master}'
  with urllib.request.urlopen(url.rstrip('/') + path, timeout=timeout) as answer:
    return json.load(answer)


def _varint(data: bytes) -> int:
  value = shift = 0
  for byte in data:
    value |= (byte & 0x7F) << shift
    shift += 7
    if not byte & 0x80:
      break
  return value


def job_counter(master: str, job_name: str, namespace: str, name: str) -> Optional[int]:
  """A Beam counter's sum over a job's tasks as Flink reports it while the job runs (Beam's
  metrics travel in the job's `__metricscontainers` accumulator, updated at each bundle's end);
  None while no job of that name is known to the cluster."""
  jobs = [job for job in rest('/jobs/overview', master=master)['jobs'] if job['name'] == job_name]
  if not jobs:
    return None
  job = max(jobs, key=lambda job: job['start-time'])
  accumulators = rest(f'/jobs/{job["jid"]}/accumulators', master=master)
  total = 0
  for accumulator in accumulators.get('user-task-accumulators', []):
    if accumulator.get('name') != '__metricscontainers':
      continue
    for info in json.loads(accumulator['value']).get('metrics', {}).get('attempted', []):
      labels = info.get('labels', {})
      if (
        info.get('urn') == USER_COUNTER_URN
        and labels.get('NAMESPACE') == namespace
        and labels.get('NAME') == name
      ):
        total += _varint(base64.b64decode(info.get('payload', '')))
  return total
