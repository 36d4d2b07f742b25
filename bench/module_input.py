"""A TFX module file's input through TFX's stock data accessor and through the project's.

  .venv/bin/python -m bench.module_input [--quick] [--records N] [--rounds N] [--batch N] [--json OUT]

The taxi example's rows (the TFX wheel's chicago_taxi_pipeline/data/simple/data.csv, 15,000) are
written as raw tf.Examples (the wheel's user-provided schema: every column VarLen), tf.Transform
runs the wheel's taxi_utils_native_keras.preprocessing_fn over them once (Beam, in process), and
both sets are repeated to N records in 4 GZIP shards, as ExampleGen and Transform write them.
Two cases, each read through both accessors:
  transformed  the module's own `_input_fn(files, data_accessor, tf_transform_output, batch)`
               (imported unmodified: dense features, label tips_xf, shuffled, repeated);
  raw          the same call on the raw examples with the raw schema and label `tips`
               (SparseTensors), what a module without Transform does.
The accessors: `stock`, TFXIO's TFExampleRecord.TensorFlowDataset (what TFX's Trainer hands
run_fn); `project`, components/recording_trainer/data_accessor.py. Each dataset is built once and
read as Keras reads it (one iterator, batches taken inside a tf.function), an epoch's batches
(N / batch) per round, after one warm-up epoch; the rounds alternate which accessor goes first.
Before the timing, an unshuffled epoch's first 250 batches through both accessors are checked
equal batch for batch. Printed: examples/s, the ratio project / stock per round, its median and
spread.
"""

import csv
import itertools
import os
import statistics
import tempfile
import time
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

import apache_beam as beam
from google.protobuf import text_format
import numpy as np
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from tfx.components.trainer import fn_args_utils
from tfx.examples.chicago_taxi_pipeline import taxi_utils_native_keras as taxi
from tfx_bsl.public import tfxio

from bench import figures as figures_file
from components.recording_trainer import data_accessor

TAXI = os.path.dirname(taxi.__file__)
CSV = os.path.join(TAXI, 'data', 'simple', 'data.csv')
RAW_SCHEMA = os.path.join(TAXI, 'data', 'user_provided_schema', 'schema.pbtxt')
RAW_LABEL = 'tips'
TRANSFORMED_LABEL = taxi._transformed_name(RAW_LABEL)  # what the module's _input_fn pops
SHARDS = 4
BATCH = 40  # the taxi module's run_fn reads batches of 40
CHECKED_BATCHES = 250  # 10,000 records, over every shard (the tests compare whole epochs)
CASES = ('transformed', 'raw')
ACCESSORS = ('stock', 'project')


def raw_schema() -> schema_pb2.Schema:
  with open(RAW_SCHEMA) as f:
    return text_format.Parse(f.read(), schema_pb2.Schema())


def raw_examples(schema: schema_pb2.Schema, rows: int) -> list:
  """The CSV's first `rows` rows as serialized tf.Examples; an empty cell is an absent feature."""
  kinds = {f.name: f.type for f in schema.feature}
  out = []
  with open(CSV, newline='') as f:
    for row in csv.DictReader(f):
      if len(out) == rows:
        break
      feature = {}
      for name, cell in row.items():
        if cell == '':
          continue
        if kinds[name] == schema_pb2.BYTES:
          value = tf.train.Feature(bytes_list=tf.train.BytesList(value=[cell.encode()]))
        elif kinds[name] == schema_pb2.INT:
          value = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(float(cell))]))
        else:
          value = tf.train.Feature(float_list=tf.train.FloatList(value=[float(cell)]))
        feature[name] = value
      out.append(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
  return out


def transform(serialized: list, schema: schema_pb2.Schema, folder: str) -> list:
  """The taxi preprocessing_fn analyzed and applied (tf.Transform on Beam, in process): the
  transformed records, serialized; its transform graph written in `folder`/graph."""
  source = tfxio.TFExampleBeamRecord(physical_format='inmem', schema=schema)
  prefix = os.path.join(folder, 'transformed', 'part')
  with beam.Pipeline() as pipeline, tft_beam.Context(temp_dir=os.path.join(folder, 'tmp')):
    raw = pipeline | beam.Create(serialized) | source.BeamSource()
    (rows, metadata), transform_fn = (
      raw,
      source.TensorAdapterConfig(),
    ) | tft_beam.AnalyzeAndTransformDataset(taxi.preprocessing_fn)
    coder = tft.coders.ExampleProtoCoder(metadata.schema)
    _ = rows | beam.Map(coder.encode) | beam.io.WriteToTFRecord(prefix)
    _ = transform_fn | tft_beam.WriteTransformFn(os.path.join(folder, 'graph'))
  written = tf.data.TFRecordDataset(tf.io.gfile.glob(prefix + '*'))
  return list(written.as_numpy_iterator())


def write_shards(folder: str, serialized: list, records: int) -> str:
  """`records` records (`serialized` repeated) in SHARDS GZIP shards; their glob."""
  os.makedirs(folder)
  paths = [os.path.join(folder, f'data_tfrecord-{i:05d}-of-{SHARDS:05d}.gz') for i in range(SHARDS)]
  writers = [tf.io.TFRecordWriter(path, options='GZIP') for path in paths]
  for i in range(records):
    writers[i % SHARDS].write(serialized[i % len(serialized)])
  for writer in writers:
    writer.close()
  return os.path.join(folder, '*')


def accessors() -> dict:
  """{name: DataAccessor}: TFX's (TFXIO, as its Trainer builds it for tf.Examples), the project's."""
  stock = fn_args_utils.DataAccessor(
    tf_dataset_factory=lambda pattern, options, schema: tfxio.TFExampleRecord(
      pattern, schema=schema
    ).TensorFlowDataset(options),
    record_batch_factory=None,
    data_view_decode_fn=None,
  )
  return {'stock': stock, 'project': stock._replace(tf_dataset_factory=data_accessor.dataset)}


def raw_input_fn(pattern, accessor, schema, batch: int) -> tf.data.Dataset:
  """taxi._input_fn's call with the raw schema and label: a module without Transform."""
  options = tfxio.TensorFlowDatasetOptions(batch_size=batch, label_key=RAW_LABEL)
  return accessor.tf_dataset_factory([pattern], options, schema).repeat()


def same_batches(pattern: str, schema, label_key: str) -> bool:
  """The first CHECKED_BATCHES of an unshuffled epoch through both accessors, batch for batch
  equal: the structure, the dtypes and every value (a check before the timing, not timed)."""
  options = tfxio.TensorFlowDatasetOptions(
    batch_size=BATCH, shuffle=False, num_epochs=1, label_key=label_key
  )
  stock, project = (a.tf_dataset_factory([pattern], options, schema) for a in accessors().values())
  if stock.element_spec != project.element_spec:
    return False
  for a, b in itertools.zip_longest(stock.take(CHECKED_BATCHES), project.take(CHECKED_BATCHES)):
    if a is None or b is None:
      return False
    pairs = zip(tf.nest.flatten(a, True), tf.nest.flatten(b, True))
    if not all(np.array_equal(x.numpy(), y.numpy()) for x, y in pairs):
      return False
  return True


def batch_size(label) -> tf.Tensor:
  shape = label.dense_shape if isinstance(label, tf.SparseTensor) else tf.shape(label, tf.int64)
  return shape[0]


@tf.function
def take(iterator, steps: tf.Tensor) -> tf.Tensor:
  """Examples in the next `steps` batches, taken inside TensorFlow as Keras's fit takes them
  (a Python loop over the iterator would time Python building each batch's tensors)."""
  examples = tf.constant(0, tf.int64)
  for _ in tf.range(steps):
    examples += batch_size(iterator.get_next()[1])
  return examples


def read(iterator, steps: int) -> tuple:
  """(seconds, examples) of the next `steps` batches."""
  started = time.monotonic()
  examples = int(take(iterator, tf.constant(steps)))
  return time.monotonic() - started, examples


def measure(records: int, rounds: int, batch: int) -> dict:
  schema = raw_schema()
  rows = raw_examples(schema, min(records, 15_000))
  with tempfile.TemporaryDirectory() as folder:
    started = time.monotonic()
    transformed = transform(rows, schema, os.path.join(folder, 'transform'))
    transform_seconds = time.monotonic() - started
    output = tft.TFTransformOutput(os.path.join(folder, 'transform', 'graph'))
    files = {
      'transformed': write_shards(os.path.join(folder, 'transformed'), transformed, records),
      'raw': write_shards(os.path.join(folder, 'raw'), rows, records),
    }
    megabytes = {
      case: sum(os.path.getsize(p) for p in tf.io.gfile.glob(pattern)) / 1e6
      for case, pattern in files.items()
    }
    same = {
      'transformed': same_batches(
        files['transformed'], output.transformed_metadata.schema, TRANSFORMED_LABEL
      ),
      'raw': same_batches(files['raw'], schema, RAW_LABEL),
    }
    iterators = {}
    for name, accessor in accessors().items():
      built = {
        # The module's own function, unmodified (a list of patterns, as fn_args.train_files).
        'transformed': taxi._input_fn([files['transformed']], accessor, output, batch),
        'raw': raw_input_fn(files['raw'], accessor, schema, batch),
      }
      for case in CASES:
        iterators[case, name] = iter(built[case])
    steps = max(1, records // batch)
    for iterator in iterators.values():  # warm-up: traces, the shuffle buffer, the page cache
      read(iterator, steps)
    times = {key: [] for key in iterators}
    for round_number in range(rounds):
      order = ACCESSORS if round_number % 2 == 0 else ACCESSORS[::-1]
      for case in CASES:
        for name in order:
          seconds, examples = read(iterators[case, name], steps)
          assert examples == steps * batch, (case, name, examples)  # the same work measured
          times[case, name].append(seconds)
      print(
        f'round {round_number + 1}/{rounds}: '
        + ', '.join(
          f'{case} project/stock {times[case, "stock"][-1] / times[case, "project"][-1]:.2f}'
          for case in CASES
        ),
        flush=True,
      )
  figures = {
    'records': records,
    'batch': batch,
    'rounds': rounds,
    'cores': os.cpu_count(),
    'transform_seconds': round(transform_seconds, 1),
    'megabytes': {case: round(mb, 2) for case, mb in megabytes.items()},
    'cases': {},
  }
  for case in CASES:
    examples = steps * batch
    rates = {name: examples / statistics.median(times[case, name]) for name in ACCESSORS}
    per_round = [s / p for s, p in zip(times[case, 'stock'], times[case, 'project'])]
    figures['cases'][case] = {
      'examples_per_s': rates,
      'ratio': statistics.median(per_round),
      'ratio_rounds': per_round,
      'ratio_spread': figures_file.ratio_rounds(times[case, 'stock'], times[case, 'project']),
      'same_batches': same[case],
    }
  return figures


def report(figures: dict) -> None:
  print(
    f'{figures["records"]:,} taxi records, batch {figures["batch"]}, {figures["cores"]} cores, '
    f'median of {figures["rounds"]} rounds (tf.Transform took {figures["transform_seconds"]} s):'
  )
  for case, f in figures['cases'].items():
    low, high = f['ratio_spread']
    print(
      f'  {case:12s} stock {f["examples_per_s"]["stock"]:>9,.0f} examples/s  project '
      f'{f["examples_per_s"]["project"]:>9,.0f} examples/s  project/stock {f["ratio"]:.2f}x '
      f'(rounds {low:.2f}-{high:.2f}); unshuffled, '
      + ('the same batch for batch' if f['same_batches'] else 'DIFFERS')
    )


def main(argv=None) -> None:
  parser = figures_file.parser(__doc__, quick='20,000 records, 3 rounds')
  parser.add_argument('--records', type=int, default=0, help='default 120,000 (quick: 20,000)')
  parser.add_argument('--rounds', type=int, default=0, help='default 5 (quick: 3)')
  parser.add_argument('--batch', type=int, default=BATCH, help=f'default {BATCH}')
  args = parser.parse_args(argv)
  records = args.records or (20_000 if args.quick else 120_000)
  rounds = args.rounds or (3 if args.quick else 5)
  figures = measure(records, rounds, args.batch)
  report(figures)
  figures_file.save(figures, args.json)


if __name__ == '__main__':
  main()
