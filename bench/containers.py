"""What containers cost: the image's build (cold and warm) and size, a task container's start,
and the compiled pipeline with each task in a container against the same launcher's subprocesses
and against `pipeline.py run`, on the embedded digits, side by side in one invocation.

  .venv/bin/python -m bench.containers [--rounds N] [--cold] [--gpu] [--quick] [--json OUT]

Each round (the three pipeline ways in a rotating order, so a slow stretch of the machine hits
all alike; each on a fresh pipeline root / output folder, so nothing is cached):
  containers   python -m kubeflow.local_launcher --template SPEC --image IMAGE (one container a task)
  subprocesses python -m kubeflow.local_launcher --template SPEC (one subprocess a task)
  local_run    pipeline.py run --data DIGITS --output OUT (one process, TFX's LocalDagRunner)
and two start-up figures: `docker run IMAGE python -c print` and the same `python -c` here, each
timed to its first line of output; and the same for `import tfx.components` (what a task's
entrypoint imports before its first log line). Ratios are medians with their lowest and highest
round. Build times: `make image` warm (nothing changed: the build cache) every round; cold
(`docker build --no-cache`, downloads included) once with --cold. --gpu builds GPU=1 once (not run).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench import figures as bench_figures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGE = 'tfrecord-pipeline:local'
STEPS, QUICK_STEPS = 600, 60  # config.py's train_steps; --quick
WAYS = ('containers', 'subprocesses', 'local_run')
BEAM_IN_PROCESS = '--beam-arg=--direct_running_mode=in_memory'  # the compiled spec's Beam tasks


def timed(argv, **kwargs) -> float:
  started = time.monotonic()
  subprocess.run(argv, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, **kwargs)
  return time.monotonic() - started


def first_line(argv) -> float:
  """Seconds from starting argv to its first line on stdout (the process then finishes)."""
  started = time.monotonic()
  child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
  child.stdout.readline()
  seconds = time.monotonic() - started
  child.communicate()
  return seconds


def build(*extra: str) -> float:
  return timed(['make', '-s', 'image', *extra], stderr=subprocess.DEVNULL)


def size_gb(image: str) -> float:
  found = subprocess.run(
    ['docker', 'image', 'inspect', image, '--format', '{{.Size}}'],
    capture_output=True,
    text=True,
    check=True,
  )
  return int(found.stdout) / 1e9


def start_figures() -> dict:
  python = sys.executable
  in_container = ['docker', 'run', '--rm', '--network=none', '--entrypoint=python', IMAGE]
  hello = ['-c', 'print(1)']
  tfx = ['-c', 'import tfx.components; print(1)']
  return {
    'container_python_s': first_line(in_container + hello),
    'host_python_s': first_line([python, *hello]),
    'container_tfx_import_s': first_line(in_container + tfx),
    'host_tfx_import_s': first_line([python, *tfx]),
  }


def compile_spec(digits: str, root: str, spec: str, steps: int) -> None:
  subprocess.run(
    [
      sys.executable, 'pipeline.py', 'compile', '--data', digits, '--pipeline-root', root,
      '--image', IMAGE, '--out', spec, '--train-steps', str(steps), BEAM_IN_PROCESS,
    ],
    check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
  )  # fmt: skip


def one_way(way: str, scratch: str, digits: str, steps: int, number: int) -> float:
  root = os.path.join(scratch, f'{way}-{number}')
  if way == 'local_run':
    return timed(
      [
        sys.executable, 'pipeline.py', 'run', '--data', digits, '--output', root,
        '--train-steps', str(steps), '--beam-mode', 'in_memory',
      ]
    )  # fmt: skip
  spec = os.path.join(scratch, f'spec-{way}-{number}.json')
  compile_spec(digits, root, spec, steps)
  image = ['--image', IMAGE] if way == 'containers' else []
  launcher = [sys.executable, '-m', 'kubeflow.local_launcher', '--template', spec]
  return timed([*launcher, '--pipeline-root', root, *image])


def measure(rounds: int, cold: bool, gpu: bool, quick: bool) -> dict:
  from cli.inputs import default_data

  steps = QUICK_STEPS if quick else STEPS
  found = {'rounds': [], 'steps': steps}
  with tempfile.TemporaryDirectory() as scratch:
    digits = default_data.write_digits(os.path.join(scratch, 'digits'))
    if cold:
      base = subprocess.run(
        ['docker', 'image', 'inspect', IMAGE, '--format', '{{index .Config.Labels "base"}}'],
        capture_output=True, text=True, check=True,
      ).stdout.strip()  # fmt: skip
      found['cold_build_s'] = timed(
        [
          'docker', 'build', '--no-cache', '-q', '-f', 'kubeflow/Dockerfile',
          '--build-arg', f'BASE={base}', '-t', IMAGE + '-cold', '.',
        ]
      )  # fmt: skip
      found['base'] = base
    if gpu:
      found['gpu_build_s'] = build('GPU=1')
      found['gpu_size_gb'] = size_gb(IMAGE + '-gpu')
    found['size_gb'] = size_gb(IMAGE)
    for number in range(rounds):
      figures = {'warm_build_s': build(), **start_figures()}
      order = WAYS[number % 3 :] + WAYS[: number % 3]
      for way in order:
        figures[way] = one_way(way, scratch, digits, steps, number)
        print(f'round {number + 1}: {way} {figures[way]:.1f} s', flush=True)
      found['rounds'].append(figures)
      shutil.rmtree(os.path.join(scratch, f'containers-{number}'), ignore_errors=True)
  return found


def summary(found: dict) -> dict:
  rounds = found['rounds']

  def ratio(top: str, bottom: str) -> dict:
    tops, bottoms = [r[top] for r in rounds], [r[bottom] for r in rounds]
    return {
      'median': statistics.median(tops) / statistics.median(bottoms),
      'rounds': bench_figures.ratio_rounds(tops, bottoms),
    }

  medians = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
  return {
    'medians_s': medians,
    'containers_over_subprocesses': ratio('containers', 'subprocesses'),
    'containers_over_local_run': ratio('containers', 'local_run'),
    'subprocesses_over_local_run': ratio('subprocesses', 'local_run'),
    'container_start_over_host': ratio('container_python_s', 'host_python_s'),
    'container_tfx_import_over_host': ratio('container_tfx_import_s', 'host_tfx_import_s'),
  }


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(
    prog='python -m bench.containers',
    description=__doc__,
    formatter_class=argparse.RawDescriptionHelpFormatter,
  )
  parser.add_argument('--rounds', type=int, default=3)
  parser.add_argument('--cold', action='store_true', help='also a no-cache build, once')
  parser.add_argument('--gpu', action='store_true', help='also build GPU=1 once, for its size')
  parser.add_argument('--quick', action='store_true', help=f'{QUICK_STEPS} train steps')
  parser.add_argument('--json', default='', help='write the figures here')
  args = parser.parse_args(argv)
  found = measure(args.rounds, args.cold, args.gpu, args.quick)
  found['summary'] = summary(found)
  medians = found['summary']['medians_s']
  for key in sorted(medians):
    print(f'{key:28} {medians[key]:8.2f} s (median of {args.rounds})')
  for key, value in found['summary'].items():
    if key != 'medians_s':
      low, high = value['rounds']
      print(f'{key:32} {value["median"]:.2f}x (rounds {low:.2f}-{high:.2f})')
  for key in ('size_gb', 'gpu_size_gb', 'cold_build_s', 'gpu_build_s'):
    if key in found:
      print(f'{key:28} {found[key]:8.2f}')
  bench_figures.save(found, args.json)
  return found


if __name__ == '__main__':
  main()
