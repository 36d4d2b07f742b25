"""The project's image for the container tests: Docker must answer (CI=true: a failure, else a
skip with the reason in one line), and `make image` (cached after .ci/run's build) builds it."""

import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE = os.environ.get('TEST_IMAGE', 'tfrecord-pipeline:local')


def _unavailable(reason: str):
  if os.environ.get('CI') == 'true':
    pytest.fail(f'CI needs Docker for the container tests: {reason}', pytrace=False)
  pytest.skip(f'no Docker here: {reason}')


@pytest.fixture(scope='session')
def project_image() -> str:
  """The image's tag, built (or found up to date in the build cache) by `make image`."""
  info = subprocess.run(['docker', 'info'], capture_output=True, text=True)
  if info.returncode:
    _unavailable((info.stderr.strip().splitlines() or ['docker info failed'])[-1])
  built = subprocess.run(
    ['make', '-s', 'image', f'IMAGE={IMAGE}'], cwd=ROOT, capture_output=True, text=True
  )
  assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
  return IMAGE


def in_image(image: str, *command: str, entrypoint: str = 'python') -> subprocess.CompletedProcess:
  """`command` run in a fresh container of `image` (no network)."""
  return subprocess.run(
    ['docker', 'run', '--rm', '--network=none', f'--entrypoint={entrypoint}', image, *command],
    capture_output=True,
    text=True,
  )
