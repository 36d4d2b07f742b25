"""ImageExampleGen throughput and memory: the seed's TFRecordWriter loop vs the project's
ExampleGen on Beam with 1 and 2 worker processes.

  .venv/bin/python -m bench.example_gen [--quick] [--images N] [--repeats N] [--json OUT]

Writes N realistic 224x224 JPEGs (random crops of scikit-learn's china.jpg / flower.jpg, ~15 KB)
into 10 class folders, then, interleaved, `--repeats` times:
  seed      the loop of seed article 000 in this process: read the file's bytes, build a
            tf.train.Example (image bytes + label), TFRecordWriter.write — one core, no checks;
  workers1  ImageExampleGen's executor, DirectRunner multi_processing with 1 worker process;
  workers2  the same with 2 worker processes;
  steps     ImageExampleGen's own per-image work without Beam, in this process on one core: its
            shard writer (`shard_writer.WriteShard`: read, decode check, build, serialise, write) over all N
            images as one shard. The 1-worker marginal rate over this rate is what Beam leaves
            of it (target TARGETS['marginal_over_own_steps']); the difference in µs per image
            is what Beam itself costs per image.
Each ExampleGen run is a fresh process (its own imports excluded from the timing, its Beam
workers' start-up included) on N/4 and on N images: end-to-end images/s on N, and marginal
images/s = (N - N/4) / (seconds on N - seconds on N/4), which cancels the fixed start-up (each
worker process imports TensorFlow) and is what more data costs. Peak memory is the largest total
resident memory of the run's process and its workers (sampled every 50 ms); growth is the
2-worker run on N against N/4.
Prints medians and ratios from this one invocation, each ratio with its lowest and highest round.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

from bench import figures as figures_file
import config as cfg

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSES = 10
TARGETS = {
  'workers2_over_workers1': 1.6,
  'per_core_over_seed': 0.8,
  'memory_4n_over_n': 1.2,
  'marginal_over_own_steps': 0.6,
  'duplicates_over_off': 1.1,  # grouping copies (components/duplicates.py) costs at most 10 %
}
AT_MOST = ('memory_4n_over_n', 'duplicates_over_off')  # targets that are ceilings


def write_images(folder: str, count: int) -> str:
  from bench import input_data

  crops = input_data._photo_crops(min(count, 2000))
  for i in range(count):
    class_dir = os.path.join(folder, f'class{i % CLASSES}')
    os.makedirs(class_dir, exist_ok=True)
    with open(os.path.join(class_dir, f'{i:06d}.jpg'), 'wb') as f:
      f.write(crops[i % len(crops)])
  return folder


def seed_loop(folder: str, out: str) -> float:
  """Seconds of seed 000's writer loop over every image under `folder`."""
  import tensorflow as tf

  classes = sorted(os.listdir(folder))
  dataset = [
    (os.path.join(folder, c, name), label)
    for label, c in enumerate(classes)
    for name in sorted(os.listdir(os.path.join(folder, c)))
  ]
  started = time.monotonic()
  with tf.io.TFRecordWriter(out) as writer:
    for path, label in dataset:
      with open(path, 'rb') as f:
        image_raw = f.read()
      feature = {
        'image': tf.train.Feature(bytes_list=tf.train.BytesList(value=[image_raw])),
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
      }
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )
  return time.monotonic() - started


def run_example_gen(
  folder: str,
  out: str,
  workers: int,
  shard_size_mb: float = 16.0,
  max_image_side: int = 0,
  unlabeled_split: str = '',
  duplicates: str = 'group',
) -> float:
  """In this process: ImageExampleGen's executor over `folder`; returns seconds. workers=0:
  Beam in this process (in_memory), else that many worker processes. duplicates: the
  component's mode (components/duplicates.py)."""
  from tfx.dsl.components.base import base_beam_executor
  from tfx.types import standard_artifacts

  from components.image_example_gen import executor

  examples = standard_artifacts.Examples()
  examples.uri = out
  context = base_beam_executor.BaseBeamExecutor.Context(
    beam_pipeline_args=[
      '--direct_running_mode=multi_processing',
      f'--direct_num_workers={workers}',
      cfg.LOCAL_ENVIRONMENT,
    ]
    if workers
    else ['--direct_running_mode=in_memory', cfg.LOCAL_ENVIRONMENT],
    tmp_dir=os.path.join(out, '.tmp'),
    unique_id='1',
  )
  started = time.monotonic()
  executor.Executor(context).Do(
    {},
    {'examples': [examples]},
    {
      'input_base': folder,
      'encoding': 'encoded',
      'compression': 'none',
      'eval_percent': 20,
      'shard_size_mb': shard_size_mb,  # 16: >= 4 shards at N/4 too, both workers busy in every run
      'max_image_side': max_image_side,
      'unlabeled_split': unlabeled_split,
      'duplicates': duplicates,
      'input_config': json.dumps({'splits': [{'name': 'images', 'pattern': '*/*'}]}),
    },
  )
  return time.monotonic() - started


def own_steps(images_folder: str, out: str, by_content: bool = True) -> float:
  """Seconds of ImageExampleGen's shard writer over every image of `images_folder` as one shard,
  in this process without Beam (the listing before it not timed, as it runs in Beam's runner).
  by_content=False: without the fingerprints (`--duplicates off`)."""
  from components.image_example_gen import shard_writer
  from contracts import splits
  from records import image_folder

  listing = image_folder.list_image_folder(images_folder)
  images = sorted(listing.images, key=lambda f: splits.path_hash(f.relpath))
  for split in splits.SPLITS:
    os.makedirs(os.path.join(out, f'Split-{split}'), exist_ok=True)
  items = os.path.join(out, 'items')
  writer = shard_writer.WriteShard(
    images_folder, listing.labels, 'encoded', 20, out, 1, 'none', 0, items, by_content=by_content
  )
  started = time.monotonic()
  list(writer.process((0, [tuple(f) for f in images])))
  seconds = time.monotonic() - started
  with open(f'{items}-00000.json') as f:
    assert sum(len(written) for written in json.load(f).values()) == len(images)
  return seconds


def measured_child(folder: str, out: str, workers: int, max_image_side: int = 0):
  """(seconds, peak MB of the whole process tree) of one ExampleGen run in a fresh process."""
  from bench import figures

  result, peak_mb = figures.measured_process(
    [sys.executable, '-m', 'bench.example_gen', '--child', folder, out, str(workers)]
    + [str(max_image_side)],
    ROOT,
  )
  return result['seconds'], peak_mb


def _rates_and_ratios(images, sizes, seed_s, steps_s, seconds, peaks):
  """(images/s by run, the ratios): from medians, or from one round's figures."""
  rates = {'seed': images / seed_s, 'own_steps': images / steps_s}
  for workers in (1, 2):
    # End to end (worker start-up included: each worker process imports TensorFlow, ~5 s), and
    # marginal: the extra images of the larger run over the extra seconds they took.
    rates[f'workers{workers}'] = images / seconds[(workers, images)]
    rates[f'workers{workers}_marginal'] = (images - sizes[0]) / max(
      seconds[(workers, images)] - seconds[(workers, sizes[0])], 1e-9
    )
  ratios = {
    'workers2_over_workers1': rates['workers2_marginal'] / rates['workers1_marginal'],
    'workers2_over_workers1_end_to_end': rates['workers2'] / rates['workers1'],
    'per_core_over_seed': rates['workers2_marginal'] / 2 / rates['seed'],
    'memory_4n_over_n': peaks[(2, images)] / peaks[(2, sizes[0])],
    'marginal_over_own_steps': rates['workers1_marginal'] / rates['own_steps'],
    'workers2_marginal_per_core_over_own_steps': rates['workers2_marginal']
    / 2
    / rates['own_steps'],
  }
  return rates, ratios


def main(argv=None) -> None:
  parser = figures_file.parser(__doc__, quick='2,000 images, 1 round')
  parser.add_argument('--images', type=int, default=0, help='default 20,000 (quick: 2,000)')
  parser.add_argument('--repeats', type=int, default=0, help='rounds (default 2, quick: 1)')
  parser.add_argument(
    '--child', nargs=4, metavar=('DATA', 'OUT', 'WORKERS', 'MAX_SIDE'), help=argparse.SUPPRESS
  )
  args = parser.parse_args(argv)
  if args.child:
    data, out, workers, max_side = args.child
    seconds = run_example_gen(data, out, int(workers), max_image_side=int(max_side))
    print(json.dumps({'seconds': seconds}))
    return

  images = args.images or (2_000 if args.quick else 20_000)
  repeats = args.repeats or (1 if args.quick else 2)
  seed_times, step_times, runs = [], [], {}  # runs[(workers, images)] = [(seconds, peak MB)]
  grouping = {'group': [], 'off': []}  # in-process runs with and without grouping duplicates
  sizes = (images // 4, images)
  with tempfile.TemporaryDirectory() as scratch:
    folders = {n: write_images(os.path.join(scratch, f'images{n}'), n) for n in sizes}
    seed_loop(folders[images], os.path.join(scratch, 'warm.tfrecord'))  # page cache, imports
    for round_number in range(repeats):
      seed_times.append(seed_loop(folders[images], os.path.join(scratch, f'seed{round_number}')))
      step_times.append(own_steps(folders[images], os.path.join(scratch, f'steps{round_number}')))
      for mode in ('off', 'group')[:: 1 if round_number % 2 == 0 else -1]:
        out = os.path.join(scratch, f'{mode}{round_number}')
        grouping[mode].append(run_example_gen(folders[images], out, 0, duplicates=mode))
      for workers in (1, 2):
        for n in sizes:
          runs.setdefault((workers, n), []).append(
            measured_child(
              folders[n], os.path.join(scratch, f'eg{workers}-{n}-{round_number}'), workers
            )
          )
      print(
        f'round {round_number + 1}/{repeats}: seed {seed_times[-1]:.1f} s, '
        f'own steps {step_times[-1]:.1f} s, '
        + ', '.join(
          f'{w} worker(s) {n:,} images {values[-1][0]:.1f} s' for (w, n), values in runs.items()
        ),
        flush=True,
      )
  seconds = {key: statistics.median(s for s, _ in values) for key, values in runs.items()}
  peaks = {key: statistics.median(m for _, m in values) for key, values in runs.items()}
  rates, ratios = _rates_and_ratios(
    images, sizes, statistics.median(seed_times), statistics.median(step_times), seconds, peaks
  )
  per_round = [  # each round's own ratios: their lowest and highest are the spread
    _rates_and_ratios(
      images,
      sizes,
      seed_times[r],
      step_times[r],
      {key: values[r][0] for key, values in runs.items()},
      {key: values[r][1] for key, values in runs.items()},
    )[1]
    for r in range(repeats)
  ]
  for r, p in enumerate(per_round):
    p['duplicates_over_off'] = grouping['group'][r] / grouping['off'][r]
  ratios['duplicates_over_off'] = statistics.median(grouping['group']) / statistics.median(
    grouping['off']
  )
  spread = {k: [min(p[k] for p in per_round), max(p[k] for p in per_round)] for k in ratios}
  figures = {
    'images': images,
    'cores': os.cpu_count(),
    'repeats': repeats,
    'images_per_s': rates,
    'seconds': figures_file.keyed(seconds, '{}w_{}'),
    'peak_mb': figures_file.keyed(peaks, '{}w_{}'),
    'ratios': ratios,
    'ratios_rounds': spread,  # [lowest, highest] of the ratio taken round by round
    # What Beam adds per image to the writer's own work (1 worker, marginal).
    'beam_us_per_image': 1e6 / rates['workers1_marginal'] - 1e6 / rates['own_steps'],
    # What grouping duplicates adds per image (in process, medians), and each run's seconds.
    'duplicates_us_per_image': 1e6
    * (statistics.median(grouping['group']) - statistics.median(grouping['off']))
    / images,
    'grouping_seconds': grouping,
    'targets': {
      k: {'target': t, 'met': (ratios[k] <= t) if k in AT_MOST else (ratios[k] >= t)}
      for k, t in TARGETS.items()
    },
  }
  print(f'{images:,} JPEGs (224x224), {os.cpu_count()} cores, median of {repeats}:')
  for name, rate in rates.items():
    print(f'  {name:18s} {rate:>8,.0f} images/s')
  print(
    f'  peak memory (2 workers): {peaks[(2, sizes[0])]:,.0f} MB at {sizes[0]:,} images, '
    f'{peaks[(2, images)]:,.0f} MB at {images:,}'
  )
  for name, ratio in ratios.items():
    target = figures['targets'].get(name)
    print(
      f'  {name} = {ratio:.2f} (rounds {spread[name][0]:.2f}–{spread[name][1]:.2f})'
      + (
        f' (target {"<=" if name in AT_MOST else ">="} '
        f'{target["target"]}: '
        f'{"met" if target["met"] else "NOT met"})'
        if target
        else ''
      )
    )
  print(
    f'  Beam per image (1 worker, marginal, less the own steps): {figures["beam_us_per_image"]:.0f} µs'
  )
  print(f'  grouping duplicates per image: {figures["duplicates_us_per_image"]:.0f} µs')
  figures_file.save(figures, args.json)


if __name__ == '__main__':
  main()
