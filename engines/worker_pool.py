"""Beam's SDK worker pool (apache_beam's worker_pool_main) for the local clusters, with one change:
it does not stop workers on request. Both TaskManagers of a cluster share this pool and number
their workers alike (`1-1`, `2-1`, …), and Beam's pool keeps one process per id, so one
TaskManager's StopWorker could kill the other's new worker before it connected, and that job then
waited for it for ever (`Still waiting for startup of environment`, seen by bench.engines). A
worker ends by itself when its TaskManager closes its control channel; the pool's own exit stops
any left. `python -m engines.worker_pool --service_port N`."""

import argparse
import logging
import sys
import time

from apache_beam.portability.api import beam_fn_api_pb2
from apache_beam.runners.worker import worker_pool_main


class SharedWorkerPool(worker_pool_main.BeamFnExternalWorkerPoolServicer):
  """Beam's pool, less StopWorker (see the module's docstring)."""

  def StopWorker(self, stop_worker_request, unused_context):
    return beam_fn_api_pb2.StopWorkerResponse()


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(prog='python -m engines.worker_pool', description=__doc__)
  parser.add_argument('--service_port', type=int, required=True, dest='port')
  args = parser.parse_args(argv)
  address, server = SharedWorkerPool.start(use_process=True, port=args.port)
  logging.getLogger().setLevel(logging.INFO)
  logging.info('worker pool listening at %s', address)
  try:
    while True:
      time.sleep(3600)
  except KeyboardInterrupt:
    server.stop(0)


if __name__ == '__main__':
  main(sys.argv[1:])
