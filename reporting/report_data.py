"""The run report's data sections (reporting/report.py assembles the page): examples and labels
per split, sample images, feature statistics, anomalies and drift, excluded files, duplicates.
Drawn from the run's facts (metadata/report_facts.py): `result` is its RunResult.
"""

import base64
import io
import os
from typing import Dict, List, Optional

from reporting import html, pictures, summary_text

EXCLUDED_ROWS_SHOWN = 200
TOP_VALUES_UP_TO = 50  # a string feature with more distinct values is not categorical


def _feature_rows(features: Dict[str, object]) -> List[list]:
  """One row per feature ({name: FeatureNameStatistics}): name, type, present, missing, mean,
  std dev, min, max, values."""
  from tensorflow_metadata.proto.v0 import statistics_pb2

  rows = []
  for name, feature in features.items():
    if feature.HasField('num_stats'):
      s = feature.num_stats
      numbers, values = [float(s.mean), float(s.std_dev), float(s.min), float(s.max)], ''
    elif feature.HasField('string_stats'):
      s = feature.string_stats
      top = (
        ', '.join(f'{v.value[:20]} ({v.frequency:g})' for v in s.top_values[:3])
        if s.unique <= TOP_VALUES_UP_TO
        else f'{s.unique:,} distinct values'
      )
      numbers, values = ['', '', '', ''], f'avg length {s.avg_length:.1f}; {top}'
    elif feature.HasField('bytes_stats'):
      s = feature.bytes_stats
      numbers = ['', '', float(s.min_num_bytes), float(s.max_num_bytes)]
      values = f'{s.unique:,} distinct; avg {s.avg_num_bytes:,.0f} bytes'
    else:
      continue
    kind = statistics_pb2.FeatureNameStatistics.Type.Name(feature.type)
    common = s.common_stats
    rows.append([name, kind, common.num_non_missing, common.num_missing] + numbers + [values])
  return rows


def examples_section(result, statistics) -> str:
  """Examples per split and the label's counts (statistics: report_facts.Statistics)."""
  counts = result.examples_per_split
  if not counts:
    return html.absent('No statistics: the run stopped before StatisticsGen.')
  parts = [html.table(['split', 'examples'], [[k, v] for k, v in counts.items()])]
  key, per_split, exact = statistics.label, statistics.label_counts, statistics.exact
  if not per_split:
    return parts[0] + html.absent('No label feature in the statistics.')
  if not exact and summary_text.regressed(result):
    numbers = {
      split: features[key].num_stats
      for split, features in statistics.features.items()
      if key in features
    }
    return ''.join(parts) + number_label_html(key, numbers)
  return ''.join(parts) + label_distribution_html(key, per_split, exact)


def number_label_html(key: str, numbers: Dict[str, object]) -> str:
  """A regression label per split ({split: its NumericStatistics}): its distribution (each
  split's histogram as a density, on one axis: the splits' buckets differ) and a table of its
  mean, deviation, min, median, max."""
  rows = [
    [split, n.common_stats.num_non_missing, n.mean, n.std_dev, n.min, n.median, n.max]
    for split, n in numbers.items()
  ]
  buckets = {
    split: next((h.buckets for h in n.histograms if h.type == h.QUANTILES), [])
    for split, n in numbers.items()
  }
  figure = pictures.number_distribution(key, buckets)
  return (html.chart(figure) if figure else '') + html.table(
    ['split', 'examples', f'mean {key}', 'deviation', 'min', 'median', 'max'], rows
  )


def label_distribution_html(key: str, per_split: Dict[str, list], exact: bool) -> str:
  """The chart of examples per label value (the largest pictures.MAX_BARS), a line on the rest
  and a table of every value; per_split: {split: [(value, count)]}."""
  labels = [value for value, _ in next(iter(per_split.values()))]
  first = next(iter(per_split))
  drawn = set(pictures.largest(per_split))
  rest = [dict(per_split[first]).get(v, 0) for v in labels if v not in drawn]
  line = html.left_out_line(len(drawn), len(labels), rest, f'{first} examples')
  rows = [[value] + [dict(pairs).get(value, 0) for pairs in per_split.values()] for value in labels]
  return (
    html.chart(pictures.label_distribution(key, per_split, exact))
    + line
    + html.table([key] + list(per_split), rows)
  )


def samples_section(result, images: str, eval_images: tuple) -> str:
  """For image data: a grid of eval images per class."""
  names = list(result.class_recall)
  if not eval_images or not names:
    return ''
  figure = pictures.sample_grid(*eval_images, names, images)
  return '<h3>Eval images per class</h3>' + html.chart(figure) if figure else ''


def features_section(statistics: Dict[str, Dict[str, object]], histograms: bool) -> str:
  """Every split's features ({split: {name: FeatureNameStatistics}}), train first."""
  if not statistics:
    return html.absent('No statistics: the run stopped before StatisticsGen.')
  # The train split's histogram of each numeric feature, for tabular data.
  train = statistics.get('train') or next(iter(statistics.values()))
  figure = pictures.histograms(train) if histograms else None
  pictured = html.chart(figure) if figure else ''
  header = ['feature', 'type', 'present', 'missing', 'mean', 'std dev', 'min', 'max', 'values']
  return pictured + ''.join(
    f'<h3>{html.escape(split)}</h3>' + html.table(header, _feature_rows(features))
    for split, features in statistics.items()
  )


def anomalies_section(result) -> str:
  parts = []
  if result.anomalies is not None:
    parts.append(
      '<ul>' + ''.join(f'<li class="bad">{html.escape(a)}</li>' for a in result.anomalies) + '</ul>'
      if result.anomalies
      else '<p class="good">None: every split matches the schema.</p>'
    )
  else:
    parts.append(html.absent('Not validated: the run stopped before ExampleValidator.'))
  if 'drift' in (result.error or ''):
    parts.append(f'<p class="bad">{html.escape(result.error)}</p>')
  elif result.span:
    parts.append(
      "<p>Drift: compared with the previous data version, none above the schema's "
      'thresholds (or no previous version).</p>'
    )
  return ''.join(parts)


def excluded_section(result, rows: Optional[List[dict]]) -> str:
  """The exclusion report's rows (None: the run has none)."""
  if rows is None:
    return html.absent('No exclusion report (only the image ExampleGen writes one).')
  if not rows:
    return '<p class="good">No file was excluded.</p>'
  shown = rows[:EXCLUDED_ROWS_SHOWN]
  more = (
    f'<p>… and {len(rows) - len(shown):,} more in '
    f'<code>{html.escape(result.excluded_report)}</code></p>'
    if len(rows) > len(shown)
    else ''
  )
  return (
    f'<p>{len(rows):,} file(s) left out, listed in '
    f'<code>{html.escape(result.excluded_report)}</code>:</p>'
    + html.table(['path', 'reason'], [[r['path'], r['reason']] for r in shown])
    + more
  )


THUMBNAIL_SIDE = 64

CONFLICTS_SHOWN = 50  # rows of the conflicts table (duplicates.json keeps as many)


def _thumbnail(root: str, relpath: str) -> str:
  """An <img> of the data file root/relpath, THUMBNAIL_SIDE pixels at most, inline; '' when the
  file cannot be read any more."""
  import PIL.Image
  from tfx.dsl.io import fileio

  try:
    with fileio.open(os.path.join(root, relpath), 'rb') as f, PIL.Image.open(f) as image:
      image.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
      buffer = io.BytesIO()
      image.convert('RGB').save(buffer, 'PNG')
  except Exception:  # noqa: BLE001 (moved or deleted since the run: the path stays)
    return ''
  data = base64.b64encode(buffer.getvalue()).decode()
  name = html.escape(relpath)
  return f'<img src="data:image/png;base64,{data}" alt="{name}" title="{name}">'


def duplicates_section(result, listing: Optional[dict], config) -> str:
  """What ExampleGen's grouping found (components/duplicates.py): the counts, every conflict
  listed (thumbnails for images) and the largest groups (listing: duplicates.json's)."""
  facts = result.duplicates
  if not facts:
    return html.absent('No duplicate check in this run (--duplicates off, or an older ExampleGen).')
  lines = summary_text.render_duplicates(facts, summary_text.regressed(result))
  # Each line past its 12-character label ('duplicates: ', 'warning:    ' or blanks).
  parts = [f'<p>{html.escape(line[12:].strip())}</p>' for line in lines]
  found = len(lines) - bool(facts.get('near_copies_checked'))  # that line is said regardless
  if not found:
    return '<p class="good">No two examples share their content.</p>' + ''.join(parts)
  listing = listing or {}
  images = config.data_kind == 'images'

  def cell(item: dict) -> str:
    name = item.get('path') or item.get('row')
    picture = _thumbnail(config.data, name) if images else ''
    return f'{picture}<br><code>{html.escape(name)}</code> ({html.escape(item["label"])})'

  conflicts = listing.get('conflicts', [])[:CONFLICTS_SHOWN]
  if conflicts:
    rows = ''.join(
      f'<tr><td>{cell(c)}</td>'
      f'<td>{html.escape(c.get("reason") or ", ".join(c.get("labels", [])))}</td></tr>'
      for c in conflicts
    )
    parts.append(
      '<h3>The same content under two labels</h3>'
      f'<table><tr><th>example (label)</th><th>also filed as</th></tr>{rows}</table>'
    )
  groups = listing.get('largest_groups', [])
  if groups:
    rows = ''.join(
      '<tr>'
      + ''.join(
        f'<td>{cell(item)}<br>{html.escape(item.get("split") or "left out")}</td>' for item in group
      )
      + '</tr>'
      for group in groups
    )
    parts.append(f'<h3>Largest groups (each kept in one split)</h3><table>{rows}</table>')
  return ''.join(parts)


def transform_section(transform) -> str:
  """What a module file's Transform computed (metadata/transform_facts.TransformFacts): its
  state and time, the transformed features with their domains and moments, the vocabularies the
  analyzers wrote and the raw features it read."""
  took = f', {transform.seconds:.1f} s' if transform.seconds is not None else ''
  lead = (
    f'<p>Transform {html.escape(transform.state.lower())}{took}'
    + (f'; module {html.escape(transform.module)}' if transform.module else '')
    + (
      f'; transform graph <code>{html.escape(transform.graph_uri)}</code>'
      if transform.graph_uri
      else ''
    )
    + '</p>'
  )
  if not transform.features:
    return lead + html.absent('No transform graph was written.')
  features = html.table(
    ['transformed feature', 'type', 'domain', 'mean', 'std', 'min', 'max'],
    [
      [f['name'], f['type'], f['domain'] or None]
      + [f.get(key) for key in ('mean', 'std', 'min', 'max')]
      for f in transform.features
    ],
  )
  vocabularies = (
    '<h3>Vocabularies</h3>'
    + html.table(
      ['vocabulary file', 'entries'], [[v['name'], v['size']] for v in transform.vocabularies]
    )
    if transform.vocabularies
    else html.absent('The analyzers wrote no vocabulary files.')
  )
  raw = ', '.join(f'{f["name"]} ({f["type"]})' for f in transform.raw)
  return (
    lead
    + features
    + vocabularies
    + (f'<p>Raw features read ({len(transform.raw)}): {html.escape(raw)}</p>' if raw else '')
  )
