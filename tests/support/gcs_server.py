"""A Google Cloud Storage server on loopback for tests: gcp-storage-emulator (the JSON and XML
APIs) behind a TLS-terminating proxy, all in one process of its own
(`python -m tests.support.gcs_server FOLDER`).

Two kinds of client reach it, each as it would reach Google:
- TensorFlow's own GCS file system (the one runs use on Vertex AI) talks to
  https://www.googleapis.com and https://storage.googleapis.com only. Pointed at the proxy
  (https_proxy / http_proxy), trusting the test CA (CURL_CA_BUNDLE), it reaches the emulator
  through a TLS tunnel whose certificate names those hosts.
- google-cloud-storage (Beam's GCS file system, the run's bucket check, the tests) reads
  STORAGE_EMULATOR_HOST and talks to the emulator directly.
Both authenticate with a service account key (GOOGLE_APPLICATION_CREDENTIALS), as a run on
Vertex AI would with its service account: the server answers OAuth token requests.
"""

import contextlib
import datetime
import json
import logging
import os
import select
import socket
import ssl
import subprocess
import sys
import threading
from typing import Dict, Iterator

from tests.support import s3_server

GOOGLE_HOSTS = ('www.googleapis.com', 'storage.googleapis.com', 'oauth2.googleapis.com')
_TOKEN = {'access_token': 'loopback-token', 'token_type': 'Bearer', 'expires_in': 3600}


@contextlib.contextmanager
def loopback_gcs(folder: str, key_id: str) -> Iterator[Dict[str, str]]:
  """Starts the server; yields the environment that points clients at it. `key_id` is the
  service account key's id (tests look for it in what runs write)."""
  emulator_port, proxy_port = s3_server.free_port(), s3_server.free_port()
  log_path = os.path.join(folder, 'server.log')
  with open(log_path, 'w') as log:
    server = subprocess.Popen(
      [
        sys.executable,
        '-m',
        'tests.support.gcs_server',
        folder,
        str(emulator_port),
        str(proxy_port),
      ],
      stdout=log,
      stderr=subprocess.STDOUT,
    )
  try:
    for port in (emulator_port, proxy_port):
      s3_server.wait_for_port(server, port, log_path)
    emulator = f'http://127.0.0.1:{emulator_port}'
    proxy = f'http://127.0.0.1:{proxy_port}'
    yield {
      'STORAGE_EMULATOR_HOST': emulator,
      'GOOGLE_APPLICATION_CREDENTIALS': _service_account_key(folder, emulator, key_id),
      'https_proxy': proxy,
      'http_proxy': proxy,
      'no_proxy': '127.0.0.1,localhost',
      'CURL_CA_BUNDLE': os.path.join(folder, 'ca.pem'),
    }
  finally:
    server.terminate()
    server.wait(timeout=30)


def _service_account_key(folder: str, endpoint: str, key_id: str) -> str:
  """A service account key file whose token_uri is this server (google-auth asks there;
  TensorFlow asks https://www.googleapis.com/oauth2/v4/token, which the proxy brings here)."""
  from cryptography.hazmat.primitives import serialization
  from cryptography.hazmat.primitives.asymmetric import rsa

  pem = (
    rsa.generate_private_key(public_exponent=65537, key_size=2048)
    .private_bytes(
      serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    .decode()
  )
  path = os.path.join(folder, 'key.json')
  with open(path, 'w') as f:
    json.dump(
      {
        'type': 'service_account',
        'project_id': 'loopback',
        'private_key_id': key_id,
        'private_key': pem,
        'client_email': 'runner@loopback.iam.gserviceaccount.com',
        'client_id': '1',
        'token_uri': f'{endpoint}/token',
      },
      f,
    )
  return path


def _certificates(folder: str) -> ssl.SSLContext:
  """A test CA (ca.pem, for CURL_CA_BUNDLE) and a server certificate it signed for Google's
  hosts; returns the proxy's TLS context."""
  from cryptography import x509
  from cryptography.hazmat.primitives import hashes, serialization
  from cryptography.hazmat.primitives.asymmetric import rsa
  from cryptography.x509.oid import NameOID

  now = datetime.datetime.now(datetime.timezone.utc)

  def certificate(subject, issuer, public_key, signing_key, ca: bool, names=()):
    builder = (
      x509.CertificateBuilder()
      .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
      .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
      .public_key(public_key)
      .serial_number(x509.random_serial_number())
      .not_valid_before(now - datetime.timedelta(days=1))
      .not_valid_after(now + datetime.timedelta(days=2))
      .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if names:
      builder = builder.add_extension(
        x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False
      )
    return builder.sign(signing_key, hashes.SHA256())

  ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
  ca = certificate('loopback test CA', 'loopback test CA', ca_key.public_key(), ca_key, True)
  key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
  leaf = certificate(
    GOOGLE_HOSTS[0], 'loopback test CA', key.public_key(), ca_key, False, GOOGLE_HOSTS
  )
  with open(os.path.join(folder, 'ca.pem'), 'wb') as f:
    f.write(ca.public_bytes(serialization.Encoding.PEM))
  chain = os.path.join(folder, 'server.pem')
  with open(chain, 'wb') as f:
    f.write(
      key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
      )
    )
    f.write(leaf.public_bytes(serialization.Encoding.PEM))
  context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
  context.load_cert_chain(chain)
  return context


def _proxy(port: int, emulator_port: int, context: ssl.SSLContext) -> None:
  """An HTTP proxy that sends everything to the emulator: CONNECT tunnels end in TLS here
  (certificate for Google's hosts); plain requests (the emulator's own http:// upload links)
  are forwarded."""
  listener = socket.create_server(('127.0.0.1', port))
  while True:
    client, _ = listener.accept()
    threading.Thread(target=_tunnel, args=(client, emulator_port, context), daemon=True).start()


def _tunnel(client: socket.socket, emulator_port: int, context: ssl.SSLContext) -> None:
  with contextlib.suppress(OSError), contextlib.closing(client):
    head = b''
    while b'\r\n\r\n' not in head:
      chunk = client.recv(65536)
      if not chunk:
        return
      head += chunk
    method, target, rest = head.split(b' ', 2)
    upstream = socket.create_connection(('127.0.0.1', emulator_port))
    with contextlib.closing(upstream):
      if method == b'CONNECT':
        client.sendall(b'HTTP/1.1 200 Connection established\r\n\r\n')
        client = context.wrap_socket(client, server_side=True)
      else:  # absolute form (http://host/path) to origin form (/path)
        upstream.sendall(b' '.join([method, b'/' + target.split(b'/', 3)[3], rest]))
      _pipe(client, upstream)


def _pipe(a: socket.socket, b: socket.socket) -> None:
  """Copies bytes both ways until either side closes."""
  while True:
    readable, _, _ = select.select([a, b], [], [], 600)
    if not readable:
      return
    for source in readable:
      target = b if source is a else a
      try:
        data = source.recv(1 << 16)
      except ssl.SSLWantReadError:
        continue
      if not data:
        return
      while isinstance(source, ssl.SSLSocket) and source.pending():
        data += source.recv(source.pending())
      target.sendall(data)


def _serve(folder: str, emulator_port: int, proxy_port: int) -> None:
  from gcp_storage_emulator import server
  from gcp_storage_emulator.handlers import objects

  def empty_body_read_as_bytes(handler):
    """An empty upload (TensorFlow's folder marker `name/`) has no body: the emulator's
    handlers fail on len(None), and the client retries for ever."""

    def handle(request, response, storage, *args, **kwargs):
      if request.data is None and request.query.get('uploadType', ['media']) == ['media']:
        request._data = b''
      return handler(request, response, storage, *args, **kwargs)

    return handle

  fixed = {h: empty_body_read_as_bytes(h) for h in (objects.xml_upload, objects.insert)}
  read_raw_data = server._read_raw_data

  def chunked_body_first(request_handler):
    """TensorFlow's uploads come chunked with a Content-Length beside it; the chunking is what
    counts (RFC 9112 6.3), but the emulator read the chunk framing into the object."""
    headers = request_handler.headers
    if headers.get('Transfer-Encoding', '').lower() == 'chunked':
      del headers['Content-Length']
    return read_raw_data(request_handler)

  class RequestHandler(server.RequestHandler):
    def parse_request(self):
      """Answers `Expect: 100-continue` (the emulator speaks HTTP/1.0 and does not; libcurl then
      waits a second before every upload)."""
      parsed = super().parse_request()
      if parsed and self.headers.get('Expect', '').lower() == '100-continue':
        self.wfile.write(b'HTTP/1.1 100 Continue\r\n\r\n')
        self.wfile.flush()
      return parsed

  server._read_raw_data = chunked_body_first
  server.RequestHandler = RequestHandler

  def token(request, response, storage, *args, **kwargs):
    """OAuth 2.0 token exchange: a service account's signed JWT in, a bearer token out."""
    response.json(_TOKEN)

  server.HANDLERS = (('^(/token|/oauth2/v[34]/token)$', {server.POST: token}),) + tuple(
    (route, {method: fixed.get(h, h) for method, h in handlers.items()})
    for route, handlers in server.HANDLERS
  )
  logging.basicConfig(level=logging.INFO)
  context = _certificates(folder)
  threading.Thread(target=_proxy, args=(proxy_port, emulator_port, context), daemon=True).start()
  server.create_server('127.0.0.1', emulator_port, in_memory=True).run()


if __name__ == '__main__':
  _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
