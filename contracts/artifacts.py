"""Names of the files the project writes inside TFX artifacts, and how shards are named.

Examples artifact (ImageExampleGen, TextExampleGen):
  Split-<split>/data-00000-of-0000N[.gz]   TFRecord shards
  labels.txt            the label vocabulary: line i holds the name of label id i
  excluded_files.csv    images: path,reason of every file that was not turned into a record
  image_meta.json       images: encoding, compression, counts, most common size, channels,
                        how many were turned upright by their EXIF orientation
  duplicates.json       the largest groups of duplicates (kept in one split) and the examples
                        whose content is filed under two labels (components/duplicates.py)
  vocabulary.txt        text: line i holds the word of token id i
  text_meta.json        text: columns, counts, vocabulary size, labels
  id_columns.json       CSV and tf.Example rows: the id columns, given (--id-column) and detected
                        (components/id_columns.py): left out of the model's inputs
ModelRun artifact (trainer/task.py):
  input_damage.json     what the input pipeline lost to damaged shards
  training.json         per-epoch history and the input check (the run report reads it)
ExampleStatistics artifact (StatisticsGen):
  Split-<split>/FeatureStats.pb   TFDV's DatasetFeatureStatisticsList
HyperParameters artifact (TFX's Tuner, tuner_fn trainer.tuning.tuner_fn):
  best_hyperparameters.txt   KerasTuner's HyperParameters config of the best trial
TunerResults artifact (the same Tuner):
  tuner_results.json    every finished trial, best first: trial_id, score, its values
InfraBlessing artifact (components/serving_check):
  serving_check.json    load time, p50 / p99 per signature and the problems found
Any artifact a Beam file sink writes into (TFMA's, the BulkInferrer's, StatisticsGen's, TFX's
ExampleGens'):
  beam-temp-*/          a sink's temporary folder; one a job left behind (a retried or recovered
                        job's earlier attempt) is removed once the component succeeds
                        (remove_beam_temp)
"""

import math
import os
from typing import Iterable, List

LABELS_FILE = 'labels.txt'
EXCLUDED_FILE = 'excluded_files.csv'
IMAGE_META_FILE = 'image_meta.json'
DUPLICATES_FILE = 'duplicates.json'
TEXT_META_FILE = 'text_meta.json'
VOCABULARY_FILE = 'vocabulary.txt'
ID_COLUMNS_FILE = 'id_columns.json'
DAMAGE_FILE = 'input_damage.json'
TRAINING_FILE = 'training.json'
# ModelRun of a module file's run_fn (trainer/module_file.py): {'label_mean': the transformed train
# split's mean label}, what the Evaluator's mean predictor predicts (training.json is the project's).
LABEL_FIGURES_FILE = 'label_figures.json'
SERVING_CHECK_FILE = 'serving_check.json'
TUNER_RESULTS_FILE = 'tuner_results.json'  # TFX's Tuner: every finished trial, best first
STATISTICS_FILE = 'FeatureStats.pb'
# ImageExampleGen's count of images stored upright by their EXIF orientation: an image_meta.json
# key and a custom property of the Examples artifact (metadata/summary.py reports it).
TURNED_UPRIGHT = 'num_turned_upright'
REPEATED_HEADERS = 'num_repeated_headers'  # CSV rows that repeat the header, skipped
NON_FINITE_CELLS = 'num_non_finite_cells'  # CSV cells inf / nan, read as missing
# CSV string columns read as numbers written as text (contracts/text_numbers.py), JSON
# {column: {'placeholders': cells, 'other': cells}}: their cells that are no number, missing.
NUMBERS_FROM_TEXT = 'numbers_from_text'
# CSV string columns whose cells are mostly numbers no rule reads (`12~5`), JSON {column: [cells
# shown]}: named in the summary, never silent.
NUMBERS_UNREAD = 'numbers_unread'
# The CSV files' dialect when not plain commas (csv_dialect.Dialect.described), for the summary.
CSV_DIALECT = 'csv_dialect'
# The CSV and tf.Example ExampleGens' id columns found in the data, not given (JSON list): a custom
# property of the Examples artifact (components/id_columns.py; metadata/summary.py reports them).
DETECTED_ID_COLUMNS = 'detected_id_columns'

# The prefix of a Beam file sink's temporary folder (apache_beam.io.filebasedsink), made beside
# the files it writes.
BEAM_TEMP_PREFIX = 'beam-temp-'

# TFDV's schema feature that holds a SequenceExample's feature lists.
SEQUENCE_STRUCT = '##SEQUENCE##'


def shard_path(uri: str, split: str, index: int, count: int, gzip: bool = False) -> str:
  return os.path.join(
    uri, f'Split-{split}', f'data-{index:05d}-of-{count:05d}' + ('.gz' if gzip else '')
  )


def shard_count(total_bytes: int, shard_size_mb: float) -> int:
  """Shards needed to keep each near `shard_size_mb`."""
  return max(1, math.ceil(total_bytes / (shard_size_mb * 1024 * 1024)))


def statistics_path(uri: str, split: str) -> str:
  return os.path.join(uri, f'Split-{split}', STATISTICS_FILE)


def shard_records(path: str):
  """A tf.data dataset of one TFRecord shard's serialized records, GZIP by its .gz name (records
  are CRC-checked: a damaged shard fails where it is read)."""
  import tensorflow as tf

  return tf.data.TFRecordDataset(path, 'GZIP' if path.endswith('.gz') else '')


def record_count(files) -> int:
  """The records in TFRecord shards, counted by tf.data in C++ (~0.1 s for 40,000 records): in
  batches, as Dataset.reduce run eagerly keeps its traced function for the rest of the process
  (a warm `run --watch` counts on every run: utils/tf_memory.py)."""
  import tensorflow as tf

  return sum(int(n) for path in files for n in shard_records(path).batch(8192).map(tf.size))


def remove_beam_temp(uris: Iterable[str]) -> List[str]:
  """Removes the Beam file sinks' temporary folders (`beam-temp-*`, at any depth) left in the
  artifact folders `uris` once their component has succeeded; returns the folders removed.

  A sink removes its own when it finalizes; a job that lost a worker and recovered (Flink
  restarts its tasks) leaves its earlier attempt's, empty or with that attempt's unfinished
  files, never the files the artifact holds (those were renamed out of the sink's folder)."""
  from tfx.dsl.io import fileio

  found = []
  for uri in uris:
    if not fileio.isdir(uri):
      continue
    for root, folders, _ in fileio.walk(uri):
      found += [os.path.join(root, f) for f in folders if f.startswith(BEAM_TEMP_PREFIX)]
  removed = []
  for path in sorted(found):  # a folder inside one removed already went with it
    if not any(path.startswith(os.path.join(outer, '')) for outer in removed):
      fileio.rmtree(path)
      removed.append(path)
  return removed
