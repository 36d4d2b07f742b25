"""The Trainer's input function against the hardware ceiling, the seed recipes and TFX's reader.

  .venv/bin/python -m bench.input_pipeline [--quick] [--json OUT] [--plot OUT.png]

One process. For each data set (bench/input_data.py: jpeg, raw, tabular) every pipeline of
bench/recipes.py is opened once, then measured several times interleaved with the others (settle,
untimed pull, timed window: see rate()); medians are reported as examples/s and MB/s, with ratios
to the ceiling and to each baseline. Then the input-stall fraction of the project's
pipeline: a simulated accelerator takes each batch and sleeps for a fixed step time set to 50%,
80% and 100% of the ceiling's rate; the stall fraction is the share of wall time spent in next().
"""

import argparse
import os
import statistics
import tempfile
import time
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

from bench import chart, input_data, recipes
from bench import figures as figures_file
from contracts import image_record

BASELINES = ('seed_000', 'seed_004', 'tfx_stock')
DEMANDS = (0.5, 0.8, 1.0)
FULL = dict(
  jpeg=6000, raw=3000, tabular_copies=10, repeats=5, window_s=2.0, settle_s=0.5, stall_s=4.0
)
QUICK = dict(  # for tests of the report's shape, not for figures
  jpeg=400, raw=200, tabular_copies=1, repeats=1, window_s=0.3, settle_s=0.15, stall_s=0.5
)


def rate(batches, window_s: float, settle_s: float) -> float:
  """Examples/s over a timed window.

  Every pipeline stays open between its windows, so first it waits `settle_s` (the previous
  pipeline's background threads finish refilling their buffers instead of stealing CPU from
  this window), then pulls untimed for `settle_s` (this pipeline's own full prefetch buffers
  would otherwise inflate the rate), then times.
  """
  time.sleep(settle_s)
  started = time.monotonic()
  while time.monotonic() - started < settle_s:
    next(batches)
  count, started = 0, time.monotonic()
  while time.monotonic() - started < window_s:
    next(batches)
    count += recipes.BATCH
  return count / (time.monotonic() - started)


def stall_fraction(batches, step_s: float, duration_s: float) -> float:
  """Share of wall time blocked in next() when each batch takes step_s to consume."""
  waited, started = 0.0, time.monotonic()
  while time.monotonic() - started < duration_s:
    before = time.monotonic()
    next(batches)
    waited += time.monotonic() - before
    time.sleep(step_s)
  return waited / (time.monotonic() - started)


def measure(data: input_data.DataSet, settings: dict, salvage_dir: str) -> dict:
  names = list(recipes.ceilings(data)) + [
    b for b in BASELINES if not (b == 'seed_004' and data.name == 'tabular')
  ]
  names.append('project')
  iterators = {name: recipes.batches(name, data, f'{salvage_dir}/{data.name}') for name in names}
  samples = {name: [] for name in names}
  try:
    for batches in iterators.values():  # warm-up: shuffle buffers, tracing, first reads
      rate(batches, 0.2, settings['settle_s'])
    for repeat in range(settings['repeats']):
      for name, batches in iterators.items():
        samples[name].append(rate(batches, settings['window_s'], settings['settle_s']))
      print(
        f'  {data.name} round {repeat + 1}/{settings["repeats"]}: '
        + ', '.join(f'{n} {samples[n][-1]:,.0f}' for n in names),
        flush=True,
      )
    medians = {name: statistics.median(values) for name, values in samples.items()}
    ceiling_names = [n for n in names if n.startswith('ceiling')]
    result = {
      'records': data.records,
      'megabytes': round(data.megabytes, 1),
      'bytes_per_record': round(data.bytes_per_record),
      'ceiling_kind': max(ceiling_names, key=medians.get),
      'ceiling': max(medians[n] for n in ceiling_names),
    }
    result.update({n: medians[n] for n in names if not n.startswith('ceiling')})
    result['ceiling_variants'] = {n: medians[n] for n in ceiling_names}
    for demand in DEMANDS:
      time.sleep(settings['settle_s'])
      step = recipes.BATCH / (demand * result['ceiling'])
      result[f'stall_{round(demand * 100)}'] = stall_fraction(
        iterators['project'], step, settings['stall_s']
      )
  finally:
    for batches in iterators.values():
      getattr(batches, 'close', lambda: None)()
  result['mb_per_s'] = {
    n: result[n] * data.bytes_per_record / 1e6
    for n in ('ceiling', 'project') + BASELINES
    if n in result
  }
  result['project_over'] = {
    n: result['project'] / result[n] for n in ('ceiling',) + BASELINES if n in result
  }
  return result


def table(datasets: dict) -> list:
  columns = ['ceiling'] + list(BASELINES) + ['project']
  lines = [
    '| data | ' + ' | '.join(columns) + ' | project / ceiling | project / seed_000 | '
    'project / seed_004 | project / tfx_stock | stall at 50 / 80 / 100 % |',
    '|---' * (len(columns) + 6) + '|',
  ]
  for name, r in datasets.items():
    cells = [f'{r[c]:,.0f}' if c in r else '–' for c in columns]
    ratios = [
      f'{r["project_over"][c]:.2f}×' if c in r['project_over'] else '–'
      for c in ('ceiling',) + BASELINES
    ]
    stalls = ' / '.join(f'{r[f"stall_{d}"]:.1%}' for d in (50, 80, 100))
    lines.append(
      f'| {name} ({r["bytes_per_record"] / 1000:.1f} KB/rec) | '
      + ' | '.join(cells)
      + ' | '
      + ' | '.join(ratios)
      + f' | {stalls} |'
    )
  return lines


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(
    prog='python -m bench.input_pipeline',
    description=__doc__,
    formatter_class=argparse.RawDescriptionHelpFormatter,
  )
  parser.add_argument(
    '--quick',
    action='store_true',
    help='small data, short windows (~1 minute; for tests, not for figures)',
  )
  parser.add_argument('--json', help='write the figures here')
  parser.add_argument('--plot', help='draw the bar chart here (PNG)')
  args = parser.parse_args(argv)
  settings = QUICK if args.quick else FULL
  started = time.monotonic()
  report = {'cores': os.cpu_count(), 'quick': args.quick, 'batch': recipes.BATCH, 'datasets': {}}
  with tempfile.TemporaryDirectory() as folder:
    makers = [
      lambda: input_data.images(folder, settings['jpeg'], image_record.ENCODED),
      lambda: input_data.images(folder, settings['raw'], image_record.RAW),
      lambda: input_data.tabular(folder, settings['tabular_copies']),
    ]
    for make in makers:
      data = make()
      print(
        f'{data.name}: {data.records} records, {data.megabytes:.0f} MB in {len(data.files)} shards',
        flush=True,
      )
      report['datasets'][data.name] = measure(data, settings, os.path.join(folder, 'salvage'))
  report['seconds'] = time.monotonic() - started
  print(
    f'examples/s, medians of {settings["repeats"]} interleaved rounds, '
    f'{os.cpu_count()} cores, batch {recipes.BATCH}:'
  )
  print('\n'.join(table(report['datasets'])))
  figures_file.save(report, args.json)
  if args.plot:
    series = ['ceiling'] + list(BASELINES) + ['project']
    groups = {
      n: {s: r[s] / r['ceiling'] for s in series if s in r} for n, r in report['datasets'].items()
    }
    labels = {
      n: {s: f'{r[s] / 1000:.1f}k' for s in series if s in r} for n, r in report['datasets'].items()
    }
    chart.bars(
      groups,
      labels,
      series,
      f'examples/s as a fraction of the ceiling (labels: examples/s), {os.cpu_count()} cores',
      args.plot,
      top=1.2,
    )
  return report


if __name__ == '__main__':
  main()
