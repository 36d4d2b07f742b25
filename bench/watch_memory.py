"""Memory of `pipeline.py run --watch` over many model-file edits, and what each watched run's
fixed costs are.

  .venv/bin/python -m bench.watch_memory [--edits 50] [--steps 20] [--json OUT]

One watch on a tiny CSV (200 rows, two numbers, a two-class label) with a copy of
trainer/models/mlp.py, blessed whatever its accuracy (so that every run's ServingCheck loads the
model); then `--edits` saves of the copy, each giving its second layer a width it has not had
(8, 9, 10, …: a width switched back would be a model TFX's cache has trained already), each
awaited to the watch's next `watching:` line. After every run: the
resident memory (RSS) of the watch process and of all its children (the serving check's worker
among them), the ServingCheck's and the report's seconds (its `done in` line, the summary's
`written in … after`). Prints first / last / max RSS and the slope (least squares, MB per edit
over the edits after the first); then Ctrl-C, and whether any child process outlived the watch.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import psutil

from bench import edit_loop, pipeline_scaling

ROOT = edit_loop.ROOT
MODEL_FILE = os.path.join(ROOT, 'trainer', 'models', 'mlp.py')
FIRST_WIDTH = 'units // 2'  # the second layer's width in mlp.py; edit N makes it 8 + N
ROWS = 200
_REPORT = re.compile(r'^report: .*\(written in ([\d.]+) s after\)$')


def write_data(path: str) -> None:
  with open(path, 'w') as f:
    f.write('rooms,area,big\n')
    for i in range(ROWS):
      rooms, area = 1 + i % 5, 30 + (i * 7) % 90
      f.write(f'{rooms},{area},{int(rooms * 20 + area > 110)}\n')


def rss_mb(process: psutil.Process) -> dict:
  """{'watch': its RSS, 'children': theirs summed, 'total'}, in MB."""
  own = process.memory_info().rss
  children = 0
  for child in process.children(recursive=True):
    try:
      children += child.memory_info().rss
    except psutil.NoSuchProcess:
      pass
  return {
    key: round(value / 2**20, 1)
    for key, value in (('watch', own), ('children', children), ('total', own + children))
  }


def slope(values: list) -> float:
  """Least-squares change per step of `values`."""
  count = len(values)
  if count < 2:
    return 0.0
  mean_x, mean_y = (count - 1) / 2, sum(values) / count
  numerator = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
  return numerator / sum((i - mean_x) ** 2 for i in range(count))


def measure(scratch: str, edits: int, steps: int) -> dict:
  data, model = os.path.join(scratch, 'rows.csv'), os.path.join(scratch, 'my_model.py')
  write_data(data)
  shutil.copyfile(MODEL_FILE, model)
  argv = [sys.executable, 'pipeline.py', 'run', '--watch', '--output', os.path.join(scratch, 'out')]
  argv += ['--data', data, '--label', 'big', '--model', model, '--train-steps', str(steps)]
  argv += ['--max-accuracy-drop', '1', *pipeline_scaling.QUICK_BLESSING]
  watcher = subprocess.Popen(
    argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1
  )
  process = psutil.Process(watcher.pid)
  runs, children = [], set()

  def answered(started: float) -> None:
    record = {}
    for line in watcher.stdout:
      found = edit_loop.DONE.match(line.strip())
      if found and found.group(1) == 'ServingCheck':
        record['serving_check_seconds'] = float(found.group(2))
        record['serving_check'] = found.group(3)
      found = _REPORT.match(line.strip())
      if found:
        record['report_seconds'] = float(found.group(1))
      if line.startswith(edit_loop.WATCHING):
        record['seconds'] = round(time.monotonic() - started, 1)
        record['rss_mb'] = rss_mb(process)
        children.update(child.pid for child in process.children(recursive=True))
        runs.append(record)
        print(json.dumps(record), flush=True)
        return
    raise RuntimeError('run --watch ended before answering')

  try:
    answered(time.monotonic())  # the first run
    with open(model) as f:
      text = f.read()
    assert f'(units, {FIRST_WIDTH})' in text
    for edit in range(edits):
      started = time.monotonic()
      with open(model, 'w') as f:
        f.write(text.replace(f'(units, {FIRST_WIDTH})', f'(units, {8 + edit})'))
      answered(started)
  finally:
    watcher.send_signal(signal.SIGINT)
    code = watcher.wait(timeout=120)
  time.sleep(1)
  left = sorted(pid for pid in children if psutil.pid_exists(pid))
  totals = [run['rss_mb']['total'] for run in runs]
  return {
    'edits': edits,
    'train_steps': steps,
    'runs': runs,
    'exit_code': code,
    'children_left': left,
    'rss_total_mb': {
      'first': totals[0],
      'last': totals[-1],
      'max': max(totals),
      'slope_per_edit': round(slope(totals[1:]), 2),
    },
  }


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--edits', type=int, default=50)
  parser.add_argument('--steps', type=int, default=20, help='--train-steps of the watch')
  parser.add_argument('--json', help='where the figures go as JSON')
  args = parser.parse_args(argv)
  with tempfile.TemporaryDirectory(prefix='watch-memory-') as scratch:
    figures = measure(scratch, args.edits, args.steps)
  print(json.dumps({key: figures[key] for key in figures if key != 'runs'}, indent=2))
  if args.json:
    with open(args.json, 'w') as f:
      json.dump(figures, f, indent=2)
  return figures


if __name__ == '__main__':
  main()
