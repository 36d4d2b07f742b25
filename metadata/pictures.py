"""The run report's pictures of data and predictions (matplotlib figures; report.py embeds them).

- sample_grid: a few eval images of every class (image data);
- misclassified: eval images the candidate model gets wrong, with true and predicted class
  (its serving_default signature on the eval records of eval_records: at most MAX_PREDICTED);
- class_recall: recall per class of the candidate next to the serving model;
- confusion_matrix: TFMA's confusion matrix as a heat map;
- histograms: StatisticsGen's histogram of every numeric feature (tabular data).
Each returns None when the run left nothing to draw.
"""

import os
from typing import Dict, List, Optional, Sequence

import numpy as np

from contracts import image_record, serving

PER_CLASS = 4  # sample images per class
MAX_SHOWN = 16  # misclassified images drawn
MAX_PREDICTED = 512  # eval records the model is asked about
MAX_HISTOGRAMS = 12


def pyplot():
  """matplotlib's pyplot on the Agg backend (no display); the report's charts use it too."""
  import matplotlib

  matplotlib.use('Agg')
  # Class names and column names are drawn as they are: '$x$' is not mathtext here.
  matplotlib.rcParams['text.parse_math'] = False
  import matplotlib.pyplot as plt

  return plt


def eval_records(examples_uri: str, limit: int = MAX_PREDICTED):
  """(serialized records, parsed features) of the first `limit` eval records, in shard order:
  read once, drawn by sample_grid and misclassified."""
  import tensorflow as tf

  shards = sorted(tf.io.gfile.glob(os.path.join(examples_uri, 'Split-eval', '*')))
  if not shards:
    return [], {}
  compression = 'GZIP' if shards[0].endswith('.gz') else ''
  records = [
    r.numpy() for r in tf.data.TFRecordDataset(shards, compression_type=compression).take(limit)
  ]
  if not records:
    return [], {}
  return records, tf.io.parse_example(records, image_record.parse_spec())


def _pixels(parsed: dict, index: int, encoding: str) -> np.ndarray:
  import tensorflow as tf

  payload = parsed[image_record.IMAGE_KEY][index]
  if encoding == image_record.RAW:
    size_keys = (image_record.HEIGHT_KEY, image_record.WIDTH_KEY, image_record.CHANNELS_KEY)
    shape = [int(parsed[k][index]) for k in size_keys]
    image = tf.reshape(tf.io.decode_raw(payload, tf.uint8), shape)
  else:
    image = tf.io.decode_image(payload, expand_animations=False)
  image = image.numpy()
  return image[:, :, 0] if image.shape[-1] == 1 else image[:, :, :3]


def _grid(tiles: List[tuple], columns: int, title: str, label: str):
  """tiles: (pixels or None, caption); a figure of them, `columns` wide."""
  plt = pyplot()
  rows = -(-len(tiles) // columns)
  figure, axes = plt.subplots(
    rows, columns, figsize=(max(3, 1.3 * columns), 0.4 + 1.5 * rows), num=label, squeeze=False
  )
  for axis in axes.flat:
    axis.axis('off')
  for axis, (pixels, caption) in zip(axes.flat, tiles):
    if pixels is not None:  # None: an empty place in the grid
      axis.imshow(pixels, cmap='gray' if pixels.ndim == 2 else None)
      axis.set_title(caption, fontsize=7)
  figure.suptitle(title, fontsize=9)
  figure.tight_layout()
  return figure


def sample_grid(records: list, parsed: dict, names: Sequence[str], encoding: str):
  """PER_CLASS eval images of each class (the first in the shards), one row per class."""
  if not records:
    return None
  labels = parsed[image_record.LABEL_KEY].numpy()
  tiles = []
  for class_id, name in enumerate(names):
    found = [i for i in range(len(records)) if labels[i] == class_id][:PER_CLASS]
    tiles += [(_pixels(parsed, i, encoding), name) for i in found]
    tiles += [(None, '')] * (PER_CLASS - len(found))
  return _grid(tiles, PER_CLASS, 'eval images per class', 'sample images per class')


def misclassified(model_dir: str, records: list, parsed: dict, names: Sequence[str], encoding: str):
  """Eval images whose top predicted class is not their label: 'true → predicted'."""
  import tensorflow as tf

  if not records:
    return None
  serve = tf.saved_model.load(model_dir).signatures[serving.SERVING_DEFAULT]
  predicted = serve(examples=tf.constant(records))[serving.CLASS_IDS].numpy()
  labels = parsed[image_record.LABEL_KEY].numpy()
  wrong = [i for i in range(len(records)) if predicted[i] != labels[i]]
  if not wrong:
    return None
  name = lambda i: names[i] if 0 <= i < len(names) else str(i)
  tiles = [
    (_pixels(parsed, i, encoding), f'{name(labels[i])} → {name(predicted[i])}')
    for i in wrong[:MAX_SHOWN]
  ]
  title = f'{len(wrong)} of the first {len(records)} eval images misclassified (true → predicted)'
  return _grid(tiles, min(8, len(tiles)), title, 'misclassified eval images')


def class_recall(names: Sequence[str], candidate: List[Optional[float]], serving: Optional[list]):
  plt = pyplot()
  figure, axes = plt.subplots(figsize=(max(4, 0.5 * len(names) + 2), 3), num='recall per class')
  width = 0.4 if serving else 0.8
  positions = np.arange(len(names))
  zero = lambda values: [value or 0.0 for value in values]  # None: no eval example of the class
  axes.bar(positions, zero(candidate), width, label='this model')
  if serving:
    axes.bar(positions + width, zero(serving[: len(names)]), width, label='serving model')
  axes.set_xticks(positions + (width / 2 if serving else 0), names, fontsize=8)
  axes.set_ylim(0, 1.05)
  axes.set_ylabel('recall (eval split)')
  axes.legend(fontsize=8)
  return figure


def confusion_matrix(matrix: List[List[float]], names: Sequence[str]):
  """rows: true class, columns: predicted class; names: by class id."""
  plt = pyplot()
  size = len(matrix)
  labels = names if len(names) == size else [str(i) for i in range(size)]
  figure, axes = plt.subplots(figsize=(1 + 0.45 * size, 1 + 0.4 * size), num='confusion matrix')
  axes.imshow(matrix, cmap='Blues')
  for row in range(size):
    for column in range(size):
      if matrix[row][column]:
        axes.text(column, row, f'{matrix[row][column]:g}', ha='center', va='center', fontsize=8)
  axes.set_xticks(range(size), labels, rotation=90)
  axes.set_yticks(range(size), labels)
  axes.set_xlabel('predicted class')
  axes.set_ylabel('true class')
  return figure


def histograms(dataset) -> Optional[object]:
  """Small multiples of StatisticsGen's standard histogram of each numeric feature."""
  found: Dict[str, object] = {}
  for feature in dataset.features:
    if feature.HasField('num_stats') and len(found) < MAX_HISTOGRAMS:
      standard = [h for h in feature.num_stats.histograms if h.type == h.STANDARD]
      if standard and standard[0].buckets:
        found['.'.join(feature.path.step) or feature.name] = standard[0].buckets
  if not found:
    return None
  plt = pyplot()
  columns = min(4, len(found))
  rows = -(-len(found) // columns)
  figure, axes = plt.subplots(
    rows,
    columns,
    figsize=(3 * columns, 2.2 * rows),
    num='numeric feature histograms',
    squeeze=False,
  )
  for axis in axes.flat:
    axis.axis('off')
  for axis, (name, buckets) in zip(axes.flat, found.items()):
    axis.axis('on')
    axis.bar(
      [b.low_value for b in buckets],
      [b.sample_count for b in buckets],
      width=[max(b.high_value - b.low_value, 1e-9) for b in buckets],
      align='edge',
    )
    axis.set_title(name, fontsize=8)
    axis.tick_params(labelsize=7)
  figure.tight_layout()
  return figure
