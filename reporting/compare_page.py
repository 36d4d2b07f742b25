"""`pipeline.py compare`'s answer for people: the terminal table (`render`) and the page with
side-by-side charts (`html_page`) of metadata/compare.py's result. A text option of several
lines (a model file's source) is shown as its line count and digest; no table cell holds a line
break.
"""

from typing import List, Sequence

from contracts.evaluation import FIGURE_NAMES, MAE_KEY, slice_figure
from contracts.trainer_options import REGRESSION
from reporting import html

_WIDTH = 34  # characters of a value in the terminal table


def shown(value, width: int = _WIDTH) -> str:
  """A value in a table cell: numbers to 4 significant digits (whole from 1e4, 80,832 not
  8.083e+04), yes / no, '–' for none, one line."""
  if value is None:
    return '–'
  if isinstance(value, bool):
    return 'yes' if value else 'no'
  if isinstance(value, float):
    return f'{value:,.0f}' if abs(value) >= 1e4 else f'{value:.4g}'
  if isinstance(value, int):
    return f'{value:,}'
  text = ' '.join(str(value).split())
  return text if len(text) <= width else text[: width - 1] + '…'


PIPELINE_CHOSEN = (
  "pipeline: options each run's task chose by itself (a regression keeps --duplicates' "
  'conflicts): no one changed them'
)


def signed(delta) -> str:
  """'+0.05', '-4'; '' for none, '0' for none at all."""
  if delta is None:
    return ''
  if delta == 0:
    return '0'
  return f'{delta:+.4g}' if isinstance(delta, float) else f'{delta:+,}'


def _columns(rows: Sequence[Sequence[str]]) -> List[str]:
  widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
  return ['  '.join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]


def _described(entry: dict) -> str:
  """A difference's name and what qualifies it: where, the kind of change or the measure."""
  extra = ''
  if entry.get('where'):
    extra = f' ({", ".join(entry["where"])})'
  elif entry.get('change'):
    extra = f' ({entry["change"]})'
  elif entry.get('measure'):
    measure = 'L-inf' if entry['measure'] == 'infinity_norm' else 'JSD'
    extra = f' ({measure}' + (', above the drift threshold)' if entry.get('flagged') else ')')
  if entry.get('why'):  # aspect 'pipeline': chosen by each run's task, not a user's change
    extra = (extra[:-1] + '; ' if extra else ' (') + f'{entry["why"]})'
  return entry['name'] + extra


def render(result: dict) -> List[str]:
  """The terminal table: the two runs, every difference, the metrics of both."""
  a, b = result['a'], result['b']
  lines = [
    f'{key}: run {run["run_id"]}'
    + (f' ({run["metadata"]})' if a['metadata'] != b['metadata'] else '')
    + (f', --seed {run["seed"]}' if run.get('seed') is not None else '')
    for key, run in (('A', a), ('B', b))
  ]
  found = result['differences']
  if not found:
    lines.append('no differences: the same data, statistics, schema, code, options and metrics')
  else:
    lines.append(f'{len(found)} difference(s), most telling first:')
    rows = [['aspect', 'what', 'A', 'B', 'B − A']]
    for entry in found:
      delta = entry['delta']
      rows.append(
        [
          entry['aspect'],
          shown(_described(entry), 60),
          shown(entry['a']),
          shown(entry['b']),
          f'{delta:.4f}' if entry['aspect'] == 'statistics' else signed(delta),
        ]
      )
    lines += ['  ' + line for line in _columns(rows)]
    if any(entry['aspect'] == 'pipeline' for entry in found):
      lines.append(PIPELINE_CHOSEN)
  if result.get('randomness'):
    lines.append(result['randomness'])
  if not result.get('statistics_compared'):
    lines.append('statistics: not compared (a run has no statistics, or no comparator was given)')
  if result.get('tasks_differ'):
    lines.append(result['tasks_differ'])
  rows = [['metric', 'A', 'B', 'B − A']]
  for name, v in metric_rows(result['metrics']):
    rows.append(
      [shown(name, 60), shown(v['a']), shown(v['b']), signed(v['delta']) if 'delta' in v else '']
    )
  lines.append('metrics (eval split):')
  lines += ['  ' + line for line in _columns(rows)]
  for key, entry in (('A', a), ('B', b)):
    if entry.get('blessing'):
      lines.append(f'blessing {key}: {entry["blessing"]}')
  return lines


def metric_rows(metrics: dict) -> List[tuple]:
  """(name, {a, b[, delta]}) of every metric of metrics_table: the task when the runs' differ,
  accuracy (a classifier's), MAE, RMSE, R², … (a regression model's), blessed, recall per
  class, the figure per slice."""
  task = metrics.get('task') or {}
  rows = [('task', task)] if task.get('a') != task.get('b') else []
  regression = metrics.get('regression') or {}
  accuracy = metrics['accuracy']
  if not regression or accuracy['a'] is not None or accuracy['b'] is not None:
    rows.append(('accuracy', accuracy))
  rows += [(FIGURE_NAMES[name], v) for name, v in regression.items()]
  rows.append(('blessed', metrics['blessed']))
  rows += [(f'recall of class {name}', v) for name, v in metrics['per_class'].items()]
  figure = FIGURE_NAMES.get(slice_figure(metrics), 'accuracy')
  rows += [(f'{figure} where {name}', v) for name, v in metrics['per_slice'].items()]
  return rows


def _recall_chart(metrics: dict):
  """Recall per class of A and B side by side (pictures.class_recall, relabelled)."""
  from reporting import pictures

  names = list(metrics['per_class'])
  if not names:
    return None
  recall_a = [metrics['per_class'][n]['a'] for n in names]
  recall_b = [metrics['per_class'][n]['b'] for n in names]
  figure = pictures.class_recall(names, recall_a, recall_b)
  figure.set_label('recall per class, run A and run B')
  for text, label in zip(figure.axes[0].get_legend().get_texts(), ('run A', 'run B')):
    text.set_text(label)
  return figure


def _mae_chart(metrics: dict):
  """MAE of two regression runs side by side: on the whole eval split, then per slice value;
  None unless both runs have one."""
  import numpy as np

  from reporting import pictures

  mae = (metrics.get('regression') or {}).get(MAE_KEY)
  if mae is None or mae['a'] is None or mae['b'] is None:
    return None
  rows = [('eval split', mae)] + [
    (name, v) for name, v in metrics['per_slice'].items() if v['a'] is not None
  ]
  figure, [[axes]] = pictures.new_figure('MAE, run A and run B', (7, 0.9 + 0.32 * len(rows)))
  positions = np.arange(len(rows))
  for offset, (run, key) in enumerate((('run A', 'a'), ('run B', 'b'))):
    axes.barh(positions + 0.4 * offset, [v[key] or 0.0 for _, v in rows], 0.4, label=run)
  axes.set_yticks(positions + 0.2, [pictures.short(name) for name, _ in rows])
  axes.tick_params(axis='y', labelsize=8)
  axes.invert_yaxis()
  axes.set_xlabel("MAE (eval split, the label's units; lower is better)")
  axes.legend(fontsize=8, loc='lower left', bbox_to_anchor=(1.01, 0))
  return figure


def _moved_chart(entries: List[dict]):
  """Horizontal bars: how far each feature's train distribution moved (the top compare.MAX_FEATURES)."""
  import numpy as np

  from reporting import pictures

  if not entries:
    return None
  figure, [[axes]] = pictures.new_figure(
    'features whose train distribution moved most', (7, 0.9 + 0.3 * len(entries))
  )
  positions = np.arange(len(entries))
  axes.barh(positions, [e['delta'] for e in entries], 0.6)
  thresholds = [e.get('threshold') for e in entries]
  if any(t is not None for t in thresholds):
    axes.scatter(
      [t or 0 for t in thresholds],
      positions,
      marker='|',
      s=200,
      color='#b00020',
      label='drift threshold',
    )
    axes.legend(fontsize=8, loc='lower left', bbox_to_anchor=(1.01, 0))
  axes.set_yticks(positions, [pictures.short(_described(e)) for e in entries])
  axes.tick_params(axis='y', labelsize=8)
  axes.invert_yaxis()
  axes.set_xlabel('distance of the train split A → B (L-infinity or Jensen-Shannon)')
  return figure


def html_page(result: dict) -> str:
  """Its own self-contained page: the runs, the differences, side-by-side charts."""
  a, b = result['a'], result['b']
  title = f'run {b["run_id"]} against run {a["run_id"]}'
  runs = html.table(
    ['', 'A', 'B'],
    [
      ['run id', a['run_id'], b['run_id']],
      ['created', a['created'], b['created']],
      ['store', a['metadata'], b['metadata']],
    ]
    + (
      [['task', shown(a.get('task')), shown(b.get('task'))], ['MAE', a.get('mae'), b.get('mae')]]
      if REGRESSION in (a.get('task'), b.get('task'))
      else []
    )
    + [
      ['accuracy', a['accuracy'], b['accuracy']],
      ['blessed', shown(a['blessed']), shown(b['blessed'])],
      ['--seed', shown(a.get('seed')), shown(b.get('seed'))],
      ['blessing', a.get('blessing') or '', b.get('blessing') or ''],
    ],
  )
  found = result['differences']
  table = (
    html.table(
      ['aspect', 'what', 'A', 'B', 'B − A'],
      [
        [d['aspect'], _described(d), shown(d['a'], 48), shown(d['b'], 48), d['delta']]
        for d in found
      ],
    )
    if found
    else html.absent('No differences: the same data, statistics, schema, code, options, metrics.')
  )
  metrics = result['metrics']
  rows = [
    [name]
    + ([shown(v['a']), shown(v['b'])] if name in ('task', 'blessed') else [v['a'], v['b']])
    + [v.get('delta', '')]
    for name, v in metric_rows(metrics)
  ]
  charts = [
    None if result.get('tasks_differ') else _recall_chart(metrics),  # B has no classes
    _mae_chart(metrics),
    _moved_chart([d for d in found if d['aspect'] == 'statistics']),
  ]
  said = ''.join(
    f'<p>{html.escape(result[key])}</p>'
    for key in ('randomness', 'tasks_differ')
    if result.get(key)
  )
  body = (
    f'<h2>Runs</h2>{runs}<h2>Differences, most telling first</h2>{table}{said}'
    f'<h2>Metrics (eval split)</h2>{html.table(["metric", "A", "B", "B − A"], rows)}'
    + ''.join(
      f'<h3>{html.escape(figure.get_label())}</h3>' + html.chart(figure)
      for figure in charts
      if figure is not None
    )
  )
  return html.page(title, body)
