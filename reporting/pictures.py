"""The run report's pictures of data and predictions (matplotlib figures; report.py embeds them
as inline SVG whose text stays text, so that the browser draws class names of any script).

- sample_grid: a few eval images of each class (image data; the first MAX_SAMPLE_CLASSES);
- misclassified: eval images the candidate model gets wrong, with true and predicted class
  (its answers gathered by metadata/eval_predictions.py: nothing here reads records or models);
- label_distribution: examples per label value and split (the MAX_BARS largest);
  number_distribution: a regression label's histogram per split, as densities on one axis;
- class_recall: recall per class of the candidate next to the serving model (the MAX_BARS
  lowest);
- confusion_matrix: TFMA's confusion matrix as a heat map, up to MAX_MATRIX classes (beyond,
  report.py lists the most confused pairs);
- histograms: StatisticsGen's histogram of every numeric feature (tabular data);
- regression: a regression model's predictions against the label, its residuals against the
  prediction and its errors' histogram (metadata/eval_predictions.py's numbers).
Each returns None when the run left nothing to draw. The report's tables hold every class, so a
chart may leave classes out.
"""

from typing import Dict, List, Optional, Sequence
import warnings

import numpy as np

from contracts import image_record
from records import image_codec

PER_CLASS = 4  # sample images per class
MAX_SHOWN = 16  # misclassified images drawn
MAX_HISTOGRAMS = 12
# Limits that keep a chart readable on the report's page (~1,100 px wide) at any class count: a
# bar or row needs ~0.3 in (30 px) for its 8 pt name, and a chart much past 1,000 px is either
# scaled down until no name can be read or has to be scrolled (150 classes drew 6,000 px wide).
MAX_BARS = 25  # classes in a per-class bar chart: 25 rows of 0.32 in ≈ 900 px
MAX_MATRIX = 20  # classes of a heat map: 20 cells of 0.45 in ≈ 900 px, each count still legible
MAX_SAMPLE_CLASSES = 12  # rows of the sample grid, 1.5 in each: ≈ 1,800 px
MAX_NAME = 32  # characters of a class name in a chart (the tables have the whole name)


def _settings() -> None:
  """matplotlib's settings for the report's charts (rcParams, process-wide)."""
  import matplotlib

  # Class names and column names are drawn as they are: '$x$' is not mathtext here.
  matplotlib.rcParams['text.parse_math'] = False
  # matplotlib measures text with DejaVu Sans, which lacks CJK and other scripts; the report's
  # SVG keeps text as text and the browser draws it with a font that has the glyphs.
  warnings.filterwarnings('ignore', message='Glyph .* missing from font', category=UserWarning)


def new_figure(label: str, figsize: tuple, rows: int = 1, columns: int = 1):
  """(figure, 2-d array of its axes): a figure of its own, outside pyplot's registry, so that a
  second chart of the same label is not drawn into the first one."""
  from matplotlib.figure import Figure

  _settings()
  figure = Figure(figsize=figsize)
  figure.set_label(label)
  return figure, figure.subplots(rows, columns, squeeze=False)


def short(name) -> str:
  """A class name cut to MAX_NAME characters, for a chart."""
  name = str(name)
  return name if len(name) <= MAX_NAME else name[: MAX_NAME - 1] + '…'


def lowest(values: Sequence[Optional[float]], limit: int) -> List[int]:
  """Indices of the `limit` lowest values, lowest first; None (not measured) after the others,
  ties by index."""
  order = sorted(range(len(values)), key=lambda i: (values[i] is None, values[i] or 0.0, i))
  return order[:limit]


def parsed_images(records: list):
  """(records, parsed features) of serialized image records (report_facts' eval_predictions):
  decoded once, drawn by sample_grid and misclassified."""
  import tensorflow as tf

  if not records:
    return [], {}
  return records, tf.io.parse_example(records, image_codec.parse_spec())


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


def _rgb(pixels: np.ndarray) -> np.ndarray:
  """uint8 RGB pixels of a gray (2-d) or colour image."""
  return np.repeat(pixels[:, :, None], 3, axis=2) if pixels.ndim == 2 else pixels


def mosaic(tiles: List[tuple], columns: int, side: int) -> np.ndarray:
  """One white image of `side`-pixel cells, `columns` wide: each tile's pixels scaled (nearest
  neighbour, aspect kept) to fit its cell less a white margin, and centred in it."""
  import PIL.Image

  rows = -(-len(tiles) // columns)
  inner = side - 2 * max(2, side // 16)
  mosaic = np.full((rows * side, columns * side, 3), 255, np.uint8)
  for index, (pixels, _) in enumerate(tiles):
    if pixels is None:
      continue
    height, width = pixels.shape[:2]
    scale = inner / max(height, width)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    fitted = np.asarray(PIL.Image.fromarray(_rgb(pixels)).resize(size, PIL.Image.NEAREST))
    top = (index // columns) * side + (side - size[1]) // 2
    left = (index % columns) * side + (side - size[0]) // 2
    mosaic[top : top + size[1], left : left + size[0]] = fitted
  return mosaic


def _grid(tiles: List[tuple], columns: int, title: str, label: str):
  """tiles: (pixels or None, caption); a figure of them, `columns` wide: one image of all the
  tiles with each caption above its cell (one axes: ~5x faster to draw than one per tile)."""
  rows = -(-len(tiles) // columns)
  figure, [[axes]] = new_figure(label, (max(3, 1.3 * columns), 0.4 + 1.5 * rows))
  side = max(max(p.shape[:2]) for p, _ in tiles if p is not None)
  side = max(side, 32)  # small images (8x8 digits) are scaled up, sharp
  gap = side // 4  # room for a caption above each cell
  cells = mosaic(tiles, columns, side)
  spaced = np.full((rows * (side + gap), columns * side, 3), 255, np.uint8)
  for row in range(rows):
    spaced[row * (side + gap) + gap : (row + 1) * (side + gap)] = cells[
      row * side : (row + 1) * side
    ]
  axes.imshow(spaced, interpolation='nearest')
  axes.axis('off')
  for index, (pixels, caption) in enumerate(tiles):
    if pixels is not None and caption:
      x = (index % columns + 0.5) * side
      y = (index // columns) * (side + gap) + gap * 0.9
      axes.text(x, y, caption, fontsize=7, ha='center', va='bottom')
  figure.suptitle(title, fontsize=9)
  figure.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=1 - 0.4 / (0.4 + 1.5 * rows))
  return figure


def sample_grid(records: list, parsed: dict, names: Sequence[str], encoding: str):
  """PER_CLASS eval images of each class (the first in the shards), one row per class, for the
  first MAX_SAMPLE_CLASSES classes."""
  if not records:
    return None
  labels = parsed[image_record.LABEL_KEY].numpy()
  tiles = []
  for class_id, name in enumerate(names[:MAX_SAMPLE_CLASSES]):
    found = [i for i in range(len(records)) if labels[i] == class_id][:PER_CLASS]
    tiles += [(_pixels(parsed, i, encoding), short(name)) for i in found]
    tiles += [(None, '')] * (PER_CLASS - len(found))
  title = (
    'eval images per class'
    if len(names) <= MAX_SAMPLE_CLASSES
    else f'eval images of the first {MAX_SAMPLE_CLASSES} of {len(names)} classes'
  )
  return _grid(tiles, PER_CLASS, title, 'sample images per class')


def misclassified(
  predicted: Sequence[int], records: list, parsed: dict, names: Sequence[str], encoding: str
):
  """Eval images whose top predicted class (report_facts' eval_predictions.class_ids) is not
  their label: 'true → predicted'."""
  if not records:
    return None
  labels = parsed[image_record.LABEL_KEY].numpy()
  wrong = [i for i in range(len(records)) if predicted[i] != labels[i]]
  if not wrong:
    return None
  name = lambda i: short(names[i]) if 0 <= i < len(names) else str(i)
  tiles = [
    (_pixels(parsed, i, encoding), f'{name(labels[i])} → {name(predicted[i])}')
    for i in wrong[:MAX_SHOWN]
  ]
  title = f'{len(wrong)} of the first {len(records)} eval images misclassified (true → predicted)'
  return _grid(tiles, min(8, len(tiles)), title, 'misclassified eval images')


def regression(predicted: np.ndarray, actual: np.ndarray, label: str):
  """Three panels of a regression model on eval rows: predicted against actual (the diagonal
  is a perfect model), the residual (actual − predicted) against the prediction (a trend or a
  funnel is error the model could learn), and the histogram of the errors."""
  if not len(predicted):
    return None
  figure, [[against, residuals, errors]] = new_figure(
    'predictions against the label', (12, 3.6), 1, 3
  )
  dot = dict(s=8, alpha=0.5, linewidths=0)
  low = float(min(predicted.min(), actual.min()))
  high = float(max(predicted.max(), actual.max()))
  against.scatter(actual, predicted, **dot)
  against.plot([low, high], [low, high], color='#b00020', linewidth=1, label='predicted = actual')
  against.set_xlabel(f'actual {short(label)}')
  against.set_ylabel(f'predicted {short(label)}')
  against.legend(fontsize=8, loc='upper left')
  residual = actual - predicted
  residuals.scatter(predicted, residual, **dot)
  residuals.axhline(0, color='#b00020', linewidth=1)
  residuals.set_xlabel(f'predicted {short(label)}')
  residuals.set_ylabel('residual (actual − predicted)')
  errors.hist(-residual, bins=min(40, max(5, len(residual) // 10)))
  errors.axvline(0, color='#b00020', linewidth=1)
  errors.set_xlabel('error (predicted − actual)')
  errors.set_ylabel('eval rows')
  figure.suptitle(f'the first {len(predicted):,} eval rows', fontsize=9)
  figure.tight_layout()
  return figure


def largest(per_split: Dict[str, list], limit: int = MAX_BARS) -> list:
  """The label values label_distribution draws: the first split's, in order, up to `limit`;
  else the `limit` with the most examples over all splits, largest first."""
  values = [value for value, _ in next(iter(per_split.values()))]
  if len(values) <= limit:
    return values
  total = {v: 0 for v in values}
  for pairs in per_split.values():
    for value, count in pairs:
      if value in total:
        total[value] += count
  return sorted(values, key=lambda v: -total[v])[:limit]  # stable: ties in the first order


def label_distribution(key: str, per_split: Dict[str, list], exact: bool):
  """Examples per label value (bars) and split; per_split: {split: [(value, count)]}, the first
  split's values in order. Beyond MAX_BARS values, the MAX_BARS largest (by their total)."""
  every = [value for value, _ in next(iter(per_split.values()))]
  counts = {split: dict(pairs) for split, pairs in per_split.items()}
  values = largest(per_split)
  if len(values) < len(every):
    title = f'the {len(values)} largest of {len(every)} {key} values'
  else:
    title = f'{key} per split' + ('' if exact else ' (StatisticsGen histogram buckets)')
  figure, [[axes]] = new_figure(f'label distribution ({key})', (8, 3))
  width = 0.8 / len(per_split)
  for index, (split, by_value) in enumerate(counts.items()):
    axes.bar(
      [i + index * width for i in range(len(values))],
      [by_value.get(v, 0) for v in values],
      width,
      label=split,
    )
  axes.set_xticks([i + width * (len(per_split) - 1) / 2 for i in range(len(values))])
  slanted = len(values) > 12 or max((len(str(v)) for v in values), default=0) > 8
  axes.set_xticklabels(
    [short(v) for v in values],
    rotation=45 if slanted else 0,
    ha='right' if slanted else 'center',
    fontsize=8,
  )
  axes.set_ylabel('examples')
  axes.set_title(title)
  axes.legend(fontsize=8, loc='upper left', bbox_to_anchor=(1.01, 1))
  return figure


def number_distribution(key: str, buckets: Dict[str, list]):
  """A number's distribution per split as densities on one axis, so that splits of other sizes
  and buckets compare; buckets: {split: StatisticsGen's quantiles histogram buckets} (a bucket
  per tenth of the split: dense where the values are, unlike equal widths that put a skewed
  label in one bucket). The axis ends where the tail gets thin (the 90 % quantile plus the
  10-90 % range) and the title says so. None without buckets."""
  buckets = {split: found for split, found in buckets.items() if found}
  if not buckets:
    return None
  figure, [[axes]] = new_figure(f'label distribution ({key})', (8, 3))
  low = min(found[0].low_value for found in buckets.values())
  high = max(found[-1].high_value for found in buckets.values())
  ends = []
  for split, found in buckets.items():
    total = sum(b.sample_count for b in found) or 1
    edges = [found[0].low_value] + [b.high_value for b in found]
    density = [b.sample_count / total / max(b.high_value - b.low_value, 1e-12) for b in found]
    axes.stairs(density, edges, label=split, linewidth=1.5)
    if len(found) >= 10:  # deciles: the 10 % and 90 % quantiles are edges 1 and -2
      ends.append(edges[-2] + (edges[-2] - edges[1]))
  shown = min(high, max(ends)) if ends else high
  title = f'{short(key)} per split (StatisticsGen quantiles)'
  if shown < high:
    axes.set_xlim(low, shown)
    title += f'; up to {shown:,.4g} of {high:,.4g}'
  axes.set_xlabel(short(key))
  axes.set_ylabel('share of the split per unit')
  axes.set_title(title, fontsize=10)
  axes.legend(fontsize=8, loc='upper left', bbox_to_anchor=(1.01, 1))
  return figure


def class_recall(names: Sequence[str], candidate: List[Optional[float]], serving: Optional[list]):
  """Horizontal bars of recall per class: every class by id up to MAX_BARS, else the MAX_BARS
  of lowest recall, the lowest on top. None (no eval example of the class) is drawn as no bar."""
  shown = lowest(candidate, MAX_BARS) if len(names) > MAX_BARS else list(range(len(names)))
  row = 0.32 if serving else 0.25  # inches per class
  figure, [[axes]] = new_figure('recall per class', (7, 0.9 + row * len(shown)))
  height = 0.4 if serving else 0.7
  positions = np.arange(len(shown))
  pick = lambda values: [(values[i] if i < len(values) else None) or 0.0 for i in shown]
  axes.barh(positions, pick(candidate), height, label='this model')
  if serving:
    axes.barh(positions + height, pick(serving), height, label='serving model')
  axes.set_yticks(positions + (height / 2 if serving else 0), [short(names[i]) for i in shown])
  axes.tick_params(axis='y', labelsize=8)
  axes.invert_yaxis()  # the first class (or the lowest recall) on top
  axes.set_xlim(0, 1.05)
  axes.set_xlabel('recall (eval split)')
  if len(shown) < len(names):
    axes.set_title(f'the {len(shown)} of {len(names)} classes with the lowest recall', fontsize=9)
  axes.legend(fontsize=8, loc='lower left', bbox_to_anchor=(1.01, 0))  # beside, not on, bars
  return figure


def confusion_matrix(matrix: List[List[float]], names: Sequence[str]):
  """rows: true class, columns: predicted class; names: by class id (an id past them is shown
  as the id). None beyond MAX_MATRIX classes: such a heat map cannot be read."""
  size = len(matrix)
  if size > MAX_MATRIX:
    return None
  labels = [short(names[i]) if i < len(names) else str(i) for i in range(size)]
  figure, [[axes]] = new_figure('confusion matrix', (1 + 0.45 * size, 1 + 0.4 * size))
  axes.imshow(matrix, cmap='Blues')
  dark = 0.6 * max(max(row) for row in matrix)  # cells above it are dark blue: white counts
  for row in range(size):
    for column in range(size):
      count = matrix[row][column]
      if count:
        color = 'white' if count > dark else 'black'
        axes.text(column, row, f'{count:g}', ha='center', va='center', fontsize=8, color=color)
  axes.set_xticks(range(size), labels, rotation=90)
  axes.set_yticks(range(size), labels)
  axes.set_xlabel('predicted class')
  axes.set_ylabel('true class')
  return figure


def histograms(features: Dict[str, object]) -> Optional[object]:
  """Small multiples of StatisticsGen's standard histogram of each numeric feature; features:
  {name: FeatureNameStatistics} of one split."""
  found: Dict[str, object] = {}
  for name, feature in features.items():
    if feature.HasField('num_stats') and len(found) < MAX_HISTOGRAMS:
      standard = [h for h in feature.num_stats.histograms if h.type == h.STANDARD]
      if standard and standard[0].buckets:
        found[name] = standard[0].buckets
  if not found:
    return None
  columns = min(4, len(found))
  rows = -(-len(found) // columns)
  figure, axes = new_figure('numeric feature histograms', (3 * columns, 2.2 * rows), rows, columns)
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
