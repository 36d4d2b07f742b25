"""A stand-in for a JSON REST API on loopback: GET answers from a dict of path → JSON."""

import contextlib
import http.server
import json
import threading


@contextlib.contextmanager
def serving(answers: dict):
  """Serves `answers` (a path not in it: 404, `{}`); yields the address, `127.0.0.1:port`."""

  class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
      body = json.dumps(answers.get(self.path, {})).encode()
      self.send_response(200 if self.path in answers else 404)
      self.send_header('Content-Type', 'application/json')
      self.end_headers()
      self.wfile.write(body)

    def log_message(self, *args):
      pass

  server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  try:
    yield f'127.0.0.1:{server.server_address[1]}'
  finally:
    server.shutdown()
