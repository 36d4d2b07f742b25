"""Small HTTP servers on loopback that stand in for Vertex AI, Cloud Storage and Kubeflow Pipelines.

They record every request (method, path, query, JSON body) and answer just enough for the real
`google-cloud-aiplatform`, `google-cloud-storage` and `kfp` clients to complete a submission.
"""

import http.server
import json
import threading
from typing import Callable, List, Optional, Tuple
import urllib.parse

Reply = Tuple[int, dict]


class Request:
  def __init__(self, method: str, url: str, body: bytes, headers):
    parsed = urllib.parse.urlparse(url)
    self.method, self.path = method, parsed.path
    self.query = dict(urllib.parse.parse_qsl(parsed.query))
    self.headers = {k.lower(): v for k, v in headers.items()}
    self.json = json.loads(body) if body else None

  def __repr__(self):
    return f'{self.method} {self.path}'


class FakeEndpoint:
  """`with FakeEndpoint(answer) as fake:` serves on fake.url; answer(request) → (status, json)."""

  def __init__(self, answer: Callable[[Request], Optional[Reply]]):
    self.requests: List[Request] = []
    endpoint = self

    class Handler(http.server.BaseHTTPRequestHandler):
      def _serve(self):
        length = int(self.headers.get('Content-Length') or 0)
        request = Request(self.command, self.path, self.rfile.read(length), self.headers)
        endpoint.requests.append(request)
        status, body = answer(request) or (404, {'error': {'code': 404, 'message': 'not faked'}})
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

      do_GET = do_POST = do_PUT = do_DELETE = _serve

      def log_message(self, *args):  # quiet
        pass

    self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    self.url = f'http://127.0.0.1:{self._server.server_address[1]}'

  def __enter__(self):
    # shutdown() waits for the loop's next poll: 0.5 s by default, for every test
    threading.Thread(
      target=self._server.serve_forever, kwargs={'poll_interval': 0.02}, daemon=True
    ).start()
    return self

  def __exit__(self, *exc):
    self._server.shutdown()
    self._server.server_close()

  def find(self, method: str, path_part: str) -> List[Request]:
    return [r for r in self.requests if r.method == method and path_part in r.path]


def vertex_and_storage(project: str, bucket: str) -> Callable[[Request], Optional[Reply]]:
  """Vertex AI PipelineService and ScheduleService (REST v1) for `project` and the Cloud Storage
  bucket lookup."""

  def answer(request: Request) -> Optional[Reply]:
    if request.path.startswith('/storage/v1/b/'):
      name = request.path.split('/')[4]
      return (200, {'name': name}) if name == bucket else None
    prefix = f'/v1/projects/{project}/locations/'
    if request.method == 'POST' and request.path.endswith(('/pipelineJobs', '/schedules')):
      if not request.path.startswith(prefix):
        project_asked = request.path.split('/')[3]
        return 403, {
          'error': {
            'code': 403,
            'status': 'PERMISSION_DENIED',
            'message': f'Permission denied on project {project_asked}',
          }
        }
      if request.path.endswith('/schedules'):
        return 200, {
          **request.json,
          'name': request.path[len('/v1/') :] + '/schedule-1',
          'state': 'ACTIVE',
        }
      job_id = request.query.get('pipelineJobId', 'job-1')
      return 200, {
        **request.json,
        'name': request.path[len('/v1/') :] + '/' + job_id,
        'state': 'PIPELINE_STATE_PENDING',
      }
    return None

  return answer


def kubeflow_pipelines() -> Callable[[Request], Optional[Reply]]:
  """The KFP v2beta1 API: health, experiments (one, created on demand), runs and recurring runs."""
  experiments = []

  def answer(request: Request) -> Optional[Reply]:
    path = request.path
    if path == '/apis/v2beta1/healthz':
      return 200, {'multi_user': False}
    if path == '/apis/v2beta1/experiments' and request.method == 'GET':
      return 200, {'experiments': experiments, 'total_size': len(experiments)}
    if path == '/apis/v2beta1/experiments' and request.method == 'POST':
      experiments.append({**request.json, 'experiment_id': f'exp-{len(experiments) + 1}'})
      return 200, experiments[-1]
    if path == '/apis/v2beta1/runs' and request.method == 'POST':
      return 200, {**request.json, 'run_id': 'run-1', 'state': 'PENDING'}
    if path == '/apis/v2beta1/recurringruns' and request.method == 'POST':
      return 200, {**request.json, 'recurring_run_id': 'recurring-1', 'status': 'ENABLED'}
    return None

  return answer
