"""The one line a refusal or a failure prints."""

import grpc

from contracts.errors import first_line


class _Unavailable(grpc.RpcError):
  """What Beam's portable runner raises when its job server goes away mid-run."""

  def __str__(self):
    return '<_MultiThreadedRendezvous of RPC that terminated with:\n\tstatus = ...'

  def details(self):
    return 'Socket closed'

  def code(self):
    return grpc.StatusCode.UNAVAILABLE


def test_a_grpc_error_says_what_stopped_answering():
  assert first_line(_Unavailable()) == (
    'the Beam job service stopped answering: Socket closed (UNAVAILABLE)'
  )


def test_first_line_only_or_the_type():
  assert first_line(ValueError('bad row\nmore')) == 'bad row'
  assert first_line(KeyError()) == 'KeyError'
