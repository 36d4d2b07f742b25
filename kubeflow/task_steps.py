"""Runs one task's steps in order inside its container, as KFP v2's launcher does in the pod:
the ExampleGen driver (`preCacheCheck`) first, then the executor; stops at the first failure.

  python -m kubeflow.task_steps STEPS.json   (a JSON list of argv lists)
"""

import json
import subprocess
import sys


def main(argv=None) -> int:
  (path,) = argv if argv is not None else sys.argv[1:]
  with open(path) as f:
    steps = json.load(f)
  for step in steps:
    code = subprocess.call(step)
    if code:
      return code
  return 0


if __name__ == '__main__':
  sys.exit(main())
