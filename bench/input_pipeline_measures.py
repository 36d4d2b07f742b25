"""The measuring of bench/input_pipeline.py (its docstring says what): one data set's
pipelines, rounds of timed windows, stall fractions, and camera-size photos prepared once."""

from functools import partial
import glob
import math
import os
import resource
import statistics
import time

from bench import example_gen, input_data, recipes
from bench import figures as figures_file
from contracts import image_record
from trainer import diagnosis

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
