"""CSV → tf.Example TFRecords: TFX's CsvExampleGen, the project's Arrow CsvExampleGen and the
one-core ceiling, side by side on numeric CSVs (10 float columns and an int label, as in issue 33).

  .venv/bin/python -m bench.csv_example_gen [--quick] [--repeats N] [--against TREE] [--json OUT]

Rounds of, each in a fresh process (imports excluded from the timing, Beam's start-up and its
worker processes' included), on files of SIZES rows (--quick: a hundredth, for tests):
  stock     TFX's CsvExampleGen executor, Beam in one process (on 2 cores its worker processes
            took the same time: issue 33), at 200k rows only: ~40 s a run;
  project   the project's executor in the Beam mode `pipeline.py run --beam-mode auto` gives it
            for the file's size (config.arrow_csv_running_mode: one process below 512 MB);
  ceiling   what cannot be skipped, on one core without Beam: pyarrow's CSV read (its own
            types), tfx-bsl's RecordBatchToExamples, one TFRecord write;
  before    with --against TREE (a checkout of an earlier commit, e.g. `git worktree add TREE
            REV`): TREE's project executor on the 200k and 1M files, right after this tree's
            in each round, so a change's cost is a ratio of the same invocation.
Peak memory is the largest resident memory of the run's process tree (sampled every 50 ms).
Prints medians and the targets' ratios, all from this one invocation.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

from bench import figures as figures_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = (200_000, 250_000, 1_000_000)
STOCK_AT = 200_000
TARGETS = {
  'stock_over_project_200k': 10.0,
  'per_core_over_ceiling_1m': 0.5,
  'memory_1m_over_250k': 1.2,
}


def write_csv(path: str, rows: int, seed: int = 0, learnable: bool = False) -> str:
  """rows x (f0..f9 floats with 6 decimals, label 0/1): ~97 bytes a row. The label is random,
  or with `learnable` f0 + f1 > 0 (a model can learn it: bench.pipeline_scaling's runs)."""
  import numpy as np
  import pandas as pd

  rng = np.random.default_rng(seed)
  frame = pd.DataFrame(rng.standard_normal((rows, 10)), columns=[f'f{i}' for i in range(10)])
  frame['label'] = (
    (frame['f0'] + frame['f1'] > 0).astype(int) if learnable else rng.integers(0, 2, rows)
  )
  frame.to_csv(path, index=False, float_format='%.6f')
  return path


def _examples(out: str):
  from tfx.types import standard_artifacts

  examples = standard_artifacts.Examples()
  examples.uri = out
  return examples


def run_executor(kind: str, data: str, out: str) -> float:
  """Seconds of one ExampleGen executor (kind: stock / project) over data (a CSV file)."""
  from tfx.components.example_gen.csv_example_gen import executor as stock
  from tfx.dsl.components.base import base_beam_executor
  from tfx.proto import example_gen_pb2
  from tfx.utils import proto_utils

  from components import file_based
  from components.csv_example_gen import executor as project
  import config as cfg

  mode = project_mode(os.path.getsize(data)) if kind == 'project' else 'in_memory'
  context = base_beam_executor.BaseBeamExecutor.Context(
    beam_pipeline_args=[
      f'--direct_running_mode={mode}',
      '--direct_num_workers=0',
      cfg.LOCAL_ENVIRONMENT,
    ],
    tmp_dir=os.path.join(out, '.tmp'),
    unique_id='1',
  )
  input_config = example_gen_pb2.Input(
    splits=[example_gen_pb2.Input.Split(name='single_split', pattern=os.path.basename(data))]
  )
  properties = {
    'input_base': os.path.dirname(data),
    'input_config': proto_utils.proto_to_json(input_config),
    'output_config': proto_utils.proto_to_json(file_based.output_config(20)),
    'output_data_format': example_gen_pb2.FORMAT_TF_EXAMPLE,
    'output_file_format': example_gen_pb2.FILE_FORMAT_UNSPECIFIED,
    'compression': 'none',
  }
  executor = (stock if kind == 'stock' else project).Executor(context)
  started = time.monotonic()
  executor.Do({}, {'examples': [_examples(out)]}, properties)
  return time.monotonic() - started


def run_ceiling(data: str, out: str) -> float:
  """Seconds of the unskippable work on one core: read, encode, write."""
  import pyarrow as pa
  import pyarrow.csv as pa_csv
  import tensorflow as tf
  from tfx_bsl.coders import example_coder

  started = time.monotonic()
  table = pa_csv.read_csv(data, read_options=pa_csv.ReadOptions(use_threads=False))
  offsets = pa.array(range(table.num_rows + 1), pa.int64())
  values = [column.combine_chunks() for column in table.columns]
  lists = [  # a tf.Example holds float32
    pa.LargeListArray.from_arrays(
      offsets, v.cast(pa.float32()) if pa.types.is_floating(v.type) else v
    )
    for v in values
  ]
  records = example_coder.RecordBatchToExamples(
    pa.RecordBatch.from_arrays(lists, table.column_names)
  )
  with tf.io.TFRecordWriter(os.path.join(out, 'data.tfrecord')) as writer:
    for record in records:
      writer.write(record)
  return time.monotonic() - started


def project_mode(data_bytes: int) -> str:
  """The DirectRunner mode `run --beam-mode auto` gives the Arrow CsvExampleGen on a file."""
  import config as cfg

  return cfg.arrow_csv_running_mode(cfg.BEAM_AUTO, 0, data_bytes) or cfg.direct_running_mode(
    cfg.BEAM_AUTO, 0, 0, data_bytes
  )


def _cores(data_bytes: int) -> int:
  """The cores the project's executor uses on a file of data_bytes (its Beam mode's)."""
  return 1 if project_mode(data_bytes) == 'in_memory' else os.cpu_count() or 1


def measured(kind: str, data: str, out: str, tree: str = ROOT):
  """(seconds, peak MB of the process tree) of one run of `kind` in a fresh process, with the
  code of `tree` (this checkout, or --against's)."""
  from bench import figures

  os.makedirs(out, exist_ok=True)
  result, peak_mb = figures.measured_process(
    [sys.executable, '-m', 'bench.csv_example_gen', '--child', kind, data, out], tree
  )
  return result['seconds'], peak_mb


def main(argv=None) -> None:
  parser = figures_file.parser(__doc__, quick='a hundredth of the rows, 1 round (tests)')
  parser.add_argument('--repeats', type=int, default=0, help='rounds (default 2, quick: 1)')
  parser.add_argument(
    '--against', metavar='TREE', help="an earlier checkout's executor, timed beside this one's"
  )
  parser.add_argument('--child', nargs=3, metavar=('KIND', 'DATA', 'OUT'), help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.child:
    kind, data, out = args.child
    seconds = run_ceiling(data, out) if kind == 'ceiling' else run_executor(kind, data, out)
    print(json.dumps({'seconds': seconds}))
    return
  if args.against and not os.path.isfile(os.path.join(args.against, 'bench', 'csv_example_gen.py')):
    parser.exit(2, f'error: --against {args.against}: not a checkout of this project\n')
  figures = measure(args.quick, args.repeats, args.against)
  report(figures)
  figures_file.save(figures, args.json)


def measure(quick: bool = False, repeats: int = 0, against: str = None) -> dict:
  """The figures of one invocation (bench.pipeline_scaling takes them as its CSV part); with
  `against`, that checkout's project executor too ('before')."""
  scale = 100 if quick else 1
  repeats = repeats or (1 if quick else 2)
  sizes = [n // scale for n in SIZES]
  small, mid, large = sizes
  runs = {}  # (kind, rows) -> [(seconds, peak MB)]
  with tempfile.TemporaryDirectory() as scratch:
    files = {n: write_csv(os.path.join(scratch, f'rows{n}.csv'), n) for n in sizes}
    large_bytes = os.path.getsize(files[large])
    plan = (
      [('stock', STOCK_AT // scale)]
      + [('project', n) for n in sizes]
      + [('ceiling', n) for n in (small, large)]
      + ([('before', n) for n in (small, large)] if against else [])
    )
    for round_number in range(repeats):
      for kind, n in plan:
        out = os.path.join(scratch, f'{kind}-{n}-{round_number}')
        if kind == 'before':
          run = measured('project', files[n], out, os.path.abspath(against))
        else:
          run = measured(kind, files[n], out)
        runs.setdefault((kind, n), []).append(run)
      print(
        f'round {round_number + 1}/{repeats}: '
        + ', '.join(f'{k} {n:,} rows {v[-1][0]:.1f} s' for (k, n), v in runs.items()),
        flush=True,
      )
  seconds = {key: statistics.median(s for s, _ in v) for key, v in runs.items()}
  spread = {key: [min(s for s, _ in v), max(s for s, _ in v)] for key, v in runs.items()}
  peaks = {key: statistics.median(m for _, m in v) for key, v in runs.items()}
  cores = _cores(large_bytes)
  ratios = {
    'stock_over_project_200k': seconds[('stock', small)] / seconds[('project', small)],
    'per_core_over_ceiling_1m': seconds[('ceiling', large)] / seconds[('project', large)] / cores,
    'memory_1m_over_250k': peaks[('project', large)] / peaks[('project', mid)],
  }
  before = {}
  if against:
    before = {
      'against': os.path.abspath(against),
      'project_over_before_200k': seconds[('project', small)] / seconds[('before', small)],
      'project_over_before_1m': seconds[('project', large)] / seconds[('before', large)],
    }
  return {
    'rows': sizes,
    'cores': os.cpu_count(),
    'project_cores_1m': cores,
    'repeats': repeats,
    'seconds': figures_file.keyed(seconds),
    'seconds_min_max': figures_file.keyed(spread),
    'peak_mb': figures_file.keyed(peaks),
    'csv_200k': {
      'stock_seconds': seconds[('stock', small)],
      'project_seconds': seconds[('project', small)],
      'ceiling_seconds': seconds[('ceiling', small)],
    },
    'csv_1m': {
      'project_rows_per_s_per_core': large / seconds[('project', large)] / cores,
      'ceiling_rows_per_s': large / seconds[('ceiling', large)],
      'peak_mb_250k': peaks[('project', mid)],
      'peak_mb_1m': peaks[('project', large)],
    },
    'ratios': ratios,
    **({'before': before} if before else {}),
    'targets': {
      k: {'target': t, 'met': ratios[k] <= t if k.startswith('memory') else ratios[k] >= t}
      for k, t in TARGETS.items()
    },
  }


def report(figures: dict) -> None:
  """The figures as lines."""
  small, _, large = figures['rows']
  c200, c1m = figures['csv_200k'], figures['csv_1m']
  print(
    f'numeric CSV (10 floats + label), {figures["cores"]} cores, median of {figures["repeats"]}:'
  )
  print(
    f'  {small:,} rows: TFX CsvExampleGen {c200["stock_seconds"]:.1f} s, project '
    f'{c200["project_seconds"]:.1f} s, one-core ceiling {c200["ceiling_seconds"]:.1f} s'
  )
  print(
    f'  {large:,} rows: project {c1m["project_rows_per_s_per_core"]:,.0f} rows/s per core, '
    f'ceiling {c1m["ceiling_rows_per_s"]:,.0f} rows/s on one core; peak '
    f'{c1m["peak_mb_250k"]:,.0f} MB at {figures["rows"][1]:,} rows, {c1m["peak_mb_1m"]:,.0f} MB at '
    f'{large:,}'
  )
  for name, ratio in figures['ratios'].items():
    target = figures['targets'][name]
    sign = '<=' if name.startswith('memory') else '>='
    met = 'met' if target['met'] else 'NOT met'
    print(f'  {name} = {ratio:.2f} (target {sign} {target["target"]}: {met})')
  if 'before' in figures:
    b = figures['before']
    print(
      f'  this tree over {b["against"]}: {b["project_over_before_200k"]:.3f}x at {small:,} rows, '
      f'{b["project_over_before_1m"]:.3f}x at {large:,} (rounds: seconds_min_max)'
    )


if __name__ == '__main__':
  main()
