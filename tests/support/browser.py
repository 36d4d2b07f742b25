"""Headless Chromium for the tests, driven over the DevTools protocol (websocket-client).

`chromium_path()` installs Debian's `chromium` package when it is missing and this process may
(root with apt-get); otherwise it returns None with the reason, and the caller skips.
"""

import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from typing import Optional, Tuple
import urllib.request

APT_INSTALL = ['apt-get', 'install', '-y', '-q', '--no-install-recommends', 'chromium']


def chromium_path() -> Tuple[Optional[str], str]:
  """(path to chromium, '') or (None, why it cannot be had)."""
  found = shutil.which('chromium') or shutil.which('chromium-browser')
  if found:
    return found, ''
  if os.geteuid() != 0 or not shutil.which('apt-get'):
    return None, 'chromium is not installed and this user cannot apt-get install it'
  env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
  for attempt in (APT_INSTALL, ['apt-get', 'update', '-q'], APT_INSTALL):
    done = subprocess.run(attempt, env=env, capture_output=True, text=True, check=False)
    if attempt is APT_INSTALL and done.returncode == 0:
      break
  found = shutil.which('chromium')
  return (
    (found, '')
    if found
    else (
      None,
      'apt-get install chromium failed: ' + (done.stderr.strip().splitlines() or ['?'])[-1],
    )
  )


class Page:
  """One headless Chromium with one page; a context manager."""

  def __init__(self, chromium: str, width: int = 1200, height: int = 900):
    self._profile = tempfile.mkdtemp(prefix='chromium-profile-')
    self._process = subprocess.Popen(
      [
        chromium,
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--remote-debugging-port=0',
        f'--user-data-dir={self._profile}',
        f'--window-size={width},{height}',
        'about:blank',
      ],
      stdout=subprocess.DEVNULL,
      stderr=subprocess.DEVNULL,
    )
    self._ids = itertools.count(1)
    self.events = []
    self._socket = self._connect()

  def _connect(self):
    import websocket

    port_file = os.path.join(self._profile, 'DevToolsActivePort')
    deadline = time.monotonic() + 30
    while not (os.path.exists(port_file) and open(port_file).read().strip()):
      if time.monotonic() > deadline or self._process.poll() is not None:
        raise RuntimeError('chromium did not open its DevTools port')
      time.sleep(0.1)
    port = int(open(port_file).read().split()[0])
    with urllib.request.urlopen(f'http://127.0.0.1:{port}/json') as response:
      target = next(t for t in json.load(response) if t['type'] == 'page')
    return websocket.create_connection(
      target['webSocketDebuggerUrl'], timeout=30, suppress_origin=True
    )

  def call(self, method: str, **params) -> dict:
    """Sends one command and returns its result; events that arrive meanwhile are kept."""
    call_id = next(self._ids)
    self._socket.send(json.dumps({'id': call_id, 'method': method, 'params': params}))
    while True:
      message = json.loads(self._socket.recv())
      if message.get('id') == call_id:
        if 'error' in message:
          raise RuntimeError(f'{method}: {message["error"]}')
        return message['result']
      self.events.append(message)

  def wait_for(self, event: str, seconds: float = 30) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
      found = next((e for e in self.events if e.get('method') == event), None)
      if found:
        return found
      self.events.append(json.loads(self._socket.recv()))
    raise TimeoutError(event)

  def open(self, url: str) -> None:
    """Navigates and waits for the load event (every embedded image decoded by then)."""
    self.call('Page.enable')
    self.call('Network.enable')
    self.call('Page.navigate', url=url)
    self.wait_for('Page.loadEventFired')

  def evaluate(self, expression: str):
    """The JSON value of a JavaScript expression in the page."""
    result = self.call(
      'Runtime.evaluate', expression=f'JSON.stringify({expression})', returnByValue=True
    )
    return json.loads(result['result']['value'])

  def requested_urls(self):
    return [
      e['params']['request']['url']
      for e in self.events
      if e.get('method') == 'Network.requestWillBeSent'
    ]

  def screenshot(self, path: str) -> None:
    """The whole page (not only the window) as a PNG."""
    import base64

    size = self.call('Page.getLayoutMetrics')['cssContentSize']
    self.call(
      'Emulation.setDeviceMetricsOverride',
      width=int(size['width']),
      height=int(size['height']),
      deviceScaleFactor=1,
      mobile=False,
    )
    data = self.call('Page.captureScreenshot', format='png', captureBeyondViewport=True)['data']
    with open(path, 'wb') as f:
      f.write(base64.b64decode(data))

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self._socket.close()
    self._process.terminate()
    try:
      self._process.wait(10)
    except subprocess.TimeoutExpired:
      self._process.kill()
    shutil.rmtree(self._profile, ignore_errors=True)
