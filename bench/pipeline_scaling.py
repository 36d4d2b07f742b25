"""The pipeline as data grows: per component, the fixed seconds and the marginal µs per image or
row, for the project's pipeline and, on CSV, with TFX's stock CsvExampleGen, in one invocation.

  .venv/bin/python -m bench.pipeline_scaling [--quick] [--json OUT] [--chart PNG]

Each run is `pipeline.py run` in a fresh process and a fresh output folder, with every default
(`--beam-mode auto` included) except `--train-steps` (TRAIN_STEPS, so that the Trainer's work is
the same at every size). A component's seconds are its execution's in ML Metadata (registered
to completed, as the orchestrator sees it); the run's wall time is the process's. Data:
  images    the embedded digits (1,797 8×8 PNGs: the default job), and copies of them with pixel
            noise up to IMAGES (no TFX component reads image folders: the project's own only);
  csv       10 float columns and a label learnable from them, ROWS (about 97 bytes a row), run
            with the project's Arrow CsvExampleGen and, up to STOCK_ROWS, with TFX's
            (`--csv-reader tfx`): every other component is the same in both.
Per component and kind, a least-squares line through (size, seconds) gives fixed_s (its
intercept: start-up, imports, a model's compile) and marginal_us (its slope: what one more image
or row costs), max_residual_s the farthest a run lies from that line (every size runs once).
small_csv_over_digits is the 1,000-row CSV run's wall time over the digits run's (the first
pair; SMALL_PAIRS pairs give its spread).
The ExampleGen-only comparison (TFX's CsvExampleGen, the project's and the one-core ceiling at
200k and 1M rows) is bench.csv_example_gen's, run within this invocation (csv_200k, csv_1m).
--quick: two small sizes of each, a few training steps, CSV figures at a hundredth (tests).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIGITS = 1_797
IMAGES = (DIGITS, 10_000, 50_000)
ROWS = (1_000, 30_000, 200_000, 1_000_000)
STOCK_ROWS = (1_000, 30_000, 200_000)  # TFX's CsvExampleGen takes ~6 min alone on 1M rows
TRAIN_STEPS = 200
QUICK = {'images': (300, 600), 'rows': (300, 600), 'stock_rows': (300, 600), 'train_steps': 10}
# --quick's 10 steps train no usable model, on small splits: every run is pushed all the same
# (Pusher's work kept).
SMALL_EVAL = ('--min-eval-examples', '0', '--min-eval-class-examples', '0')
QUICK_BLESSING = ('--min-accuracy', '0', '--allow-missed-classes', *SMALL_EVAL)
SMALL_CSV_ROWS = 1_000
SMALL_PAIRS = 2  # the digits and 1,000-row runs, each pair back to back (--quick: one)
SHOWN_FROM_S = 0.5  # the chart's least component seconds


def write_images(folder: str, count: int) -> str:
  """count digits as <folder>/<digit>/<index>.png: the embedded 1,797, then copies of them with
  uniform pixel noise of ±8 (each file its own bytes, so each its own split hash)."""
  import numpy as np
  import PIL.Image
  from sklearn.datasets import load_digits

  digits = load_digits()
  rng = np.random.default_rng(0)
  for index in range(count):
    pixels = digits.images[index % len(digits.images)] * (255.0 / 16.0)
    if index >= len(digits.images):
      pixels = np.clip(pixels + rng.integers(-8, 9, pixels.shape), 0, 255)
    class_dir = os.path.join(folder, str(digits.target[index % len(digits.images)]))
    os.makedirs(class_dir, exist_ok=True)
    image = PIL.Image.fromarray(np.round(pixels).astype(np.uint8), 'L')
    image.save(os.path.join(class_dir, f'{index:06d}.png'))
  return folder


def component_seconds(output: str) -> Dict[str, float]:
  """Each component's seconds in the one run recorded in output's ML Metadata."""
  import config as cfg
  from metadata import run_reader

  store = run_reader.open_store(os.path.join(output, cfg.METADATA_FILE))
  seconds = {}
  for execution in store.get_executions():
    if run_reader.is_resolver(execution):
      continue
    node = run_reader.node_id(store, execution)
    took = (execution.last_update_time_since_epoch - execution.create_time_since_epoch) / 1000
    seconds[node] = seconds.get(node, 0.0) + took
  return seconds


def timed_run(data: str, output: str, train_steps: int, *extra: str) -> dict:
  """One `pipeline.py run` process: its wall seconds and its components' seconds."""
  started = time.monotonic()
  subprocess.run(
    [sys.executable, 'pipeline.py', 'run', '--data', data, '--output', output]
    + ['--train-steps', str(train_steps), *extra],
    cwd=ROOT,
    check=True,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
  )
  return {'wall_s': time.monotonic() - started, 'components': component_seconds(output)}


def fit(points: List[Tuple[int, float]]) -> dict:
  """The least-squares line seconds = fixed_s + marginal_us * size / 1e6 through the points, and
  the farthest a point lies from it (max_residual_s: how well one line describes the runs)."""
  import numpy as np

  sizes, seconds = np.array([p[0] for p in points], float), np.array([p[1] for p in points])
  slope, intercept = np.polyfit(sizes, seconds, 1)
  residual = np.abs(seconds - (intercept + slope * sizes)).max()
  return {
    'fixed_s': float(intercept),
    'marginal_us': float(slope * 1e6),
    'max_residual_s': float(residual),
  }


def cost_model(runs: Dict[int, dict]) -> Dict[str, dict]:
  """Per component (and 'wall'), fixed_s and marginal_us over runs[size]."""
  components = sorted({c for run in runs.values() for c in run['components']})
  model = {
    c: fit([(n, run['components'][c]) for n, run in runs.items() if c in run['components']])
    for c in components
  }
  model['wall'] = fit([(n, run['wall_s']) for n, run in runs.items()])
  return model


def measure(quick: bool = False) -> dict:
  """Every figure of one invocation."""
  from bench import csv_example_gen

  images = QUICK['images'] if quick else IMAGES
  rows = QUICK['rows'] if quick else ROWS
  stock_rows = QUICK['stock_rows'] if quick else STOCK_ROWS
  steps = QUICK['train_steps'] if quick else TRAIN_STEPS
  plan = (
    [('images', 'project', n) for n in images]
    + [('csv', 'project', n) for n in rows]
    + [('csv', 'stock', n) for n in stock_rows]
  )
  runs: Dict[Tuple[str, str], Dict[int, dict]] = {}
  with tempfile.TemporaryDirectory() as scratch:
    written: Dict[Tuple[str, int], str] = {}  # (kind, size) -> its data, written once
    for index, (kind, reader, n) in enumerate(plan):
      if (kind, n) not in written:
        path = os.path.join(scratch, f'{kind}{n}')
        written[(kind, n)] = (
          write_images(path, n)
          if kind == 'images'
          else csv_example_gen.write_csv(path + '.csv', n, learnable=True)
        )
      data = written[(kind, n)]
      extra = ('--label', 'label') if kind == 'csv' else ()
      extra += ('--csv-reader', 'tfx') if reader == 'stock' else ()
      extra += QUICK_BLESSING if quick else ()
      run = timed_run(data, os.path.join(scratch, f'out{index}'), steps, *extra)
      runs.setdefault((kind, reader), {})[n] = run
      slowest = max(run['components'], key=run['components'].get)
      print(
        f'[{index + 1}/{len(plan)}] {kind} {n:,} ({reader}): {run["wall_s"]:.1f} s, slowest '
        f'{slowest} {run["components"][slowest]:.1f} s',
        flush=True,
      )
    smallest = min(rows, key=lambda n: abs(n - SMALL_CSV_ROWS))
    small_pairs = [(runs[('images', 'project')][images[0]], runs[('csv', 'project')][smallest])]
    for again in range(0 if quick else SMALL_PAIRS - 1):  # the target's ratio, measured again
      pair = []
      for kind, n in (('images', images[0]), ('csv', smallest)):
        extra = ('--label', 'label') if kind == 'csv' else ()
        out = os.path.join(scratch, f'again{again}{kind}')
        pair.append(timed_run(written[(kind, n)], out, steps, *extra))
      small_pairs.append(tuple(pair))
      print(f'small pair again: {pair[0]["wall_s"]:.1f} s, {pair[1]["wall_s"]:.1f} s', flush=True)
  csv_part = csv_example_gen.measure(quick, repeats=1 if quick else 2)
  small_ratios = [csv_run['wall_s'] / digits['wall_s'] for digits, csv_run in small_pairs]
  return {
    'cores': os.cpu_count(),
    'train_steps': steps,
    'sizes': {'images': list(images), 'csv': list(rows), 'csv_stock': list(stock_rows)},
    'runs': {
      f'{kind}_{reader}': {str(n): run for n, run in by_size.items()}
      for (kind, reader), by_size in runs.items()
    },
    'cost': {f'{kind}_{reader}': cost_model(by_size) for (kind, reader), by_size in runs.items()},
    'small_csv_over_digits': (
      runs[('csv', 'project')][smallest]['wall_s']
      / runs[('images', 'project')][images[0]]['wall_s']
    ),
    'small_csv_over_digits_sizes': {'csv_rows': smallest, 'images': images[0]},
    'small_csv_over_digits_rounds': [min(small_ratios), max(small_ratios)],
    'csv_200k': csv_part['csv_200k'],
    'csv_1m': csv_part['csv_1m'],
    'csv_example_gen': csv_part,
  }


def report(figures: dict) -> None:
  """The cost table and the targets as lines."""
  print(
    f'{figures["cores"]} cores, {figures["train_steps"]} training steps; per component: fixed s '
    '+ marginal µs per image / row (least squares over the sizes)'
  )
  for name, model in figures['cost'].items():
    sizes = ', '.join(f'{int(n):,}' for n in figures['runs'][name])
    print(f'  {name} ({sizes}):')
    for component, line in sorted(model.items(), key=lambda kv: -kv[1]['marginal_us']):
      print(
        f'    {component:22s} {line["fixed_s"]:7.1f} s + {line["marginal_us"]:9.1f} µs '
        f'(farthest run {line["max_residual_s"]:.1f} s off)'
      )
  low, high = figures['small_csv_over_digits_rounds']
  print(
    f'  small_csv_over_digits = {figures["small_csv_over_digits"]:.2f} (pairs {low:.2f}–'
    f'{high:.2f}; target <= 1.2)'
  )
  from bench import csv_example_gen

  csv_example_gen.report(figures['csv_example_gen'])


def draw(figures: dict, path: str) -> None:
  """Seconds per component against data size (log-log), a panel per kind; components that never
  took SHOWN_FROM_S are left out (the gates and checks: tens of milliseconds)."""
  from matplotlib.figure import Figure
  from matplotlib.ticker import FuncFormatter, NullFormatter

  names = list(figures['cost'])
  figure = Figure(figsize=(5.2 * len(names), 4.4))
  plain = FuncFormatter(lambda value, _: f'{value:,.10g}')
  # One colour per component in every panel (both ExampleGens one colour).
  same = lambda component: component.replace('Csv', 'Image')
  every = {
    same(c) for runs in figures['runs'].values() for r in runs.values() for c in r['components']
  }
  colours = {c: f'C{i % 10}' for i, c in enumerate(sorted(every))}
  for axis, name in zip(figure.subplots(1, len(names), squeeze=False)[0], names):
    runs = figures['runs'][name]
    sizes = [int(n) for n in runs]
    seconds = {'wall': [run['wall_s'] for run in runs.values()]}
    for run in runs.values():
      for component, took in run['components'].items():
        seconds.setdefault(component, []).append(took)
    for component, values in sorted(seconds.items()):
      if len(values) == len(sizes) and max(values) >= SHOWN_FROM_S:
        style = (
          dict(color='black', linestyle='--')
          if component == 'wall'
          else dict(marker='o', color=colours[same(component)])
        )
        axis.plot(sizes, values, label=component, **style)
    axis.set(xscale='log', yscale='log', title=name.replace('_', ' '), ylabel='seconds')
    axis.set_xlabel('images' if name.startswith('images') else 'rows')
    axis.set_xticks(sizes)
    axis.xaxis.set_major_formatter(plain)
    axis.yaxis.set_major_formatter(plain)
    axis.xaxis.set_minor_formatter(NullFormatter())
    axis.yaxis.set_minor_formatter(NullFormatter())
    axis.legend(fontsize=7, loc='upper left')
  figure.tight_layout()
  figure.savefig(path, dpi=110)


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument('--quick', action='store_true', help='small sizes, few steps (tests)')
  parser.add_argument('--json', help='also write the figures here')
  parser.add_argument('--chart', help='also draw seconds per component against size here (PNG)')
  args = parser.parse_args(argv)
  figures = measure(args.quick)
  report(figures)
  from bench import figures as figures_file

  figures_file.save(figures, args.json)
  if args.chart:
    draw(figures, args.chart)


if __name__ == '__main__':
  main()
