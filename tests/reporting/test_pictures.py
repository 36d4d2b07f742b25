"""reporting/pictures.py and the report's per-class charts built from it: names are drawn as they
are written, in any script, and the charts stay readable at any class count (synthetic metrics,
no pipeline run)."""

import html
import io
import re

import numpy as np

from reporting import html as report_html
from reporting import pictures, report_data, report_model

NON_LATIN = ['猫', '犬', 'ねこ', '고양이', 'кошка', 'قطة']


def _metrics(count: int, seed: int = 0):
  """names, recall, precision, serving recall and a confusion matrix of `count` classes."""
  rng = np.random.default_rng(seed)
  names = [f'{NON_LATIN[i % len(NON_LATIN)]}_{i}' for i in range(count)]
  recall = [float(r) for r in rng.uniform(0.5, 1.0, count)]
  recall[7] = None  # a class without eval examples
  precision = [float(p) for p in rng.uniform(0.5, 1.0, count)]
  serving = [float(r) for r in rng.uniform(0.5, 1.0, count)]
  matrix = [[0.0] * count for _ in range(count)]
  for true in range(count):
    matrix[true][true] = 20.0
    matrix[true][(true * 7 + 1) % count] += float(1 + true % 3)
  return names, recall, precision, serving, matrix


def _svgs(page: str) -> list:
  return re.findall(r'<svg\b.*?</svg>', page, re.S)


def _size_px(svg: str) -> tuple:
  """(width, height) in CSS pixels of an inline SVG that matplotlib sized in points."""
  width, height = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups()
  return float(width) * 96 / 72, float(height) * 96 / 72


def _texts(svg: str) -> list:
  return [html.unescape(t) for t in re.findall(r'<text\b[^>]*>([^<]*)</text>', svg)]


def test_class_names_that_look_like_mathtext_are_drawn_as_text():
  names = ['$x_$', '$\\foo$', '$^$']  # matplotlib's mathtext fails on each of these
  for figure in (
    pictures.class_recall(names, [0.5, 1.0, None], [0.4, 0.9, 0.1]),
    pictures.confusion_matrix([[1, 0, 0], [0, 1, 0], [0, 0, 1]], names),
  ):
    drawn = io.BytesIO()
    figure.savefig(drawn, format='png')
    assert drawn.getvalue().startswith(b'\x89PNG')
    shown = [t.get_text() for axis in figure.axes for t in axis.get_yticklabels()]
    assert names[0] in shown
    assert names[0] in _texts(report_html.chart(figure))  # in the report: as text, unparsed


def test_non_latin_class_names_are_text_in_the_report_not_glyphs_of_a_font():
  names = ['猫', '犬', '$x_$']
  page = report_model.per_class_html(
    names, [0.9, 0.5, 0.7], [0.8, 0.6, 0.7], None, [[9, 1, 0], [4, 5, 1], [0, 0, 8]]
  )
  charts = _svgs(page)
  assert len(charts) == 2  # recall per class, confusion matrix
  for chart in charts:
    assert {'猫', '犬', '$x_$'} <= set(_texts(chart)), _texts(chart)
    # svg.fonttype 'path' would draw each glyph as a path defined from DejaVu Sans (boxes for 猫)
    assert 'DejaVuSans-' not in chart
  assert '<td>猫</td>' in page and '<td>犬</td>' in page  # the table below the chart


def test_the_confusion_matrix_is_labelled_with_class_names():
  names = ['猫', '犬', 'bird']
  figure = pictures.confusion_matrix([[3, 1], [0, 4]], names)  # the last class never seen
  assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ['猫', '犬']
  assert [t.get_text() for t in figure.axes[0].get_yticklabels()] == ['猫', '犬']
  page = report_model.confusion_html([[3, 1, 0], [0, 4, 0], [0, 0, 0]], names)
  assert {'猫', '犬', 'bird'} <= set(_texts(page))
  assert '0' not in _texts(page) and '2' not in _texts(page)  # no class ids (and no 0 counts)


def test_a_report_of_150_classes_has_bounded_charts_and_names_every_class():
  names, recall, precision, serving, matrix = _metrics(150)
  figure = pictures.class_recall(names, recall, serving)
  assert (
    len(figure.axes[0].patches) == 2 * pictures.MAX_BARS
  )  # this model and the serving model, the lowest
  drawn = [t.get_text() for t in figure.axes[0].get_yticklabels()]
  lowest = sorted((r, i) for i, r in enumerate(recall) if r is not None)[: pictures.MAX_BARS]
  assert drawn == [names[i] for _, i in lowest]
  assert pictures.confusion_matrix(matrix, names) is None  # no 150 × 150 heat map

  counts = {'train': [(n, 10 + i) for i, n in enumerate(names)], 'eval': [(n, 3) for n in names]}
  page = report_data.label_distribution_html(
    'label_name', counts, True
  ) + report_model.per_class_html(names, recall, precision, serving, matrix)
  charts = _svgs(page)
  assert len(charts) == 2  # label distribution, recall per class; confusions as a table
  for chart in charts:
    width, height = _size_px(chart)
    assert width <= 1100 and height <= 1000, (width, height)
  assert f'… and {150 - pictures.MAX_BARS} more classes: recall ' in page
  assert 'without eval examples' in page  # the class with recall None
  assert f'… and {150 - pictures.MAX_BARS} more classes: train examples 10–' in page
  assert all(page.count(f'<td>{n}</td>') == 2 for n in names)  # both tables name every class
  pairs = re.findall(r'<td>([^<]*) → ([^<]*)</td>', page)
  assert len(pairs) == report_model.MAX_CONFUSED_PAIRS
  assert pairs[0] == (names[2], names[(2 * 7 + 1) % 150])  # the most frequent: 3 examples
  assert len(page.encode()) < 150_000, len(page.encode())


def test_few_classes_are_all_drawn_by_id():
  names, recall, precision, serving, matrix = _metrics(10)
  figure = pictures.class_recall(names, recall, None)
  assert [t.get_text() for t in figure.axes[0].get_yticklabels()] == names
  page = report_model.per_class_html(names, recall, precision, None, matrix)
  assert 'more classes' not in page and len(_svgs(page)) == 2


def test_long_class_names_are_cut_in_charts_only():
  name = 'a class name far longer than any chart has room for'
  figure = pictures.class_recall([name, 'b'], [0.5, 0.9], None)
  shown = [t.get_text() for t in figure.axes[0].get_yticklabels()]
  assert shown[0] == name[: pictures.MAX_NAME - 1] + '…'
  assert f'<td>{name}</td>' in report_model.per_class_html(
    [name, 'b'], [0.5, 0.9], [1, 1], None, None
  )


def test_a_grid_of_images_is_one_mosaic_with_each_caption_over_its_cell():
  gray = np.zeros((4, 8), np.uint8)  # a wide gray image: black
  colour = np.zeros((6, 6, 3), np.uint8)
  colour[..., 0] = 200  # red
  tiles = [(gray, 'a'), (None, ''), (colour, 'b')]
  cells = pictures.mosaic(tiles, 2, 32)
  assert cells.shape == (64, 64, 3)
  assert (cells[16, 16] == 0).all() and (cells[2, 16] == 255).all()  # letterboxed, centred
  assert (cells[16, 48] == 255).all()  # the empty place stays white
  assert cells[48, 16].tolist() == [200, 0, 0] and (cells[48, 48] == 255).all()


def test_a_regression_models_predictions_are_read_with_their_labels_and_drawn(tmp_path):
  from tests.support import evaluations, regression_model

  rows = [(float(x), float(2 * x + (x % 3) - 1)) for x in range(30)]
  records = [regression_model.record(fare=x, tips=y) for x, y in rows]
  examples = evaluations.eval_split(str(tmp_path / 'examples'), records)
  model_dir = regression_model.save(str(tmp_path / 'model'))
  from metadata import eval_predictions, model_answers

  first = eval_predictions.first_eval_records(examples, limit=25)
  predicted, actual = model_answers.scored(model_dir, first, regression=True)
  assert predicted.tolist() == [regression_model.expected(x) for x, _ in rows[:25]]
  assert actual.tolist() == [y for _, y in rows[:25]]
  figure = pictures.regression(predicted, actual, 'tips')
  svg = report_html.chart(figure)
  for said in ('actual tips', 'predicted tips', 'residual (actual − predicted)', 'eval rows'):
    assert said in html.unescape(svg), said
  assert 'the first 25 eval rows' in html.unescape(svg)
  assert pictures.regression(np.array([]), np.array([]), 'tips') is None


def test_a_regression_label_is_shown_per_split_as_densities_and_its_figures():
  from google.protobuf import text_format
  from tensorflow_metadata.proto.v0 import statistics_pb2

  def split(mean: float, low: float, high: float, counts: list):
    width = (high - low) / len(counts)
    buckets = ''.join(
      f'buckets {{ low_value: {low + i * width} high_value: {low + (i + 1) * width} '
      f'sample_count: {c} }}'
      for i, c in enumerate(counts)
    )
    return text_format.Parse(
      f'features {{ path {{ step: "fare" }} num_stats {{ mean: {mean} std_dev: 3.5 min: {low} '
      f'max: {high} median: {mean - 1} common_stats {{ num_non_missing: {sum(counts)} }} '
      f'histograms {{ type: QUANTILES {buckets} }} }} }}',
      statistics_pb2.DatasetFeatureStatistics(),
    )

  statistics = {'train': split(11.5, 0, 60, [50, 30, 20]), 'eval': split(11.0, 2, 50, [10, 8])}
  numbers = {split: found.features[0].num_stats for split, found in statistics.items()}
  page = report_data.number_label_html('fare', numbers)
  assert 'aria-label="label distribution (fare)"' in page
  assert 'fare per split (StatisticsGen quantiles)' in html.unescape(page)
  assert '<td>train</td><td class="n">100</td><td class="n">11.5</td><td class="n">3.5</td>' in page
  assert '<td>eval</td><td class="n">18</td><td class="n">11</td>' in page
  figure = pictures.number_distribution(
    'fare', {'train': statistics['train'].features[0].num_stats.histograms[0].buckets}
  )
  heights = figure.axes[0].patches[0].get_data()[0]
  assert np.isclose(sum(h * 20 for h in heights), 1.0)  # a density: the split's share sums to 1
  assert pictures.number_distribution('fare', {'train': []}) is None
  tail = split(12.0, 0, 700, [100] * 9 + [1])  # deciles of a skewed fare: the last is long
  edges = [0.0, 4, 5, 6, 7, 8, 9, 10, 12, 20, 700]
  for bucket, (low, high) in zip(
    tail.features[0].num_stats.histograms[0].buckets, zip(edges, edges[1:])
  ):
    bucket.low_value, bucket.high_value = low, high
  figure = pictures.number_distribution(
    'fare', {'eval': tail.features[0].num_stats.histograms[0].buckets}
  )
  assert figure.axes[0].get_xlim() == (0.0, 36.0)  # 20 + (20 - 4)
  assert figure.axes[0].get_title().endswith('up to 36 of 700')
