"""Tolerant vs unchecked reading of clean shards through the Trainer's input function.

  .venv/bin/python -m bench.tolerant_reading [--records N] [--shards N] [--epochs E]
                                             [--repeats N] [--json OUT]

Writes N image records (32x32 RGB PNGs, ~3 KB: small records are the worst case for a per-record
check) into clean shards, then times the Trainer's input function `image_dataset(...)` with and
without a ShardGuard, which scans every shard's CRCs first (inside the timing) and would salvage
damaged ones. Two readings:
  training run  E epochs' worth of shuffled, repeated training batches: the scan happens once
                per run, as in the Trainer (the default job reads its split 27 times);
  one pass      every record read once, evaluation-style: the worst case for the scan's share.
Tolerant and unchecked are alternated so that machine noise hits both alike; prints medians and
throughput ratios tolerant/unchecked measured in this one invocation, and the scan alone.
"""

import argparse
import os
import statistics
import tempfile
import time
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

import numpy as np
import tensorflow as tf

from bench import figures as figures_file
from contracts import image_record
from records import image_codec, scan
from trainer import image_input, shards
from trainer.data_spec import ImageSpec


def write_shards(folder: str, records: int, shards: int) -> list:
  rng = np.random.default_rng(0)
  paths = [os.path.join(folder, f'data-{i:05d}-of-{shards:05d}') for i in range(shards)]
  writers = [tf.io.TFRecordWriter(p) for p in paths]
  payloads = [
    tf.io.encode_png(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).numpy() for _ in range(256)
  ]
  for i in range(records):
    image = image_record.EncodedImage(payloads[i % len(payloads)], 32, 32, 3)
    writers[i % shards].write(
      image_codec.make_example(image, i % 10, str(i % 10), f'{i}.png').SerializeToString()
    )
  for writer in writers:
    writer.close()
  return paths


BATCH = 64


def timed_read(paths, spec, steps: int, training: bool, guard=None) -> float:
  """Seconds to build the dataset (and scan, with a guard) and pull `steps` batches."""
  started = time.monotonic()
  dataset = image_input.image_dataset(paths, spec, BATCH, training=training, guard=guard)
  for _ in dataset.take(steps):
    pass
  return time.monotonic() - started


def compare(name: str, paths, spec, steps: int, training: bool, repeats: int, salvage: str):
  """Alternated unchecked/tolerant timings → (median unchecked, median tolerant, [lowest,
  highest] throughput ratio tolerant/unchecked of a pair)."""
  unchecked, tolerant = [], []
  for i in range(repeats):
    unchecked.append(timed_read(paths, spec, steps, training))
    tolerant.append(
      timed_read(paths, spec, steps, training, shards.ShardGuard(f'{salvage}/{name}{i}'))
    )
    print(
      f'{name} {i + 1}/{repeats}: unchecked {unchecked[-1]:.2f} s, tolerant {tolerant[-1]:.2f} s',
      flush=True,
    )
  spread = figures_file.ratio_rounds(unchecked, tolerant)  # seconds: unchecked / tolerant
  return statistics.median(unchecked), statistics.median(tolerant), spread


def main() -> None:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument('--records', type=int, default=40_000)
  parser.add_argument('--shards', type=int, default=8)
  parser.add_argument(
    '--epochs',
    type=int,
    default=10,
    help='training run length in passes over the data (default: 10)',
  )
  parser.add_argument('--repeats', type=int, default=5, help='alternated pairs (default: 5)')
  parser.add_argument('--json', help='also write the figures here')
  args = parser.parse_args()
  spec = ImageSpec(32, 32, 3, [str(i) for i in range(10)], image_record.ENCODED, uniform=True)
  figures = {
    'records': args.records,
    'shards': args.shards,
    'epochs': args.epochs,
    'cores': os.cpu_count(),
    'repeats': args.repeats,
  }
  with tempfile.TemporaryDirectory() as folder:
    paths = write_shards(folder, args.records, args.shards)
    figures['megabytes'] = round(sum(os.path.getsize(p) for p in paths) / 1e6, 1)
    pass_steps = -(-args.records // BATCH)
    timed_read(paths, spec, pass_steps, False)  # warm-up: page cache, first tracing
    started = time.monotonic()
    scan.check_all(paths)
    figures['scan_s'] = time.monotonic() - started
    for name, steps, training in (
      ('training run', args.epochs * args.records // BATCH, True),
      ('one pass', pass_steps, False),
    ):
      unchecked, tolerant, spread = compare(
        name, paths, spec, steps, training, args.repeats, folder
      )
      key = name.replace(' ', '_')
      figures[key] = {
        'unchecked_s': unchecked,
        'tolerant_s': tolerant,
        'records_per_s_unchecked': steps * BATCH / unchecked,
        'tolerant_over_unchecked': unchecked / tolerant,
        'tolerant_over_unchecked_rounds': spread,
      }
  print(
    f'{args.records} records ({figures["megabytes"]} MB) in {args.shards} shards, '
    f'{os.cpu_count()} cores; scan alone {figures["scan_s"]:.2f} s'
  )
  for name in ('training_run', 'one_pass'):
    f = figures[name]
    print(
      f'{name.replace("_", " ")}: unchecked {f["unchecked_s"]:.2f} s '
      f'({f["records_per_s_unchecked"]:,.0f} rec/s), tolerant {f["tolerant_s"]:.2f} s; '
      f'throughput ratio tolerant/unchecked = {f["tolerant_over_unchecked"]:.3f} (pairs '
      f'{f["tolerant_over_unchecked_rounds"][0]:.3f}–{f["tolerant_over_unchecked_rounds"][1]:.3f})'
    )
  figures_file.save(figures, args.json)


if __name__ == '__main__':
  main()
