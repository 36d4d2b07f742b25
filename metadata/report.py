"""The run report: one self-contained HTML page (<output>/report.html) written at the end of
`pipeline.py run`, for people rather than logs.

Everything comes from what the run left behind: ML Metadata (which artifacts this run used or
produced), StatisticsGen's statistics, ExampleValidator's anomalies, the exclusion report,
<model_run>/training.json (the model, its phases, per-epoch history and the Trainer's input
check), the Tuner's trials (tuner_results.json), TFMA's metrics and the lineage
(cli/lineage.py). Charts are drawn with matplotlib (metadata/pictures.py) and embedded as
inline SVG (metadata/html.py): the file opens offline and can be mailed.
A section whose artifacts the run did not produce (it stopped earlier) says so.
"""

import base64
import csv
import io
import json
import os
import statistics as stats
import time
from typing import Dict, List, Optional, Sequence

from contracts import artifacts, image_record
from contracts import evaluation as evaluation_names
from metadata import artifact_reader, html, lineage, pictures, summary_text
from metadata.run_reader import NodeRun
from metadata.run_result import RunResult
from utils import atomic

REPORT_FILE = 'report.html'
EXCLUDED_ROWS_SHOWN = 200
TOP_VALUES_UP_TO = 50  # a string feature with more distinct values is not categorical
# Confused pairs listed in place of a confusion matrix too big to read (pictures.MAX_MATRIX):
# the few that explain most errors, on one screen.
MAX_CONFUSED_PAIRS = 30
SECTIONS = (
  ('run', 'Run'),
  ('examples', 'Examples and labels'),
  ('features', 'Feature statistics'),
  ('anomalies', 'Anomalies and drift'),
  ('excluded', 'Excluded files'),
  ('duplicates', 'Duplicates'),
  ('training', 'Training'),
  ('evaluation', 'Evaluation'),
  ('input', 'Input pipeline'),
  ('lineage', 'Lineage'),
)


def _range_text(values: Sequence[float], what: str) -> str:
  """'recall 0.91–1, median 0.97' of the numbers in values (None left out)."""
  found = [v for v in values if v is not None]
  if not found:
    return f'no {what}'
  low, high, median = (html.number_text(measure(found)) for measure in (min, max, stats.median))
  return f'{what} {low}–{high}, median {median}'


def _left_out_line(shown: int, total: int, values: Sequence[float], what: str) -> str:
  """The line under a chart that shows `shown` of `total` classes; values: those left out."""
  if shown >= total:
    return ''
  unmeasured = sum(v is None for v in values)
  without = f'; {unmeasured} without eval examples' if unmeasured else ''
  return (
    f'<p>… and {total - shown:,} more classes: {html.escape(_range_text(values, what))}{without} '
    '(every class in the table below).</p>'
  )


# ── what the run left behind ─────────────────────────────────────────────────────────────


def _feature_rows(dataset) -> List[list]:
  """One row per feature: name, type, present, missing, mean, std dev, min, max, values."""
  from tensorflow_metadata.proto.v0 import statistics_pb2

  rows = []
  for feature in dataset.features:
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
    rows.append(
      [artifact_reader.feature_name(feature), kind, common.num_non_missing, common.num_missing]
      + numbers
      + [values]
    )
  return rows


def _excluded(result: RunResult) -> Optional[List[dict]]:
  from tfx.dsl.io import fileio

  path = result.excluded_report
  if not path or not fileio.exists(path):
    return None
  with fileio.open(path, 'r') as f:
    return list(csv.DictReader(io.StringIO(f.read())))


def _output_file(nodes, key: str, name: str):
  """The JSON file `name` in this run's output artifact `key` (None when absent)."""
  from tfx.dsl.io import fileio

  output = artifact_reader.output(nodes, key)
  path = os.path.join(output.uri, name) if output is not None else ''
  if not path or not fileio.exists(path):
    return None
  with fileio.open(path, 'r') as f:
    return json.load(f)


# ── sections ─────────────────────────────────────────────────────────────────────────────


def _run_section(result: RunResult, config) -> str:
  rows = [
    ['pipeline', config.pipeline_name],
    ['data', f'{config.data_kind}: {config.data}'],
    ['output', config.output],
    ['wall time', f'{result.wall_seconds} s'],
    ['run log', result.log or ''],
  ]
  if result.span:
    rows.insert(2, ['data version', f'span {result.span}'])
  if summary_text.render_revision(result.data_revision or {}):
    rows.insert(2, ['data revision', summary_text.render_revision(result.data_revision)])
  outcome = (
    f'<p class="bad">Stopped: {html.escape(result.error)}</p>'
    if result.error is not None
    else '<p class="good">Completed.</p>'
  )
  states = [[node, state] for node, state in sorted(result.components.items())]
  return (
    outcome
    + html.table(['', ''], rows)
    + '<h3>Components</h3>'
    + html.table(['component', 'state'], states)
  )


def _examples_section(result: RunResult, statistics: dict, label_keys: Sequence[str]) -> str:
  counts = result.examples_per_split
  if not counts:
    return html.absent('No statistics: the run stopped before StatisticsGen.')
  parts = [html.table(['split', 'examples'], [[k, v] for k, v in counts.items()])]
  key, per_split, exact = artifact_reader.label_counts(statistics, label_keys)
  if not per_split:
    return parts[0] + html.absent('No label feature in the statistics.')
  return ''.join(parts) + label_distribution_html(key, per_split, exact)


def label_distribution_html(key: str, per_split: Dict[str, list], exact: bool) -> str:
  """The chart of examples per label value (the largest pictures.MAX_BARS), a line on the rest
  and a table of every value; per_split: {split: [(value, count)]}."""
  labels = [value for value, _ in next(iter(per_split.values()))]
  first = next(iter(per_split))
  drawn = set(pictures.largest(per_split))
  rest = [dict(per_split[first]).get(v, 0) for v in labels if v not in drawn]
  line = _left_out_line(len(drawn), len(labels), rest, f'{first} examples')
  rows = [[value] + [dict(pairs).get(value, 0) for pairs in per_split.values()] for value in labels]
  return (
    html.chart(pictures.label_distribution(key, per_split, exact))
    + line
    + html.table([key] + list(per_split), rows)
  )


def _samples(result: RunResult, images: str, eval_images: tuple) -> str:
  """For image data: a grid of eval images per class."""
  names = list(result.class_recall)
  if not eval_images or not names:
    return ''
  figure = pictures.sample_grid(*eval_images, names, images)
  return '<h3>Eval images per class</h3>' + html.chart(figure) if figure else ''


def _features_section(statistics: dict, histograms: bool) -> str:
  if not statistics:
    return html.absent('No statistics: the run stopped before StatisticsGen.')
  # The train split's histogram of each numeric feature, for tabular data.
  train = statistics.get('train') or next(iter(statistics.values()))
  figure = pictures.histograms(train) if histograms else None
  pictured = html.chart(figure) if figure else ''
  header = ['feature', 'type', 'present', 'missing', 'mean', 'std dev', 'min', 'max', 'values']
  return pictured + ''.join(
    f'<h3>{html.escape(split)}</h3>' + html.table(header, _feature_rows(dataset))
    for split, dataset in statistics.items()
  )


def _anomalies_section(result: RunResult) -> str:
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


def _excluded_section(result: RunResult) -> str:
  rows = _excluded(result)
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


def _duplicates_section(result: RunResult, config) -> str:
  """What ExampleGen's grouping found (components/duplicates.py): the counts, every conflict
  listed (thumbnails for images) and the largest groups."""
  from tfx.dsl.io import fileio

  facts = result.duplicates
  if not facts:
    return html.absent('No duplicate check in this run (--duplicates off, or an older ExampleGen).')
  lines = summary_text.render_duplicates(facts)
  if not lines:
    return '<p class="good">No two examples share their content.</p>'
  parts = [f'<p>{html.escape(line.split(":", 1)[1].strip())}</p>' for line in lines]
  with fileio.open(facts['report'], 'r') as f:
    listing = json.loads(f.read())
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


def _model_html(training: dict) -> str:
  """The model, its backbone's weights and hyperparameters, and the phases it trained in
  (trainer/fine_tune.py); '' for a training.json written before they were recorded."""
  if 'model' not in training:
    return ''
  rows = [['model', training['model']]]
  if training.get('weights'):
    rows.append(['backbone weights', training['weights']])
  if 'xla' in training:
    rows.append(['XLA', 'on' if training['xla'] else 'off'])
  tuned = ' (tuned)' if training.get('tuned') else ''
  rows += [[name + tuned, value] for name, value in training.get('hyperparameters', {}).items()]
  phases = [
    [
      p['name'],
      p['steps'],
      p['learning_rate'],
      'frozen' if p['name'] == 'head' else p['unfrozen_layers'],
      p['trainable_parameters'],
      p['seconds'],
    ]
    for p in training.get('phases', [])
  ]
  model = html.table(['', ''], rows)
  if not phases:
    return model
  return model + html.table(
    [
      'phase',
      'steps',
      'learning rate',
      'unfrozen backbone layers',
      'trainable parameters',
      'seconds',
    ],
    phases,
  )


def _tuning_html(trials: Optional[list]) -> str:
  """Every Tuner trial (tuner_results.json: best first), the best marked; '' without a Tuner."""
  if trials is None:
    return ''
  if not trials:
    return '<h3>Tuning</h3>' + html.absent('No tuning trial finished.')
  names = list(dict.fromkeys(k for t in trials for k in t if k not in ('trial_id', 'score')))
  rows = [
    [f'{t["trial_id"]}' + (' (best)' if i == 0 else '')] + [t.get(n) for n in names] + [t['score']]
    for i, t in enumerate(trials)
  ]
  return (
    f'<h3>Tuning</h3><p>{len(trials):,} trial(s), best first; the Trainer trained with the '
    "best one's values.</p>" + html.table(['trial'] + names + ['eval accuracy'], rows)
  )


def _training_section(training: Optional[dict], nodes) -> str:
  tuning = _tuning_html(_output_file(nodes, 'tuner_results', artifacts.TUNER_RESULTS_FILE))
  if training is None:
    return html.absent('No training: the run stopped before the Trainer.') + tuning
  history = training['history']
  metrics = [k for k in history if not k.startswith('val_')][:3]
  figure, axes = pictures.new_figure('training curves', (4 * len(metrics), 3), 1, len(metrics))
  for axis, metric in zip(axes[0], metrics):
    epochs = range(1, len(history[metric]) + 1)
    axis.plot(epochs, history[metric], marker='o', label='train')
    if f'val_{metric}' in history:
      axis.plot(epochs, history[f'val_{metric}'], marker='o', label='eval')
    axis.set_title(metric)
    axis.set_xlabel('epoch')
    axis.legend()
  rows = [
    [epoch + 1] + [history[k][epoch] for k in history] for epoch in range(len(history[metrics[0]]))
  ]
  model_run = artifact_reader.output(nodes, 'model_run')
  return (
    _model_html(training)
    + f'<p>{training["train_steps"]:,} steps of batch {training["batch_size"]} in '
    f'{training["epochs"]} epochs.</p>'
    + html.chart(figure)
    + html.table(['epoch'] + list(history), rows)
    + '<p>TensorBoard: <code>.venv/bin/tensorboard --logdir '
    + f'{html.escape(model_run.uri)}</code></p>'
    + tuning
  )


def _confusion(nodes, size: int = 0) -> Optional[List[List[float]]]:
  """The candidate's confusion matrix on the eval split (TFMA's plot): rows true, columns
  predicted class id; at least `size` (the number of class names) square, so that a class that
  is last and neither seen nor predicted still has its row and column."""
  evaluation = artifact_reader.output(nodes, 'evaluation')
  rows = evaluation_names.confusion_rows(evaluation.uri) if evaluation is not None else {}
  if not rows:
    return None
  seen = 1 + max(max([true] + list(row)) for true, row in rows.items())
  size = max(size, seen)
  matrix = [[0.0] * size for _ in range(size)]
  for true, row in rows.items():
    for predicted, examples in row.items():
      if true >= 0 and predicted >= 0:  # -1: no class given (threshold), or a label unknown
        matrix[true][predicted] += examples
  return matrix


def _item_or_none(values: Optional[Sequence], index: int):
  """values[index]; None past the end or without values."""
  return values[index] if values and index < len(values) else None


def confusion_html(matrix: List[List[float]], names: Sequence[str]) -> str:
  """The confusion matrix as a heat map up to pictures.MAX_MATRIX classes; beyond, a table of
  the MAX_CONFUSED_PAIRS most frequent confusions, 'true → predicted', by class name."""
  figure = pictures.confusion_matrix(matrix, names)
  if figure is not None:
    return html.chart(figure)
  name = lambda i: names[i] if i < len(names) else str(i)
  pairs = sorted(
    (
      (-count, true, predicted)
      for true, row in enumerate(matrix)
      for predicted, count in enumerate(row)
      if count and true != predicted
    )
  )
  if not pairs:
    return '<p class="good">No eval example was misclassified.</p>'
  shown = pairs[:MAX_CONFUSED_PAIRS]
  rows = [
    [f'{name(true)} → {name(predicted)}', -negative, f'{-negative / (sum(matrix[true]) or 1):.0%}']
    for negative, true, predicted in shown
  ]
  wrong = -sum(negative for negative, _, _ in pairs)
  return (
    f'<p>{len(matrix):,} classes: more than a readable heat map holds ({pictures.MAX_MATRIX}). '
    f'The {len(shown):,} most frequent of {len(pairs):,} confusions (true class → predicted '
    f'class; {html.number_text(wrong)} misclassified eval examples in all):</p>'
    + html.table(['true → predicted', 'eval examples', 'share of the true class'], rows)
  )


def per_class_html(
  names: Sequence[str],
  recall: Sequence[Optional[float]],
  precision: Sequence[Optional[float]],
  serving: Optional[Sequence[Optional[float]]],
  matrix: Optional[List[List[float]]],
) -> str:
  """Recall per class next to the serving model's (a chart of at most pictures.MAX_BARS, the
  lowest, a line on the rest and a table of every class) and the confusion matrix; by class id."""
  header = ['class', 'recall (p > 0.5)', 'precision']
  header += ['recall of the serving model'] if serving else []
  rows = [
    [name, _item_or_none(recall, i), _item_or_none(precision, i)]
    + ([_item_or_none(serving, i)] if serving else [])
    for i, name in enumerate(names)
  ]
  shown = set(pictures.lowest(recall, pictures.MAX_BARS))
  rest = [_item_or_none(recall, i) for i in range(len(names)) if i not in shown]
  html_out = (
    '<h3>Per class</h3>'
    + html.chart(pictures.class_recall(names, list(recall), serving))
    + _left_out_line(min(len(names), pictures.MAX_BARS), len(names), rest, 'recall')
    + html.table(header, rows)
  )
  if matrix:
    html_out += '<h3>Confusion matrix (eval split)</h3>' + confusion_html(matrix, names)
  return html_out


def _per_class_section(nodes, result: RunResult, images: str, eval_images: tuple) -> str:
  """per_class_html of the run and, for image data (images: their encoding, else '';
  eval_images: pictures.eval_records), the misclassified eval images."""
  evaluation = artifact_reader.output(nodes, 'evaluation')
  names = list(result.class_recall)
  if evaluation is None or not names:
    return ''
  classes = artifact_reader.per_class(evaluation)
  candidate = classes.get(evaluation_names.CANDIDATE, {})
  html_out = per_class_html(
    names,
    candidate.get(evaluation_names.RECALL_KEY, []),
    candidate.get(evaluation_names.PRECISION_KEY, []),
    classes.get(evaluation_names.BASELINE, {}).get(evaluation_names.RECALL_KEY),
    _confusion(nodes, len(names)),
  )
  model = artifact_reader.output(nodes, 'model')
  if eval_images and model is not None:
    from tfx.utils import path_utils

    figure = pictures.misclassified(
      path_utils.serving_model_path(model.uri), *eval_images, names, images
    )
    html_out += '<h3>Misclassified</h3>' + (
      html.chart(figure) if figure else '<p>No misclassified image among those checked.</p>'
    )
  return html_out


def _slices_section(nodes) -> str:
  """Accuracy and example count per value of each --slice-feature."""
  evaluation = artifact_reader.output(nodes, 'evaluation')
  slices = artifact_reader.slice_metrics(evaluation) if evaluation is not None else {}
  if not slices:
    return ''
  rows = [[where, found['examples'], found['accuracy']] for where, found in slices.items()]
  return '<h3>Per slice</h3>' + html.table(['slice', 'examples', 'accuracy'], rows)


def _evaluation_section(
  metrics: Dict[str, float], result: RunResult, nodes, images: str, eval_images: tuple
) -> str:
  if not metrics:
    return html.absent('No evaluation: the run stopped before the Evaluator.')
  why = html.escape(result.blessing or '')
  verdict = (
    f'<p class="good">Blessed ({why}); pushed to '
    f'<code>{html.escape(result.pushed_to or "-")}</code>.</p>'
    if result.blessed
    else f'<p class="bad">Not blessed ({why}); not pushed, the serving model stays.</p>'
  )
  details = _per_class_section(nodes, result, images, eval_images) + _slices_section(nodes)
  return (
    html.table(['metric (eval split)', 'value'], sorted(metrics.items()))
    + verdict
    + _serving_check(result.serving_check)
    + details
  )


def _serving_check(report: Optional[dict]) -> str:
  """The blessed model loaded in a fresh process: verdict, load time, p50 / p99 per signature."""
  if not report:
    return ''
  verdict = (
    f'<p class="bad">It does not serve: {html.escape("; ".join(report["problems"]))}. '
    'Not pushed.</p>'
    if report['problems']
    else f'<p class="good">It serves: loaded in {report["load_seconds"]:.2f} s in a fresh '
    f'process; every signature answered {report["examples"]} eval examples.</p>'
  )
  rows = [
    [name, timing['p50_ms'], timing['p99_ms']]
    for name, timing in report.get('signatures', {}).items()
  ]
  table = html.table(['signature', 'p50 ms / request', 'p99 ms / request'], rows) if rows else ''
  return '<h3>Serving check</h3>' + verdict + table


def _input_section(training: Optional[dict], damage: Optional[dict]) -> str:
  if training is None:
    return html.absent('No input check: the run stopped before the Trainer.')
  check = training['input_check']
  if check is None:
    return html.absent(
      f'No input check: skipped under distributed training ({training.get("distribution")}).'
    )
  verdict = (
    '<p class="bad">Training was input-bound: first thing to try: '
    f'{html.escape(check["hint"])}.</p>'
    if check['input_bound']
    else '<p class="good">Not input-bound.</p>'
  )
  source = (
    f'input from tf.data service {check["input_service"]}'
    if check.get('input_service')
    else 'input pipeline'
  )
  rows = [
    [f'{source} alone', f'{check["input_examples_per_second"]:,.0f} examples/s'],
    [
      'one training step',
      f'{check["step_seconds"] * 1000:.1f} ms '
      f'({training["batch_size"] / check["step_seconds"]:,.0f} examples/s)',
    ],
    ['time waiting for input at that pace', f'{check["stall_fraction"]:.1%}'],
  ]
  if damage is not None:
    rows.append(
      [
        'damaged records skipped',
        f'{damage["corrupt"]:,} in {damage["damaged_shards"]} of {damage["shards"]} shard(s)',
      ]
    )
  return verdict + html.table(['', ''], rows)


def _lineage_section(config, nodes) -> str:
  examples = next(
    (
      n.outputs['examples']
      for n in nodes.values()
      if n.node_id.endswith('ExampleGen') and 'examples' in n.outputs
    ),
    None,
  )
  if examples is None:
    return html.absent('No examples were produced.')
  trace = lineage.trace(config.metadata_path)
  data = [v for v in trace['data_versions'] if v['examples_id'] == examples.id]
  rows = [
    [
      f'examples #{v["examples_id"]}',
      v['created'],
      v['span'],
      v['version'] or '-',
      ', '.join(f'{k} {n}' for k, n in (v['split_counts'] or {}).items()),
      v['input_base'],
      summary_text.render_revision(v['revision']) or '-',
      str(v['fingerprint'])[:60],
    ]
    for v in data
  ]
  columns = ['data', 'created', 'span', 'version', 'counts', 'from', 'revision', 'fingerprint']
  parts = [html.table(columns, rows)]
  model = artifact_reader.output(nodes, 'model')
  for entry in (m for m in trace['models'] if model is not None and m['model_id'] == model.id):
    evaluated = '; '.join(
      f'examples #{e["evaluated_on"]}{" (blessed)" if e["blessed"] else ""}'
      for e in entry['evaluations']
    )
    parts.append(
      html.table(
        ['model', 'created', 'trained on', 'evaluated on', 'pushed to'],
        [
          [
            f'model #{entry["model_id"]}',
            entry['created'],
            f'examples #{entry["trained_on"]}',
            evaluated or '-',
            ', '.join(entry['pushed_to']) or '-',
          ]
        ],
      )
    )
  command = f'.venv/bin/python pipeline.py lineage --output {config.local_dir}'
  parts.append(
    '<p>All data versions and models of this output folder: '
    f'<code>{html.escape(command)}</code></p>'
  )
  return ''.join(parts)


def _image_encoding(result: RunResult) -> str:
  """The examples' image encoding (image_meta.json beside the shards); '' for other data."""
  from tfx.dsl.io import fileio

  path = os.path.join(result.examples_uri or '', artifacts.IMAGE_META_FILE)
  if not result.examples_uri or not fileio.exists(path):
    return ''
  with fileio.open(path, 'r') as f:
    return json.load(f)['encoding']


def render(nodes: Dict[str, NodeRun], result: RunResult, config) -> str:
  """The whole page."""
  statistics = artifact_reader.split_statistics(nodes)
  images = _image_encoding(result)
  # Image data: the first eval records, read once for the sample grid and the misclassified.
  eval_images = pictures.eval_records(result.examples_uri) if images else ()
  training = _output_file(nodes, 'model_run', artifacts.TRAINING_FILE)
  bodies = {
    'run': _run_section(result, config),
    'examples': _examples_section(
      result, statistics, [image_record.LABEL_NAME_KEY, config.label, image_record.LABEL_KEY]
    )
    + _samples(result, images, eval_images),
    'features': _features_section(statistics, histograms=not images),
    'anomalies': _anomalies_section(result),
    'excluded': _excluded_section(result),
    'duplicates': _duplicates_section(result, config),
    'training': _training_section(training, nodes),
    'evaluation': _evaluation_section(
      artifact_reader.overall_metrics(artifact_reader.output(nodes, 'evaluation')),
      result,
      nodes,
      images,
      eval_images,
    ),
    'input': _input_section(training, _output_file(nodes, 'model_run', artifacts.DAMAGE_FILE)),
    'lineage': _lineage_section(config, nodes),
  }
  title = f'{config.pipeline_name} run, {time.strftime("%Y-%m-%d %H:%M")}'
  nav = ''.join(f'<a href="#{key}">{html.escape(name)}</a>' for key, name in SECTIONS)
  sections = ''.join(
    f'<section id="{key}"><h2>{html.escape(name)}</h2>{bodies[key]}</section>'
    for key, name in SECTIONS
  )
  return html.page(title, f'<nav>{nav}</nav>{sections}')


def write(nodes: Dict[str, NodeRun], result: RunResult, config) -> str:
  """Writes <output>/report.html atomically; returns its path."""
  path = os.path.join(config.local_dir, REPORT_FILE)
  return atomic.write(path, render(nodes, result, config))
