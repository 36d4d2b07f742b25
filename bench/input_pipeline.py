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

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

from bench import chart, recipes
from bench import figures as figures_file
from bench.input_pipeline_measures import BASELINES, DECODE_SCALES, FULL, QUICK, SETS, measure_set
import config as cfg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = {  # the targets, each a (bound, 'min' or 'max') on a measured figure
  'project_over_ceiling': {'jpeg': 0.90, 'raw': 0.90, 'tabular': 0.85},
  'cpu_over_ceiling': 1.15,
  'cpu_over_seed_000': 0.5,
  'stall_80': 0.05,
  'cached_over_memory': 0.9,
  'photos_epoch_speedup': 10.0,
  'photos_break_even_epochs': 3.0,
}


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


def _row(*cells: str) -> str:
  return '| ' + ' | '.join(cells) + ' |'


def _heading(*cells: str) -> list:
  """A markdown table's header line and the line under it."""
  return [_row(*cells), '|---' * len(cells) + '|']


def tables(report: dict) -> list:
  """Markdown lines: throughput, CPU and stall, cache, photos, targets."""
  sets = report['datasets']
  columns = ['ceiling', 'bare_read'] + list(BASELINES) + ['project']
  lines = _heading('data', *columns, *(f'project / {c}' for c in columns[:-1]))
  for name, r in sets.items():
    lines.append(
      _row(
        f'{name} ({r["bytes_per_record"] / 1000:.1f} KB/rec)',
        *(_cell(r.get(c)) for c in columns),
        *(_cell(r['project_over'].get(c), True) for c in columns[:-1]),
      )
    )
  lines += [
    '',
    *_heading(
      'data',
      'CPU ms / 1k examples: ceiling',
      'seed_000',
      'tfx_stock',
      'project',
      'project / ceiling',
      'project / seed_000',
      'stall at 50 / 80 / 100 % (batch)',
      'floor at 80 %',
    ),
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
    *_heading(
      'data',
      'project / ceiling, lowest–highest round',
      'project / seed_000, rounds',
      'seed_000 examples/s, rounds',
      'peak resident MB',
      'MB available before / after',
    ),
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
    *_heading(
      'data',
      'project, cached (epoch 2+)',
      'in memory, new order each epoch',
      'cached / that',
      'in memory, stored order (no copy)',
    ),
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
      *_heading(
        f'photos ({p["records"]} × 1600x1200, {p["megabytes_full_size"]:.0f} MB)',
        'examples/s',
        'CPU ms / 1k',
        'seconds per epoch',
      ),
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
      *_heading('decode_jpeg ratio (then resize to 224x224)', *(f'1/{s}' for s in DECODE_SCALES)),
      _row('examples/s', *(f'{rates[f"decode_scale_{s}"]:,.0f}' for s in DECODE_SCALES)),
      _row('over 1/1', *(f'{p["decode_scale_over_full"][str(s)]:.2f}×' for s in DECODE_SCALES)),
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
  parser = figures_file.parser(
    __doc__,
    quick='small data, short windows, every set in this process (~2 minutes; for tests, not '
    'for figures)',
    prog='python -m bench.input_pipeline',
  )
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
