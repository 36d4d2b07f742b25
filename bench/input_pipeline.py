"""The Trainer's input function against the work that cannot be skipped, the seed recipes and
TFX's reader; the in-memory cache; camera-size photos prepared once.

  .venv/bin/python -m bench.input_pipeline [--quick] [--only SET] [--seed-shuffle N] [--json OUT]
                                           [--plot OUT.png]

One process per data set (bench/input_data.py: jpeg, raw, tabular, photos), one after another.
In it, every pipeline of bench/recipes.py is opened once, then measured several times
interleaved with the others (settle, untimed pull, timed window: see rate()); medians are
reported as examples/s, MB/s and process CPU milliseconds per 1,000 examples (all threads,
measured around the same window), with ratios to the ceiling and to each baseline, and each
ratio's lowest and highest round (the two pipelines measured in the same round, seconds apart);
every round's rate and the process's peak memory are in the JSON. jpeg and
tabular also run the project with its in-memory cache (after its first epoch) against the same
decoded data already in memory. Then the input-stall fraction of the project's pipeline: a
simulated accelerator takes each batch and sleeps for a fixed step time set to 50%, 80% and 100%
of the ceiling's rate (tabular batches of 1,024, so that the step is well above the timer's
resolution); the stall fraction is the share of wall time spent in next(). Its floor: the same
loop on an always-ready pipeline (one batch, repeated, prefetched) at 80 %, which measures what
next() itself costs after the step's sleep (~1 ms per call on 2 cores, whatever the batch).

photos: camera-size JPEGs (1600x1200) for a 224x224 model. The 000 recipe reads full-size
shards (decode + resize every epoch); the project reads shards that its ImageExampleGen
prepared once with --max-image-side PREPARED_SIDE (timed in a fresh process, imports excluded,
twice: with one Beam worker process per core, as `pipeline.py run` does by default, their
start-up included, and with --beam-mode in_memory, which costs less on small sets), and
the full-size shards too (decoded at the smallest DCT scale that covers 224x224). Per-epoch
seconds, the break-even point in epochs (preparation included), decode_jpeg at each DCT scale.
"""

import argparse
from functools import partial
import glob
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

from bench import chart, example_gen, input_data, recipes
from bench import figures as figures_file
import config as cfg
from contracts import image_record
from trainer import diagnosis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = ('jpeg', 'raw', 'tabular', 'photos')
BASELINES = ('seed_000', 'seed_004', 'tfx_stock', 'tfx_stock_per_record')
IMAGE_ONLY = ('seed_004', 'tfx_stock_per_record')  # tabular data has no image to decode
CACHED_SETS = ('jpeg', 'tabular')
STALL_BATCH = {'tabular': 1024}  # else recipes.BATCH
DEMANDS = (0.5, 0.8, 1.0)
FLOOR_DEMAND = 0.8
PHOTOS_SEED_SHUFFLE = 600  # seed_000's buffer on photos: 600 decoded images are 360 MB already
PREPARED_SIDE = 300  # --max-image-side for the photos: 300x225, the model takes 224x224
DECODE_SCALES = (1, 2, 4, 8)
TARGETS = {  # the targets, each a (bound, 'min' or 'max') on a measured figure
  'project_over_ceiling': {'jpeg': 0.90, 'raw': 0.90, 'tabular': 0.85},
  'cpu_over_ceiling': 1.15,
  'cpu_over_seed_000': 0.5,
  'stall_80': 0.05,
  'cached_over_memory': 0.9,
  'photos_epoch_speedup': 10.0,
  'photos_break_even_epochs': 3.0,
}
FULL = dict(
  jpeg=6000,
  raw=3000,
  tabular_copies=10,
  photos=1500,
  seed_shuffle=10_000,
  repeats=5,
  window_s=2.0,
  settle_s=0.5,
  stall_s=4.0,
)
QUICK = dict(  # for tests of the report's shape, not for figures
  jpeg=400,
  raw=200,
  tabular_copies=1,
  photos=20,
  seed_shuffle=500,  # the recipe's 10,000 decoded images take ~6 GB and a while to fill
  repeats=1,
  window_s=0.3,
  settle_s=0.15,
  stall_s=0.5,
)


def rate(batches, window_s: float, settle_s: float, batch: int = recipes.BATCH):
  """(examples/s, process CPU ms per 1,000 examples) over a timed window.

  Every pipeline stays open between its windows, so first it waits `settle_s` (the previous
  pipeline's background threads finish refilling their buffers instead of stealing CPU from
  this window), then pulls untimed for `settle_s` (this pipeline's own full prefetch buffers
  would otherwise inflate the rate), then times.
  """
  time.sleep(settle_s)
  started = time.monotonic()
  while time.monotonic() - started < settle_s:
    next(batches)
  count, started, cpu = 0, time.monotonic(), time.process_time()
  while time.monotonic() - started < window_s:
    next(batches)
    count += batch
  cpu, wall = time.process_time() - cpu, time.monotonic() - started
  return count / wall, cpu * 1e6 / count


def stall_fraction(batches, step_s: float, duration_s: float) -> float:
  """Share of wall time blocked in next() when each batch takes step_s to consume (the
  Trainer's input check measures the same way: trainer/diagnosis.pull)."""
  _, waited, wall = diagnosis.pull(batches, duration_s, step_s)
  return waited / wall


def _rounds(label: str, names, settings: dict, window):
  """settings['repeats'] rounds of window(name) → (examples/s, CPU ms per 1k), each round taking
  every name in turn: ({name: median examples/s}, {name: median CPU ms per 1k}, {name: every
  round's examples/s, in order})."""
  rates = {name: [] for name in names}
  cpu = {name: [] for name in names}
  for repeat in range(settings['repeats']):
    for name in names:
      examples_per_s, cpu_ms = window(name)
      rates[name].append(examples_per_s)
      cpu[name].append(cpu_ms)
    print(
      f'  {label} round {repeat + 1}/{settings["repeats"]}: '
      + ', '.join(f'{n} {rates[n][-1]:,.0f}' for n in names),
      flush=True,
    )
  median = lambda samples: {name: statistics.median(values) for name, values in samples.items()}
  return median(rates), median(cpu), rates


def memory_mb() -> dict:
  """This process's peak resident MB so far and the machine's available MB now: what tells memory
  pressure (seed_000's shuffle(10,000) of decoded floats holds ~6 GB) from a slow machine."""
  with open('/proc/meminfo') as f:
    available = next(int(line.split()[1]) for line in f if line.startswith('MemAvailable:'))
  peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  return {'peak_rss_mb': round(peak_kb / 1024), 'available_mb': round(available / 1024)}


def interleaved(label: str, iterators: dict, settings: dict):
  """_rounds() over iterators that stay open, warmed up once."""
  for batches in iterators.values():  # warm-up: shuffle buffers, tracing, first reads, caches
    rate(batches, 0.2, settings['settle_s'])
  window = lambda name: rate(iterators[name], settings['window_s'], settings['settle_s'])
  return _rounds(label, list(iterators), settings, window)


def one_at_a_time(label: str, makers: dict, settings: dict):
  """_rounds(), but each window on a fresh iterator that is deleted right after: slow
  pipelines (camera-size photos, ~20 ms each) would otherwise spend the other pipelines' windows
  refilling their own buffers, and every round read slower than the one before (179 → 35
  photos/s for seed_000 over 5 rounds)."""

  def window(name):
    batches = recipes.endless(makers[name]())
    next(batches)  # buffers filled, shuffle buffer included, before the settle and the window
    return rate(batches, settings['window_s'], settings['settle_s'])  # then deleted: it stops

  return _rounds(label, list(makers), settings, window)


def _close(iterators: dict) -> None:
  for batches in iterators.values():
    getattr(batches, 'close', lambda: None)()


def measure(data: input_data.DataSet, settings: dict, salvage_dir: str) -> dict:
  salvage_dir = f'{salvage_dir}/{data.name}'
  names = list(recipes.ceilings(data)) + (['bare_read'] if data.name == 'raw' else [])
  names += [b for b in BASELINES if not (b in IMAGE_ONLY and data.name == 'tabular')]
  names.append('project')
  iterators = {
    name: recipes.batches(name, data, salvage_dir, settings['seed_shuffle']) for name in names
  }
  if data.name in CACHED_SETS:  # one decoded copy in memory serves both orders
    stacked = recipes.decoded_in_memory(data, salvage_dir)
    iterators['project_cached'] = recipes.batches('project_cached', data, salvage_dir)
    for name, shuffled in (('memory', True), ('memory_in_order', False)):
      iterators[name] = recipes.endless(
        recipes.in_memory(stacked, data.name == 'tabular', shuffled)
      )
    names += ['project_cached', 'memory', 'memory_in_order']
    del stacked
  available_before = memory_mb()['available_mb']
  try:
    rates, cpu, rounds = interleaved(data.name, iterators, settings)
  finally:
    _close(iterators)
  iterators.clear()  # the cached and in-memory copies of the data set go now
  ceiling_names = [n for n in names if n.startswith('ceiling')]
  ceiling_kind = max(ceiling_names, key=rates.get)
  result = {
    'records': data.records,
    'megabytes': round(data.megabytes, 1),
    'bytes_per_record': round(data.bytes_per_record),
    'ceiling_kind': ceiling_kind,
    'ceiling': rates[ceiling_kind],
  }
  result.update({n: rates[n] for n in names if not n.startswith('ceiling')})
  result['rounds'] = {n: rounds[n] for n in names}
  result['memory_mb'] = dict(memory_mb(), available_mb_before=available_before)
  result['ceiling_variants'] = {n: rates[n] for n in ceiling_names}
  result['ceiling_variants_cpu_ms_per_1k'] = {n: cpu[n] for n in ceiling_names}
  result['cpu_ms_per_1k'] = dict(
    {n: cpu[n] for n in names if not n.startswith('ceiling')}, ceiling=cpu[ceiling_kind]
  )
  batch = STALL_BATCH.get(data.name, recipes.BATCH)
  result['stall_batch'] = batch
  stalled = recipes.endless(recipes.project(data, salvage_dir, batch=batch))
  rate(stalled, 0.2, settings['settle_s'], batch)
  for demand in DEMANDS:
    step = batch / (demand * result['ceiling'])
    result[f'stall_{round(demand * 100)}'] = stall_fraction(stalled, step, settings['stall_s'])
  ready = recipes.endless(recipes.always_ready(next(stalled)))
  step = batch / (FLOOR_DEMAND * result['ceiling'])
  result['stall_floor_80'] = stall_fraction(ready, step, settings['stall_s'])
  del stalled, ready
  compared = ('ceiling', 'bare_read') + BASELINES
  result['mb_per_s'] = {
    n: result[n] * data.bytes_per_record / 1e6 for n in compared + ('project',) if n in result
  }
  result['project_over'] = {n: result['project'] / result[n] for n in compared if n in result}
  rounds['ceiling'] = rounds[ceiling_kind]
  result['project_over_rounds'] = {
    n: figures_file.ratio_rounds(rounds['project'], rounds[n]) for n in compared if n in result
  }
  result['cpu_over'] = {
    n: result['cpu_ms_per_1k']['project'] / result['cpu_ms_per_1k'][n]
    for n in ('ceiling', 'seed_000')
  }
  if data.name in CACHED_SETS:
    result['cached_over_memory'] = result['project_cached'] / result['memory']
  return result


def photos(folder: str, settings: dict, salvage_dir: str) -> dict:
  full, tree = input_data.photos(folder, settings['photos'])
  print(
    f'photos: {full.records} JPEGs of {input_data.PHOTO_SIZE[0]}x{input_data.PHOTO_SIZE[1]}, '
    f'{full.megabytes:.0f} MB; preparing them with ImageExampleGen --max-image-side '
    f'{PREPARED_SIDE}',
    flush=True,
  )
  out = os.path.join(folder, 'photos_prepared')
  workers = os.cpu_count() or 1
  prepare_s = {  # Beam worker processes, and one process (what `run` picks for few images)
    mode: example_gen.measured_child(tree, f'{out}_{mode}', n, max_image_side=PREPARED_SIDE)[0]
    for mode, n in (('worker_processes', workers), ('in_memory', 0))
  }
  out += '_worker_processes'
  files = sorted(glob.glob(os.path.join(out, 'Split-*', 'data-*')))
  prepared = input_data.prepared('photos_prepared', files, full.records)
  salvage_dir = f'{salvage_dir}/photos'
  shuffle = min(PHOTOS_SEED_SHUFFLE, full.records)
  makers = {
    'seed_000': lambda: recipes.seed_000(full, shuffle=shuffle),
    'project_full_size': lambda: recipes.project(full, salvage_dir),
    'project_prepared': lambda: recipes.project(prepared, salvage_dir),
  }
  makers.update(
    {f'decode_scale_{s}': partial(recipes.decode_scaled, full, s) for s in DECODE_SCALES}
  )
  rates, cpu, rounds = one_at_a_time('photos', makers, settings)
  epoch_s = {
    n: full.records / rates[n] for n in ('seed_000', 'project_full_size', 'project_prepared')
  }
  saved_per_epoch = epoch_s['seed_000'] - epoch_s['project_prepared']
  return {
    'records': full.records,
    'megabytes_full_size': round(full.megabytes, 1),
    'megabytes_prepared': round(prepared.megabytes, 1),
    'prepared_side': PREPARED_SIDE,
    'prepare_seconds': prepare_s,  # by Beam mode
    'prepare_workers': workers,
    'examples_per_s': rates,
    'rounds': rounds,
    'cpu_ms_per_1k': cpu,
    'epoch_seconds': epoch_s,
    'epoch_speedup': epoch_s['seed_000'] / epoch_s['project_prepared'],
    'epoch_speedup_rounds': figures_file.ratio_rounds(
      rounds['project_prepared'], rounds['seed_000']
    ),
    'break_even_epochs': {
      mode: seconds / saved_per_epoch if saved_per_epoch > 0 else math.inf
      for mode, seconds in prepare_s.items()
    },
    'decode_scale_over_full': {
      str(s): rates[f'decode_scale_{s}'] / rates['decode_scale_1'] for s in DECODE_SCALES
    },
  }


def measure_set(name: str, folder: str, settings: dict) -> dict:
  recipes.tf.get_logger().setLevel('ERROR')  # the seed_004 recipe's deprecation notices
  salvage_dir = os.path.join(folder, 'salvage')
  if name == 'photos':
    return photos(folder, settings, salvage_dir)
  data = {
    'jpeg': lambda: input_data.images(folder, settings['jpeg'], image_record.ENCODED),
    'raw': lambda: input_data.images(folder, settings['raw'], image_record.RAW),
    'tabular': lambda: input_data.tabular(folder, settings['tabular_copies']),
  }[name]()
  print(
    f'{data.name}: {data.records} records, {data.megabytes:.0f} MB in {len(data.files)} shards',
    flush=True,
  )
  return measure(data, settings, salvage_dir)


def _with_reading(r: dict, variants: dict, what: str) -> str:
  """' (…)': the minimal pipeline that also reads the shards (JPEG), as a share of the ceiling's
  `what`; '' where the ceiling reads them already."""
  if recipes.READ_PARSE_DECODE not in variants or r['ceiling_kind'] == recipes.READ_PARSE_DECODE:
    return ''
  share = variants[recipes.READ_PARSE_DECODE] / variants[r['ceiling_kind']]
  return f' (read → parse → decode alone: {share:.2f}× its {what})'


def targets(report: dict) -> list:
  """[(target, measured, met)] for every target of TARGETS that this report measured."""
  rows, sets = [], report['datasets']
  for name, bound in TARGETS['project_over_ceiling'].items():
    if name in sets:
      r = sets[name]
      value = r['project_over']['ceiling']
      rows.append(
        (
          f'{name}: project ≥ {bound:.2f}× {r["ceiling_kind"]}',
          f'{value:.2f}×' + _with_reading(r, r['ceiling_variants'], 'rate'),
          value >= bound,
        )
      )
  for name, r in sets.items():
    for key, label in (('ceiling', 'the ceiling'), ('seed_000', 'seed_000')):
      bound = TARGETS[f'cpu_over_{key}']
      value = r['cpu_over'][key]
      reading = (
        _with_reading(r, r['ceiling_variants_cpu_ms_per_1k'], 'CPU') if key == 'ceiling' else ''
      )
      rows.append(
        (
          f'{name}: CPU per example ≤ {bound:.2f}× {label}',
          f'{value:.2f}×{reading}',
          value <= bound,
        )
      )
    value, floor, bound = r['stall_80'], r['stall_floor_80'], TARGETS['stall_80']
    rows.append(
      (
        f'{name}: stall < {bound:.0%} at 80 % (batch {r["stall_batch"]})',
        f'{value:.1%} (floor {floor:.1%})',
        value < bound,
      )
    )
    rows.append(
      (
        f'{name}: stall beyond the floor < {bound:.0%} at 80 %',
        f'{value - floor:.1%}',
        value - floor < bound,
      )
    )
    if 'cached_over_memory' in r:
      value, bound = r['cached_over_memory'], TARGETS['cached_over_memory']
      rows.append(
        (f'{name}: cached epoch ≥ {bound:.1f}× in memory', f'{value:.2f}×', value >= bound)
      )
  if 'photos' in report:
    p = report['photos']
    bound = TARGETS['photos_epoch_speedup']
    rows.append(
      (
        f'photos: epoch ≥ {bound:.0f}× seed_000 (prepared vs full-size)',
        f'{p["epoch_speedup"]:.1f}× (rounds {_range(p["epoch_speedup_rounds"])})',
        p['epoch_speedup'] >= bound,
      )
    )
    bound = TARGETS['photos_break_even_epochs']
    mode, epochs = min(p['break_even_epochs'].items(), key=lambda item: item[1])
    rows.append(
      (
        f'photos: break-even ≤ {bound:.0f} epochs, preparation included',
        f'{epochs:.2f} (Beam {mode.replace("_", " ")})',
        epochs <= bound,
      )
    )
  return [{'target': t, 'measured': m, 'met': bool(ok)} for t, m, ok in rows]


def _cell(value, ratio: bool = False) -> str:
  if value is None:
    return '–'
  return f'{value:.2f}×' if ratio else f'{value:,.0f}'


def _range(pair) -> str:
  return f'{pair[0]:.2f}–{pair[1]:.2f}×'


def tables(report: dict) -> list:
  """Markdown lines: throughput, CPU and stall, cache, photos, targets."""
  sets = report['datasets']
  columns = ['ceiling', 'bare_read'] + list(BASELINES) + ['project']
  lines = [
    '| data | '
    + ' | '.join(columns)
    + ' | '
    + ' | '.join(f'project / {c}' for c in columns[:-1])
    + ' |',
    '|---' * (2 * len(columns)) + '|',
  ]
  for name, r in sets.items():
    lines.append(
      f'| {name} ({r["bytes_per_record"] / 1000:.1f} KB/rec) | '
      + ' | '.join(_cell(r.get(c)) for c in columns)
      + ' | '
      + ' | '.join(_cell(r['project_over'].get(c), True) for c in columns[:-1])
      + ' |'
    )
  lines += [
    '',
    '| data | CPU ms / 1k examples: ceiling | seed_000 | tfx_stock | project | project / ceiling | '
    'project / seed_000 | stall at 50 / 80 / 100 % (batch) | floor at 80 % |',
    '|---|---|---|---|---|---|---|---|---|',
  ]
  for name, r in sets.items():
    cpu = r['cpu_ms_per_1k']
    stalls = ' / '.join(f'{r[f"stall_{d}"]:.1%}' for d in (50, 80, 100))
    lines.append(
      f'| {name} | '
      + ' | '.join(f'{cpu[c]:,.0f}' for c in ('ceiling', 'seed_000', 'tfx_stock', 'project'))
      + f' | {r["cpu_over"]["ceiling"]:.2f}× | {r["cpu_over"]["seed_000"]:.2f}× | '
      f'{stalls} ({r["stall_batch"]}) | {r["stall_floor_80"]:.1%} |'
    )
  lines += [
    '',
    '| data | project / ceiling, lowest–highest round | project / seed_000, rounds | seed_000 '
    'examples/s, rounds | peak resident MB | MB available before / after |',
    '|---|---|---|---|---|---|',
  ]
  for name, r in sets.items():
    spread = r['project_over_rounds']
    memory = r['memory_mb']
    lines.append(
      f'| {name} | {_range(spread["ceiling"])} | {_range(spread["seed_000"])} | '
      f'{min(r["rounds"]["seed_000"]):,.0f}–{max(r["rounds"]["seed_000"]):,.0f} | '
      f'{memory["peak_rss_mb"]:,} | {memory["available_mb_before"]:,} / '
      f'{memory["available_mb"]:,} |'
    )
  lines += [
    '',
    '| data | project, cached (epoch 2+) | in memory, new order each epoch | cached / that | '
    'in memory, stored order (no copy) |',
    '|---|---|---|---|---|',
  ]
  for name, r in sets.items():
    if 'cached_over_memory' in r:
      lines.append(
        f'| {name} | {r["project_cached"]:,.0f} | {r["memory"]:,.0f} | '
        f'{r["cached_over_memory"]:.2f}× | {r["memory_in_order"]:,.0f} |'
      )
  if 'photos' in report:
    p = report['photos']
    rates, epochs = p['examples_per_s'], p['epoch_seconds']
    lines += [
      '',
      f'| photos ({p["records"]} × 1600x1200, {p["megabytes_full_size"]:.0f} MB) | examples/s | '
      'CPU ms / 1k | seconds per epoch |',
      '|---|---|---|---|',
    ]
    for name in ('seed_000', 'project_full_size', 'project_prepared'):
      lines.append(
        f'| {name} | {rates[name]:,.0f} | {p["cpu_ms_per_1k"][name]:,.0f} | {epochs[name]:.2f} |'
      )
    modes = {
      'worker_processes': f'{p["prepare_workers"]} Beam worker processes',
      'in_memory': f'--beam-mode in_memory, auto below {cfg.IN_MEMORY_BELOW_IMAGES:,} images',
    }
    lines += [
      f'| ExampleGen --max-image-side {p["prepared_side"]} ({label}, '
      f'{p["megabytes_prepared"]:.0f} MB out) | | | {p["prepare_seconds"][mode]:.1f} once, '
      f'break-even after {p["break_even_epochs"][mode]:.1f} epochs |'
      for mode, label in modes.items()
    ]
    lines += [
      '',
      '| decode_jpeg ratio (then resize to 224x224) | '
      + ' | '.join(f'1/{s}' for s in DECODE_SCALES)
      + ' |',
      '|---' * (len(DECODE_SCALES) + 1) + '|',
      '| examples/s | '
      + ' | '.join(f'{rates[f"decode_scale_{s}"]:,.0f}' for s in DECODE_SCALES)
      + ' |',
      '| over 1/1 | '
      + ' | '.join(f'{p["decode_scale_over_full"][str(s)]:.2f}×' for s in DECODE_SCALES)
      + ' |',
    ]
  lines += ['', '| target | measured | |', '|---|---|---|']
  lines += [
    f'| {t["target"]} | {t["measured"]} | {"met" if t["met"] else "**not met**"} |'
    for t in report['targets']
  ]
  return lines


def _plot(report: dict, path: str) -> None:
  series = ['ceiling', 'bare_read'] + list(BASELINES) + ['project']
  sets = report['datasets']
  groups = {n: {s: r[s] / r['ceiling'] for s in series if s in r} for n, r in sets.items()}
  labels = {n: {s: f'{r[s] / 1000:.1f}k' for s in series if s in r} for n, r in sets.items()}
  chart.bars(
    groups,
    labels,
    series,
    f'examples/s as a fraction of the ceiling (labels: examples/s), {os.cpu_count()} cores',
    path,
    top=1.6,
  )


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(
    prog='python -m bench.input_pipeline',
    description=__doc__,
    formatter_class=argparse.RawDescriptionHelpFormatter,
  )
  parser.add_argument(
    '--quick',
    action='store_true',
    help='small data, short windows, every set in this process (~2 minutes; for tests, not '
    'for figures)',
  )
  parser.add_argument('--json', help='write the figures here')
  parser.add_argument('--plot', help='draw the bar chart here (PNG)')
  parser.add_argument(
    '--only',
    choices=SETS,
    help='measure this data set alone, in this process (default: each data set in a fresh '
    "process, one after another, so that one set's memory is returned before the next: "
    "seed_000's 10,000-image shuffle buffer alone holds 6 GB)",
  )
  parser.add_argument(
    '--seed-shuffle',
    type=int,
    help="seed_000's shuffle buffer on jpeg, raw and tabular (default: the recipe's 10,000; "
    '--quick: 500): a smaller one tells what its memory costs',
  )
  args = parser.parse_args(argv)
  settings = dict(QUICK if args.quick else FULL)
  if args.seed_shuffle:
    settings['seed_shuffle'] = args.seed_shuffle
  if args.only:
    with tempfile.TemporaryDirectory() as folder:
      figures_file.save(measure_set(args.only, folder, settings), args.json)
    return {}
  started = time.monotonic()
  report = {
    'cores': os.cpu_count(),
    'quick': args.quick,
    'batch': recipes.BATCH,
    'seed_shuffle': settings['seed_shuffle'],
    'datasets': {},
  }
  with tempfile.TemporaryDirectory() as folder:
    for name in SETS:
      if args.quick:  # small sets: this process is enough, and saves four TensorFlow imports
        os.makedirs(os.path.join(folder, name))
        figures = measure_set(name, os.path.join(folder, name), settings)
      else:
        out = os.path.join(folder, f'{name}.json')
        shuffle = ['--seed-shuffle', str(args.seed_shuffle)] if args.seed_shuffle else []
        subprocess.run(
          [sys.executable, '-m', 'bench.input_pipeline', '--only', name, '--json', out] + shuffle,
          check=True,
          cwd=ROOT,
        )
        with open(out) as f:
          figures = json.load(f)
      if name == 'photos':
        report['photos'] = figures
      else:
        report['datasets'][name] = figures
  report['targets'] = targets(report)
  report['seconds'] = time.monotonic() - started
  print(
    f'examples/s, medians of {settings["repeats"]} interleaved rounds, '
    f'{os.cpu_count()} cores, batch {recipes.BATCH}:'
  )
  print('\n'.join(tables(report)))
  figures_file.save(report, args.json)
  if args.plot:
    _plot(report, args.plot)
  return report


if __name__ == '__main__':
  main()
