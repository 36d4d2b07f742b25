"""The edit → run loop: `pipeline.py run` against the plain Keras script an ML engineer would
write instead (bench/plain_keras.py), cold, with nothing changed, after a model edit and after a
data change.

  .venv/bin/python -m bench.edit_loop [--quick] [--rounds N] [--json OUT]

Every figure is a whole process timed from its start to its exit (wall clock, imports included,
as a user waits for it). Each round, on the embedded digits (the 1,797 8x8 PNGs `make run`
writes, cli.inputs.default_data.write_digits) with the default options (600 train steps of 64; --quick: 60
for the pipeline and the plain script alike):
  import_tensorflow       `python -c "import tensorflow"`: the floor of any TensorFlow process;
  plain                   `python -m bench.plain_keras DIGITS OUT --steps S`: read, train,
                          evaluate once, model.export;
  cold                    `pipeline.py run --output OUT` on a fresh output folder;
  first_rerun_after_push  the same command again, nothing changed (the cold run pushed, so the
                          serving model is new: what re-runs because of that, re-runs);
  nothing_changed         the same command once more;
  model_edit              `--model COPY.py` (a copy of trainer/models/cnn.py, the default image
                          model) once untimed, then a comment line appended to the copy, timed;
  data_change             `--data COPY` (a copy of the digits folder) once untimed, then one new
                          distinct digit added (the mean of two digits of one class), timed;
  watch_model_edit        `pipeline.py run --watch --data COPY --model COPY.py` started once
                          (its first run untimed), then a comment appended to the model copy:
                          from the save to the watch's next `watching:` line (the summary and
                          report written);
  watch_data_change       the same watch, then another new digit added to the data copy.
Floors from the same round: `import tensorflow` plus components' seconds of one run (their
`[i/n] X done in S s` lines), for a watched run its components alone (the process is warm).
The pipeline runs of a round share one output folder; the plain script and the import floor run
before the pipeline in odd rounds and after it in even ones, and the model edit and the data
change swap places too, so that a slow stretch of the machine hits all alike.
Ratios to the plain script are medians over medians, each with its lowest and highest round
(the ratio taken round by round). Each pipeline run's last_run.json (its summary's wall time,
the components executed and cached) and its printed `[i/n] X done in S s` lines are kept; the
cold run is broken down by phase: each component's seconds, the process's seconds outside the
summary's wall time (before the first component + after the last: interpreter start, imports,
the data check, building the DAG; the run report, the summary, the interpreter's exit), and the
same split by the run log's timestamps of the first component's start and the last one's end.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_STEPS, QUICK_STEPS = 600, 60  # config.py's train_steps; --quick
MODEL_FILE = os.path.join(ROOT, 'trainer', 'models', 'cnn.py')  # the default image model
PIPELINE_OK = (0, 3)  # 3: trained but not blessed (nothing pushed), still a whole run
TIMED = (  # (figure, what it is) in the order printed
  ('import_tensorflow', 'python -c "import tensorflow" (floor)'),
  ('plain', 'plain Keras script'),
  ('cold', 'pipeline, cold (fresh output)'),
  ('first_rerun_after_push', 'pipeline, first re-run after a push'),
  ('nothing_changed', 'pipeline, nothing changed'),
  ('model_edit', 'pipeline, after a model-file edit'),
  ('data_change', 'pipeline, after a data change'),
  ('watch_model_edit', 'run --watch, a model-file save'),
  ('watch_data_change', 'run --watch, one image added'),
)
UNTIMED = ('model_file_first_run', 'data_copy_first_run')  # the warm-up runs (also recorded)
RATIOS = {
  'cold_over_plain': 'cold',
  'first_rerun_after_push_over_plain': 'first_rerun_after_push',
  'nothing_changed_over_plain': 'nothing_changed',
  'model_edit_over_plain': 'model_edit',
  'data_change_over_plain': 'data_change',
  'watch_model_edit_over_plain': 'watch_model_edit',
  'watch_data_change_over_plain': 'watch_data_change',
  'import_tensorflow_over_plain': 'import_tensorflow',
  'floor_over_plain': 'floor',
  'model_edit_components_over_plain': 'model_edit_components',
  'cold_components_over_plain': 'cold_components',
  'watch_floor_over_plain': 'watch_floor',
  'watch_data_components_over_plain': 'watch_data_components',
}
# Floors from the same round: `import tensorflow` plus components' seconds of one run.
FLOORS = {  # figure: (run, its components counted (None: all), what it is)
  'floor': ('model_edit', ('Trainer',), "floor: import tensorflow + the edit's Trainer"),
  'model_edit_components': ('model_edit', None, 'import tensorflow + every edit component'),
  'cold_components': ('cold', None, 'import tensorflow + every cold component'),
  'watch_floor': (
    'watch_model_edit',
    ('Trainer', 'Evaluator'),
    "--watch's edit: Trainer + Evaluator",
  ),
  'watch_data_components': ('watch_data_change', None, "--watch's image: every component"),
}
TARGETS = {  # all ceilings
  'nothing_changed_over_plain': 0.35,
  'first_rerun_after_push_over_plain': 0.35,
  'model_edit_over_plain': 1.3,
  'cold_over_plain': 1.8,
  'watch_model_edit_over_plain': 0.8,
  'watch_data_change_over_plain': 1.0,
}
DONE = re.compile(r'^\[\d+/\d+\] (\S+) done in ([\d.]+) s \((\w+)\)$')
_LOG_NODE = re.compile(
  r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO absl: Component (\S+) is (running|finished)\.$'
)


def _timed(argv: list, ok=(0,)) -> dict:
  """Runs argv from the repository root: its seconds (start to exit), wall-clock start and end,
  exit code and stdout; raises when the exit code is not in `ok`."""
  start_wall, started = time.time(), time.monotonic()
  done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
  seconds = time.monotonic() - started
  if done.returncode not in ok:
    tail = '\n'.join((done.stdout + done.stderr).strip().splitlines()[-15:])
    raise RuntimeError(f'{" ".join(argv[1:4])}… exited {done.returncode}:\n{tail}')
  return {
    'seconds': seconds,
    'start': start_wall,
    'end': start_wall + seconds,
    'exit_code': done.returncode,
    'stdout': done.stdout,
  }


def import_tensorflow() -> dict:
  return {'seconds': _timed([sys.executable, '-c', 'import tensorflow'])['seconds']}


def plain(digits: str, out: str, steps: int) -> dict:
  """The plain Keras script as its own process; its phases from its last line."""
  argv = [sys.executable, '-m', 'bench.plain_keras', digits, out]
  run = _timed(argv + (['--steps', str(steps)] if steps != DEFAULT_STEPS else []))
  phases = json.loads(run['stdout'].strip().splitlines()[-1])
  return {'seconds': run['seconds'], 'script': phases}


def _log_times(log_path: str) -> tuple:
  """(wall-clock time the first component started, the last one finished) from a run log."""
  first = last = None
  try:
    with open(log_path, errors='replace') as f:
      for line in f:
        found = _LOG_NODE.match(line.rstrip('\n'))
        if not found:
          continue
        at = datetime.datetime.strptime(found.group(1), '%Y-%m-%d %H:%M:%S,%f').timestamp()
        if found.group(3) == 'running' and first is None:
          first = at
        elif found.group(3) == 'finished':
          last = at
  except OSError:
    pass
  return first, last


def pipeline(output: str, steps: int, *extra: str) -> dict:
  """One `pipeline.py run` process on `output`, with what its summary and log say."""
  argv = [sys.executable, 'pipeline.py', 'run', '--output', output, *extra]
  run = _timed(
    argv + (['--train-steps', str(steps)] if steps != DEFAULT_STEPS else []), PIPELINE_OK
  )
  record = {'seconds': run['seconds'], 'exit_code': run['exit_code']}
  record['component_seconds'] = {}
  record['component_how'] = {}
  for line in run['stdout'].splitlines():
    found = DONE.match(line.strip())
    if found:
      record['component_seconds'][found.group(1)] = float(found.group(2))
      record['component_how'][found.group(1)] = found.group(3)
  if 'components: none run: ' in run['stdout']:
    # Nothing changed since the last run (cli/unchanged.py): nothing ran, and last_run.json is
    # still that run's.
    record.update(unchanged=True, executed=[], wall_seconds=0.0)
    return record
  try:
    with open(os.path.join(output, 'last_run.json')) as f:
      summary = json.load(f)
  except (OSError, ValueError):
    summary = {}
  for key in ('wall_seconds', 'components', 'executed', 'cached', 'why_executed', 'blessed'):
    if key in summary:
      record[key] = summary[key]
  record['pushed_to'] = summary.get('pushed_to')
  record['eval_accuracy'] = summary.get('eval_accuracy')
  phases = (summary.get('training') or {}).get('phases') or []
  if phases:
    record['train_seconds'] = sum(p.get('seconds') or 0 for p in phases)
  if 'wall_seconds' in summary:
    # before the first component + after the last, as the summary counts
    record['outside_summary_seconds'] = run['seconds'] - summary['wall_seconds']
  first, last = _log_times(summary.get('log', ''))
  if first is not None and last is not None:
    record['before_first_component_seconds'] = first - run['start']
    record['after_last_component_seconds'] = run['end'] - last
  return record


def new_digit(folder: str, name: str) -> str:
  """A digit not in the embedded set: the mean of two 3s of scikit-learn's digits (distinct
  content, still a 3), written as <folder>/3/<name>.png like cli.inputs.default_data.write_digits."""
  import numpy as np
  import PIL.Image
  from sklearn.datasets import load_digits

  digits = load_digits()
  threes = digits.images[digits.target == 3]
  pixels = (threes[0] + threes[-1]) / 2
  gray = np.round(pixels * (255.0 / 16.0)).astype(np.uint8)
  path = os.path.join(folder, '3', f'{name}.png')
  PIL.Image.fromarray(gray, 'L').save(path)
  return path


WATCHING = 'watching: the next save'  # the line --watch prints once a run is answered


def watched_edits(output: str, steps: int, data: str, model: str, number: int) -> dict:
  """`run --watch` on `data` and `model`: after its first run, a model-file save, then one new
  image, each timed from the save to the next WATCHING line; Ctrl-C ends it."""
  import signal

  argv = [sys.executable, 'pipeline.py', 'run', '--watch', '--output', output]
  argv += ['--data', data, '--model', model]
  argv += ['--train-steps', str(steps)] if steps != DEFAULT_STEPS else []
  watcher = subprocess.Popen(
    argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1
  )

  def answered() -> str:
    lines = []
    for line in watcher.stdout:
      lines.append(line)
      if line.startswith(WATCHING):
        return ''.join(lines)
    raise RuntimeError('run --watch ended before answering:\n' + ''.join(lines[-15:]))

  found = {}
  try:
    answered()  # the first run
    for figure, save in (
      ('watch_model_edit', lambda: open(model, 'a').write('# a watched edit\n')),
      ('watch_data_change', lambda: new_digit(data, f'watched{number}')),
    ):
      started = time.monotonic()
      save()
      shown = answered()
      done = [m for m in map(DONE.match, shown.splitlines()) if m]
      found[figure] = {
        'seconds': time.monotonic() - started,
        'executed': [m.group(1) for m in done if m.group(3) == 'executed'],
        'component_seconds': {m.group(1): float(m.group(2)) for m in done},
      }
  finally:
    watcher.send_signal(signal.SIGINT)
    watcher.wait(timeout=120)
  return found


def one_round(number: int, scratch: str, digits: str, steps: int) -> dict:
  """Every run of one round: {figure: record}."""
  runs = {}
  here = os.path.join(scratch, f'round{number}')
  os.makedirs(here)
  output = os.path.join(here, 'output')

  def outside():
    runs['import_tensorflow'] = import_tensorflow()
    runs['plain'] = plain(digits, os.path.join(here, 'plain_model'), steps)

  def model_edit():
    copy = os.path.join(here, 'model', 'cnn_copy.py')
    os.makedirs(os.path.dirname(copy))
    shutil.copyfile(MODEL_FILE, copy)
    runs['model_file_first_run'] = pipeline(output, steps, '--model', copy)
    with open(copy, 'a') as f:
      f.write('# an edit: this comment line\n')
    runs['model_edit'] = pipeline(output, steps, '--model', copy)

  def data_change():
    copy = os.path.join(here, 'digits')
    shutil.copytree(digits, copy)
    runs['data_copy_first_run'] = pipeline(output, steps, '--data', copy)
    new_digit(copy, f'new{number}')
    runs['data_change'] = pipeline(output, steps, '--data', copy)

  outside_first = number % 2 == 0  # rounds 1, 3, …: the plain script first
  if outside_first:
    outside()
  runs['cold'] = pipeline(output, steps)
  runs['first_rerun_after_push'] = pipeline(output, steps)
  runs['nothing_changed'] = pipeline(output, steps)
  for step in (model_edit, data_change) if outside_first else (data_change, model_edit):
    step()
  runs.update(
    watched_edits(
      output,
      steps,
      os.path.join(here, 'digits'),
      os.path.join(here, 'model', 'cnn_copy.py'),
      number,
    )
  )
  if not outside_first:
    outside()
  shutil.rmtree(here, ignore_errors=True)
  return runs


def floor_seconds(runs: dict, run: str, counted) -> float:
  """`import tensorflow` (not for a watched run: its process is warm) plus the seconds of `run`'s
  components named in `counted` (None: all): what that run would cost with no process start,
  import or report of its own."""
  components = runs[run]['component_seconds']
  names = components if counted is None else counted
  imports = 0.0 if run.startswith('watch_') else runs['import_tensorflow']['seconds']
  return imports + sum(components[name] for name in names)


def _ratios(seconds: dict) -> dict:
  return {name: seconds[figure] / seconds['plain'] for name, figure in RATIOS.items()}


def figures_of(rounds: list, steps: int, images: int) -> dict:
  """The figures (medians, ratios, spreads, targets, the cold run's phases) of the rounds."""
  from bench import figures as figures_file

  kinds = [k for k, _ in TIMED] + list(UNTIMED)
  seconds_rounds = {k: [r[k]['seconds'] for r in rounds] for k in kinds}
  for figure, (run, counted, _) in FLOORS.items():
    seconds_rounds[figure] = [floor_seconds(r, run, counted) for r in rounds]
  seconds = {k: statistics.median(v) for k, v in seconds_rounds.items()}
  ratios = _ratios(seconds)
  spread = {
    name: figures_file.ratio_rounds(seconds_rounds[figure], seconds_rounds['plain'])
    for name, figure in RATIOS.items()
  }
  cold = [r['cold'] for r in rounds]
  components = list(cold[0]['component_seconds'])
  breakdown = {
    'component_seconds': {
      c: statistics.median(run['component_seconds'].get(c, 0.0) for run in cold) for c in components
    },
    'process_seconds': seconds['cold'],
  }
  for key in (
    'wall_seconds',
    'outside_summary_seconds',
    'before_first_component_seconds',
    'after_last_component_seconds',
    'train_seconds',
  ):
    if all(key in run for run in cold):
      breakdown[key] = statistics.median(run[key] for run in cold)
  return {
    'images': images,
    'cores': os.cpu_count(),
    'rounds': len(rounds),
    'train_steps': steps,
    'seconds': seconds,
    'seconds_rounds': seconds_rounds,
    'ratios': ratios,
    'ratios_rounds': spread,  # [lowest, highest] of the ratio taken round by round
    'targets': {k: {'target': t, 'met': ratios[k] <= t} for k, t in TARGETS.items()},
    'cold_breakdown': breakdown,
    'runs': {k: [r[k] for r in rounds] for k in kinds},
  }


def _print(figures: dict) -> None:
  seconds, ratios, spread = figures['seconds'], figures['ratios'], figures['ratios_rounds']
  by_figure = {figure: name for name, figure in RATIOS.items()}
  print(
    f'edit → run loop on the embedded digits ({figures["images"]:,} images), '
    f'{figures["train_steps"]} train steps of 64, '
    f'{figures["cores"]} cores, median of {figures["rounds"]} round(s), whole processes:'
  )
  print(f'  {"run":42s} {"seconds":>8s}  {"over plain (rounds)":22s} target')
  for figure, label in TIMED:
    name = by_figure.get(figure)
    ratio = f'{ratios[name]:.2f} ({spread[name][0]:.2f}–{spread[name][1]:.2f})' if name else ''
    target = figures['targets'].get(name)
    verdict = f'<= {target["target"]}: {"met" if target["met"] else "NOT met"}' if target else ''
    print(f'  {label:42s} {seconds[figure]:8.1f}  {ratio:22s} {verdict}'.rstrip())
  first = {k: figures['runs'][k][0] for k, _ in TIMED[2:] if 'exit_code' in figures['runs'][k][0]}
  for figure, run in first.items():
    executed = run.get('executed', [])
    print(
      f'  {figure}: exit {run["exit_code"]}'
      + (' (not blessed)' if run['exit_code'] == 3 else '')
      + f', {len(executed)} executed'
      + (f' ({", ".join(executed)})' if 0 < len(executed) < len(run.get('components', {})) else '')
      + f', {len(run.get("cached", []))} cached; summary wall {run.get("wall_seconds", "?")} s'
      + (
        f', outside it {run["outside_summary_seconds"]:.1f} s'
        if 'outside_summary_seconds' in run
        else ''
      )
      + (f'; pushed to {os.path.basename(run["pushed_to"])}' if run.get('pushed_to') else '')
    )
  for figure, (_, _, label) in FLOORS.items():
    name = by_figure[figure]
    print(
      f'  {label:42s} {seconds[figure]:8.1f}  '
      f'{ratios[name]:.2f} ({spread[name][0]:.2f}–{spread[name][1]:.2f})'
    )
  b = figures['cold_breakdown']
  parts = [f'{c} {s:.1f}' for c, s in b['component_seconds'].items()]
  print(f'cold run by phase (s, median): {b["process_seconds"]:.1f} in the process')
  if 'outside_summary_seconds' in b:
    print(
      f'  summary wall time {b["wall_seconds"]:.1f}; outside it (before the first component + '
      f'after the last) {b["outside_summary_seconds"]:.1f}'
    )
  if 'before_first_component_seconds' in b:
    print(
      f'  by the run log: before the first component {b["before_first_component_seconds"]:.1f}, '
      f'after the last {b["after_last_component_seconds"]:.1f}'
    )
  print('  components: ' + ', '.join(parts))
  plain_runs = figures['runs']['plain']
  script = {
    k: statistics.median(r['script'][k] for r in plain_runs)
    for k in plain_runs[0]['script']
    if k.endswith('_seconds')
  }
  print(
    'plain script by phase (s, median; from its first line): '
    + ', '.join(f'{k[: -len("_seconds")]} {v:.1f}' for k, v in script.items())
    + f'; the pipeline Trainer trained for {b.get("train_seconds", float("nan")):.1f}'
  )


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument('--quick', action='store_true', help=f'1 round, {QUICK_STEPS} train steps')
  parser.add_argument('--rounds', type=int, default=0, help='default 3 (quick: 1)')
  parser.add_argument('--json', help='also write the figures here')
  parser.add_argument('--train-steps', type=int, default=0, help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  from bench import figures as figures_file
  from cli.inputs import default_data

  rounds = args.rounds or (1 if args.quick else 3)
  steps = args.train_steps or (QUICK_STEPS if args.quick else DEFAULT_STEPS)
  done = []
  with tempfile.TemporaryDirectory(prefix='edit-loop-') as scratch:
    digits = default_data.write_digits(os.path.join(scratch, 'digits'))
    images = sum(len(files) for _, _, files in os.walk(digits))
    for number in range(rounds):
      runs = one_round(number, scratch, digits, steps)
      done.append(runs)
      print(
        f'round {number + 1}/{rounds}: '
        + ', '.join(f'{k} {runs[k]["seconds"]:.1f} s' for k, _ in TIMED),
        flush=True,
      )
  figures = figures_of(done, steps, images)
  _print(figures)
  figures_file.save(figures, args.json)
  return figures


if __name__ == '__main__':
  main()
