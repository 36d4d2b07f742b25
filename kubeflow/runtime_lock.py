"""The image's lock: requirements.lock less what only develops the project (tests, lint).

requirements.in marks a development-only line with a `# dev:` comment. The runtime set is the
closure of the other lines over the installed packages' declared requirements (markers and
extras evaluated for this Python), so nothing a runtime package needs is left out; the versions
are requirements.lock's. A package that PyPI serves as an sdist only is marked `# sdist` (asked
of pip's resolver: a dry run with --report): the image's builder stage compiles exactly those.
`make lock` writes requirements-runtime.lock with it; --check (the tests, offline) compares the
packages and versions only.

  python -m kubeflow.runtime_lock [--check]
"""

import argparse
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, Iterable, List, Set, Tuple

from packaging.requirements import Requirement

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REQUIREMENTS_IN = os.path.join(ROOT, 'requirements.in')
LOCK = os.path.join(ROOT, 'requirements.lock')
RUNTIME_LOCK = os.path.join(ROOT, 'requirements-runtime.lock')
DEV_MARK = '# dev:'
# Packaging tools the image keeps whatever declares them (pkg_resources users rarely declare it).
ALWAYS = ('setuptools', 'wheel')
HEADER = (
  '# requirements.lock less the development-only lines of requirements.in (# dev:) and what only\n'
  '# they need: what kubeflow/Dockerfile installs. Regenerate: make lock (python -m kubeflow.runtime_lock).\n'
)


def normalize(name: str) -> str:
  return re.sub(r'[-_.]+', '-', name).lower()


def runtime_requirements(lines: Iterable[str]) -> List[Requirement]:
  """The requirement lines of requirements.in not marked development-only."""
  kept = []
  for line in lines:
    text = line.split('#', 1)[0].strip()
    if text and DEV_MARK not in line:
      kept.append(Requirement(text))
  return kept


def closure(roots: List[Requirement]) -> Set[str]:
  """Normalized names of the roots and everything their installed metadata requires."""
  seen: Set[Tuple[str, str]] = set()
  names: Set[str] = set()
  pending = [(root, frozenset(root.extras)) for root in roots]
  while pending:
    requirement, extras = pending.pop()
    name = normalize(requirement.name)
    for extra in extras or {''}:
      if (name, extra) in seen:
        continue
      seen.add((name, extra))
      names.add(name)
      for text in importlib.metadata.requires(requirement.name) or []:
        child = Requirement(text)
        if child.marker is None or child.marker.evaluate({'extra': extra}):
          pending.append((child, frozenset(child.extras)))
  return names


def lock_lines(path: str) -> Dict[str, str]:
  """`name==version` lines of a lock by normalized name."""
  with open(path) as f:
    return {
      normalize(line.split('==')[0]): line.strip()
      for line in f
      if '==' in line and not line.startswith('#')
    }


def runtime_pins() -> List[str]:
  """`name==version` of every runtime package, sorted by name."""
  with open(REQUIREMENTS_IN) as f:
    names = closure(runtime_requirements(f)) | set(ALWAYS)
  locked = lock_lines(LOCK)
  missing = sorted(names - set(locked))
  if missing:
    raise SystemExit(f'error: not in requirements.lock: {", ".join(missing)} (make lock)')
  return [locked[name] for name in sorted(names)]


def sdist_only(pins: List[str]) -> Set[str]:
  """Normalized names of the pins that the index serves without a wheel for this Python."""
  with tempfile.TemporaryDirectory() as folder:
    requirements, report = os.path.join(folder, 'r.txt'), os.path.join(folder, 'report.json')
    with open(requirements, 'w') as f:
      f.write('\n'.join(pins))
    subprocess.run(
      [
        sys.executable,
        '-m',
        'pip',
        'install',
        '--dry-run',
        '--ignore-installed',
        '--no-deps',
        '--quiet',
        '--report',
        report,
        '-r',
        requirements,
      ],
      check=True,
      env={**os.environ, 'PIP_FIND_LINKS': ''},
    )
    with open(report) as f:
      installs = json.load(f)['install']
  return {
    normalize(item['metadata']['name'])
    for item in installs
    if not item['download_info']['url'].endswith('.whl')
  }


def pins_of(text: str) -> List[str]:
  return [line.split('#')[0].strip() for line in text.splitlines() if '==' in line.split('#')[0]]


def runtime_lock() -> str:
  pins = runtime_pins()
  sdists = sdist_only(pins)
  return HEADER + ''.join(
    f'{pin}  # sdist\n' if normalize(pin.split('==')[0]) in sdists else f'{pin}\n' for pin in pins
  )


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--check', action='store_true', help='exit 1 if the file is stale')
  args = parser.parse_args(argv)
  if args.check:
    with open(RUNTIME_LOCK) as f:
      if pins_of(f.read()) != runtime_pins():
        print('error: requirements-runtime.lock is stale: make lock', file=sys.stderr)
        return 1
    return 0
  text = runtime_lock()
  with open(RUNTIME_LOCK, 'w') as f:
    f.write(text)
  print(f'{RUNTIME_LOCK}: {text.count(chr(10)) - 2} of {len(lock_lines(LOCK))} packages')
  return 0


if __name__ == '__main__':
  sys.exit(main())
