"""SequenceExample input throughput: the Trainer's sequence input function vs two baselines.

  .venv/bin/python -m bench.sequence_parsing [--quick] [--records N] [--repeats N] [--json OUT]

Writes N SequenceExamples in the text route's layout (token ids, lengths uniform in 1–200) into
4 shards, then reads one pass of batches of 64 through:
  project      trainer/sequence_input.sequence_dataset, exactly as the Trainer calls it
               (vectorised parse of 32-batch windows, batches cut within length buckets);
  per_record   a `parse_single_sequence_example` map (AUTOTUNE) + `bucket_by_sequence_length`
               with the same buckets: what one would write by the book, one record at a time;
  per_record_padded   the per-record map + `padded_batch` (no buckets: pads to each batch's
               longest);
  pad_max      vectorised parse, every batch padded to the data set's maximum length.
Each pipeline is built once (as in the Trainer) and warmed up; rounds of one pass each are
interleaved and medians reported; besides examples/s, each pipeline's padding share
(padded positions that hold no token) shows what the model would compute for nothing.
"""

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
from contracts import text_record
from records import text_codec
from trainer import sequence_input
from trainer.data_spec import SequenceSpec

BATCH = 64
MAX_LENGTH = 200
SHARDS = 4
SPEC = SequenceSpec(
  text_record.LABEL_KEY, text_record.TOKENS_KEY, tf.int64, ['0', '1'], 10_000, hashed=False
)
TARGET = 3.0  # project ≥ 3× per_record


def write_shards(folder: str, records: int) -> list:
  rng = np.random.default_rng(0)
  paths = [os.path.join(folder, f'data-{i:05d}-of-{SHARDS:05d}') for i in range(SHARDS)]
  writers = [tf.io.TFRecordWriter(p) for p in paths]
  for i in range(records):
    ids = rng.integers(2, SPEC.vocabulary_size, int(rng.integers(1, MAX_LENGTH + 1)))
    label = int(rng.integers(0, 2))
    writers[i % SHARDS].write(
      text_codec.make_sequence_example(ids.tolist(), label, str(label)).SerializeToString()
    )
  for writer in writers:
    writer.close()
  return paths


def _parse_one(serialized):
  context, sequences = tf.io.parse_single_sequence_example(
    serialized,
    context_features={text_record.LABEL_KEY: tf.io.FixedLenFeature([], tf.int64)},
    sequence_features={text_record.TOKENS_KEY: tf.io.FixedLenSequenceFeature([], tf.int64)},
  )
  return sequences[text_record.TOKENS_KEY], context[text_record.LABEL_KEY]


def _per_record(paths, bucketed: bool) -> tf.data.Dataset:
  records = tf.data.TFRecordDataset(paths).map(_parse_one, num_parallel_calls=tf.data.AUTOTUNE)
  if bucketed:
    boundaries = list(sequence_input.BUCKET_BOUNDARIES)
    batches = records.bucket_by_sequence_length(
      lambda tokens, label: tf.shape(tokens)[0], boundaries, [BATCH] * (len(boundaries) + 1)
    )
  else:
    batches = records.padded_batch(BATCH)
  return batches.prefetch(tf.data.AUTOTUNE)


def _pad_max(paths) -> tf.data.Dataset:
  def parse(serialized):
    tokens, labels = sequence_input.parse_sequences(serialized, SPEC)
    return tokens.to_tensor(shape=[None, MAX_LENGTH]), labels

  return (
    tf.data.TFRecordDataset(paths)
    .batch(BATCH)
    .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    .prefetch(tf.data.AUTOTUNE)
  )


PIPELINES = {
  'project': lambda paths: sequence_input.sequence_dataset(paths, SPEC, BATCH, False),
  'per_record': lambda paths: _per_record(paths, bucketed=True),
  'per_record_padded': lambda paths: _per_record(paths, bucketed=False),
  'pad_max': _pad_max,
}


def one_pass(dataset: tf.data.Dataset):
  """(seconds, examples, tokens, padded positions) of one pass."""
  started = time.monotonic()
  examples = tokens = positions = 0
  for ids, labels in dataset:
    examples += int(labels.shape[0])
    positions += int(tf.size(ids))
    tokens += int(tf.math.count_nonzero(ids))
  return time.monotonic() - started, examples, tokens, positions


def main(argv=None) -> None:
  parser = figures_file.parser(__doc__, quick='8,000 records, 3 rounds')
  parser.add_argument('--records', type=int, default=0, help='default 60,000 (quick: 8,000)')
  parser.add_argument('--repeats', type=int, default=0, help='rounds (default 5, quick: 3)')
  args = parser.parse_args(argv)
  records = args.records or (8_000 if args.quick else 60_000)
  repeats = args.repeats or (3 if args.quick else 5)
  times = {name: [] for name in PIPELINES}
  counts = {}
  with tempfile.TemporaryDirectory() as folder:
    paths = write_shards(folder, records)
    megabytes = sum(os.path.getsize(p) for p in paths) / 1e6
    # Built once, as the Trainer does; the warm-up pass fills the page cache and traces.
    datasets = {name: build(paths) for name, build in PIPELINES.items()}
    for dataset in datasets.values():
      one_pass(dataset)
    for round_number in range(repeats):
      for name, dataset in datasets.items():
        seconds, examples, tokens, positions = one_pass(dataset)
        times[name].append(seconds)
        counts[name] = {'examples': examples, 'tokens': tokens, 'positions': positions}
      print(
        f'round {round_number + 1}/{repeats}: '
        + ', '.join(f'{name} {times[name][-1]:.2f} s' for name in PIPELINES),
        flush=True,
      )
  figures = {
    'records': records,
    'megabytes': round(megabytes, 1),
    'cores': os.cpu_count(),
    'batch': BATCH,
    'repeats': repeats,
    'pipelines': {},
  }
  for name in PIPELINES:
    seconds = statistics.median(times[name])
    c = counts[name]
    figures['pipelines'][name] = {
      'seconds': seconds,
      'examples_per_s': c['examples'] / seconds,
      'examples': c['examples'],
      'padding_share': 1 - c['tokens'] / c['positions'],
    }
  project = figures['pipelines']['project']['examples_per_s']
  figures['ratios'] = {
    f'project_over_{name}': project / figures['pipelines'][name]['examples_per_s']
    for name in PIPELINES
    if name != 'project'
  }
  figures['ratio_rounds'] = {  # seconds per pass: X's over the project's, round by round
    f'project_over_{name}': figures_file.ratio_rounds(times[name], times['project'])
    for name in PIPELINES
    if name != 'project'
  }
  figures['target'] = {
    'project_over_per_record': TARGET,
    'met': figures['ratios']['project_over_per_record'] >= TARGET,
  }
  print(
    f'{records:,} SequenceExamples ({megabytes:.1f} MB, lengths 1-{MAX_LENGTH}), batch '
    f'{BATCH}, {os.cpu_count()} cores, median of {repeats}:'
  )
  for name, f in figures['pipelines'].items():
    ratio = figures['ratios'].get(f'project_over_{name}')
    print(
      f'  {name:18s} {f["examples_per_s"]:>10,.0f} examples/s  padding {f["padding_share"]:5.1%}'
      + (
        f'  project is {ratio:.2f}x (rounds '
        + '–'.join(f'{r:.2f}' for r in figures['ratio_rounds'][f'project_over_{name}'])
        + ')'
        if ratio
        else ''
      )
    )
  print(
    f'target project >= {TARGET}x per_record: {"met" if figures["target"]["met"] else "NOT met"}'
  )
  figures_file.save(figures, args.json)


if __name__ == '__main__':
  main()
