"""A Flink REST API's answers read, and a Beam counter summed, against a stand-in on loopback (no
cluster: the real one is in test_flink.py)."""

import base64
import json

import pytest

from engines import flink_rest
from tests.support import json_server


def _varint(value: int) -> bytes:
  out = bytearray()
  while True:
    byte, value = value & 0x7F, value >> 7
    out.append(byte | (0x80 if value else 0))
    if not value:
      return bytes(out)


def _counter(value: int, namespace='tfrp', name='progress') -> dict:
  return {
    'urn': flink_rest.USER_COUNTER_URN,
    'type': 'beam:metrics:sum_int64:v1',
    'payload': base64.b64encode(_varint(value)).decode(),
    'labels': {'PTRANSFORM': 'ref_AppliedPTransform_Count', 'NAMESPACE': namespace, 'NAME': name},
  }


ANSWERS = {
  '/jobs/overview': {
    'jobs': [
      {'jid': 'old', 'name': 'tfrp-statisticsgen-1', 'start-time': 1},
      {'jid': 'new', 'name': 'tfrp-statisticsgen-1', 'start-time': 2},
    ]
  },
  '/jobs/new/accumulators': {
    'user-task-accumulators': [
      {
        'name': '__metricscontainers',
        'value': json.dumps(
          {'metrics': {'attempted': [_counter(300), _counter(1234), _counter(7, name='other')]}}
        ),
      }
    ]
  },
}


@pytest.fixture(scope='module')
def fake_rest():
  with json_server.serving(ANSWERS) as master:
    yield master


def test_rest_takes_a_url_or_host_and_port(fake_rest):
  assert (
    flink_rest.rest('/jobs/overview', master=f'http://{fake_rest}/') == ANSWERS['/jobs/overview']
  )
  assert flink_rest.rest('/jobs/overview', master=fake_rest) == ANSWERS['/jobs/overview']


def test_counter_summed_over_tasks_of_the_newest_job(fake_rest):
  assert flink_rest.job_counter(fake_rest, 'tfrp-statisticsgen-1', 'tfrp', 'progress') == 1534
  assert flink_rest.job_counter(fake_rest, 'tfrp-evaluator-9', 'tfrp', 'progress') is None


def test_counter_of_a_large_count():
  assert flink_rest._varint(_varint(3_000_000_000)) == 3_000_000_000
