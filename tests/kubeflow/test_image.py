"""kubeflow/Dockerfile's image, built: every project module imports in it, no compiler, Beam's
boot program as its entrypoint, the runtime lock installed (and nothing only tests use)."""

import json
import os
import pkgutil
import subprocess

import pytest

from tests.support.containers import ROOT, in_image, project_image  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('containers')]
NOT_SHIPPED = {'tests', 'bench'}  # what the image leaves out (.dockerignore)

# Imports each module named on its command line; prints the ones that failed, and why.
IMPORT_EACH = """
import importlib, json, sys, traceback
failed = {}
for name in sys.argv[1:]:
  try:
    importlib.import_module(name)
  except BaseException as e:
    failed[name] = traceback.format_exception_only(type(e), e)[-1].strip()
print(json.dumps(failed))
"""


def project_modules():
  """Every module of the checkout that the image ships (all but NOT_SHIPPED)."""
  names = []
  for entry in sorted(os.listdir(ROOT)):
    path = os.path.join(ROOT, entry)
    if entry in NOT_SHIPPED:
      continue
    if entry.endswith('.py'):
      names.append(entry[:-3])
    elif os.path.isfile(os.path.join(path, '__init__.py')):
      names.append(entry)
      names += [m.name for m in pkgutil.walk_packages([path], entry + '.')]
  return names


def test_every_project_module_imports_in_the_image(project_image):  # noqa: F811
  expected = project_modules()
  result = in_image(project_image, '-c', IMPORT_EACH, *expected)
  assert result.returncode == 0, result.stderr[-3000:]
  # A module left out of the image fails as ModuleNotFoundError: nothing is missing either.
  assert json.loads(result.stdout.strip().splitlines()[-1]) == {}
  assert len(expected) > 150
  assert {'reporting.report', 'inference.model', 'monitoring.distances'} <= set(expected)


def test_the_image_has_no_compiler_and_starts_beams_boot(project_image):  # noqa: F811
  with open(os.path.join(ROOT, 'kubeflow', 'pipeline.json')) as f:
    tasks = json.load(f)['pipelineSpec']['root']['dag']['tasks']
  schema = tasks['ImportSchemaGen']['inputs']['parameters']['schema_file']['runtimeValue']
  found = in_image(
    project_image,
    '-c',
    'for t in gcc cc g++ c++ clang; do command -v $t; done; test -x /opt/apache/beam/boot && '
    f'echo boot; test -f {schema["constant"]} && echo schema',  # the committed example's
    entrypoint='sh',
  )
  assert found.stdout.split() == ['boot', 'schema'], found.stdout + found.stderr
  config = json.loads(
    subprocess.run(
      ['docker', 'image', 'inspect', project_image], capture_output=True, text=True, check=True
    ).stdout
  )[0]['Config']
  assert config['Entrypoint'] == ['/opt/apache/beam/boot']
  assert config['WorkingDir'] == '/pipeline'
  # The boot program is Beam's: it asks for the endpoints an SDK harness is started with.
  usage = in_image(project_image, '--help', entrypoint='/opt/apache/beam/boot')
  assert '-provision_endpoint' in usage.stderr + usage.stdout


def test_the_image_installs_the_runtime_lock_and_no_test_tools(project_image):  # noqa: F811
  frozen = in_image(project_image, '-m', 'pip', 'freeze', '--all')
  assert frozen.returncode == 0, frozen.stderr
  installed = {line.split('==')[0].lower().replace('_', '-') for line in frozen.stdout.split()}
  with open(os.path.join(ROOT, 'requirements-runtime.lock')) as f:
    runtime = {
      line.split('==')[0].lower().replace('_', '-')
      for line in f
      if '==' in line and not line.startswith('#')
    }
  assert runtime <= installed
  assert not {'pytest', 'ruff', 'moto', 'pytest-xdist', 'gcp-storage-emulator'} & installed
