"""The runs page (<output>/runs.html): every run of an output folder across time, drawn from the
facts metadata/runs.py gathered; rewritten by every run, `pipeline.py runs --html` and `rollback`.

One self-contained page (reporting/html.py; the chart inline SVG, no script, nothing fetched): the
headline figure per run (one series per task and model; refused runs as red crosses, the serving
version ringed, rollbacks as dotted lines), the runs table with each row linked to its kept report
(reports/<run id>.html), the command that compares a run with the one before, and the model
versions under serving/.
"""

import os
from typing import Dict, List, Tuple
import urllib.parse

from contracts.trainer_options import REGRESSION
from reporting import html, runs_text
from utils import atomic

RUNS_PAGE = 'runs.html'
POINT_ID = 'run-{number}'  # each point's SVG group id: one per run that has a headline figure


def _numbered(facts: dict) -> List[Tuple[int, dict]]:
  """(number, run) oldest first, numbered from 1 as the chart's axis."""
  return list(enumerate(reversed(facts['runs']), start=1))


def _serving_run(facts: dict) -> str:
  """The run id whose model serves now (through a rollback: the run that pushed its source)."""
  serving = next((v for v in facts['versions'] if v['serving']), None)
  if serving is None:
    return ''
  if serving.get('rollback'):
    source = next(
      (v for v in facts['versions'] if v['version'] == serving['rollback']['from_version']), {}
    )
    return source.get('run_id') or ''
  return serving.get('run_id') or ''


def _chart(facts: dict, task: str) -> str:
  """One chart of the task's headline figure per run; one series per model."""
  import matplotlib

  matplotlib.use('Agg')
  from matplotlib import pyplot

  runs = [(n, r) for n, r in _numbered(facts) if r['task'] == task and runs_text.figure(r) != '-']
  key = 'mae' if task == REGRESSION else 'accuracy'
  figure, axes = pyplot.subplots(figsize=(8, 3.2))
  figure.set_label(f'{key} per run ({task})')
  series: Dict[str, List[Tuple[int, float]]] = {}
  for number, run in runs:
    series.setdefault(run['model'] or '-', []).append((number, run[key]))
  for name, points in series.items():
    axes.plot(*zip(*points), '-', color='#999', linewidth=1, zorder=1)
    axes.annotate(name, points[-1], textcoords='offset points', xytext=(8, -12), fontsize=8)
  serving = _serving_run(facts)
  for number, run in runs:
    refused = run['blessed'] is False
    group = axes.scatter(
      [number],
      [run[key]],
      marker='x' if refused else 'o',
      color='#b00020' if refused else '#1b7a1b',
      facecolors='none' if not refused and not run['version'] else None,
      s=60,
      zorder=3,
    )
    group.set_gid(POINT_ID.format(number=number))
    if run['run_id'] == serving:
      axes.scatter([number], [run[key]], s=320, facecolors='none', edgecolors='#1f4fb0', zorder=2)
      axes.annotate('serving', (number, run[key]), textcoords='offset points', xytext=(0, 12))
  for rollback in facts['rollbacks']:
    after = [n for n, r in _numbered(facts) if r['started'] <= rollback['when']]
    x = (after[-1] if after else 0) + 0.5
    axes.axvline(x, linestyle=':', color='#1f4fb0')
    axes.annotate(
      f'rollback to {rollback["from_version"]}',
      (x, 0.02),
      xycoords=('data', 'axes fraction'),
      fontsize=8,
    )
  axes.set_xlabel('run (1 = oldest; green: pushed, hollow: not pushed, red ×: refused)')
  axes.set_ylabel(key)
  axes.set_xticks([n for n, _ in runs])
  drawn = html.chart(figure)
  pyplot.close(figure)
  return drawn


def _link(run: dict) -> str:
  if not run['report']:
    return html.escape(run['run_id'])
  return f'<a href="{urllib.parse.quote(run["report"])}">{html.escape(run["run_id"])}</a>'


def compare_command(facts: dict, before: dict, run: dict) -> str:
  """The command that writes the compare page of `before` against `run`."""
  name = f'compare-{before["run_id"]}-{run["run_id"]}'.replace(':', '-') + '.html'
  return (
    f'.venv/bin/python pipeline.py compare {before["run_id"]} {run["run_id"]} '
    f'--output {facts["output"]} --html {os.path.join(facts["output"], name)}'
  )


def _details(summary: str, text: str, code: bool = False) -> str:
  """`summary`, opened to `text` (a <details>: the table stays narrow)."""
  inner = f'<code>{html.escape(text)}</code>' if code else html.escape(text)
  return f'<details><summary>{html.escape(summary)}</summary>{inner}</details>'


def _versions_table(facts: dict) -> str:
  rows = [
    [
      v['version'],
      'serving' if v['serving'] else ('' if v['present'] else 'folder gone'),
      v['pushed'],
      f'rollback of {v["rollback"]["from_version"]}: {v["rollback"]["reason"] or "-"}'
      if v.get('rollback')
      else v['run_id'] or 'not in ML Metadata',
      f'#{v["model_id"]} {v.get("task") or "-"} {v.get("model") or "-"}'
      if v.get('model_id') is not None
      else None,
      runs_text.data_text(v.get('data') or {}) if v.get('model_id') is not None else None,
      runs_text.figure(v),
    ]
    for v in facts['versions']
  ]
  header = ['version', 'now', 'pushed', 'by run', 'model', 'trained on', 'figure']
  return html.table(header, rows[::-1])


def _runs_table(facts: dict) -> str:
  head = ['#', 'run (its report)', 'wall', 'data', 'task, model', 'figure', 'outcome', 'exit']
  head += ['what changed', 'compare with the run before']
  numbered = _numbered(facts)
  rows = []
  for index, (number, run) in enumerate(numbered):
    before = numbered[index - 1][1] if index else None
    cells = [
      str(number),
      _link(run),
      html.escape(runs_text.wall(run['wall_seconds'])),
      html.escape(runs_text.data_text(run['data'])),
      html.escape(f'{run["task"] or "-"}, {run["model"] or "-"}'),
      html.escape(runs_text.figure(run)),
      f'<span class="{"bad" if run["blessed"] is False else "good"}">'
      f'{html.escape(runs_text.outcome(run))}</span>',
      str(run['exit_code']),
      _details(
        f'{len(run["executed"])} of {len(run["executed"]) + len(run["cached"])} executed',
        runs_text.changes(run),
      ),
      _details('command', compare_command(facts, before, run), code=True) if before else '–',
    ]
    rows.append(
      f'<tr id="{html.escape(run["run_id"])}">' + ''.join(f'<td>{c}</td>' for c in cells) + '</tr>'
    )
  header = ''.join(f'<th>{html.escape(h)}</th>' for h in head)
  return f'<table class="runs"><tr>{header}</tr>{"".join(reversed(rows))}</table>'


def render(facts: dict) -> str:
  """The whole page."""
  serving = facts['serving'] or 'none'
  parts = [
    f'<p>{len(facts["runs"])} run(s), newest first; serving version: {html.escape(serving)} '
    '(the highest under serving/). Each run links to its report. '
    'Two runs side by side: <code>.venv/bin/python pipeline.py compare RUN_A RUN_B '
    f'--output {html.escape(facts["output"])} --html FILE</code>.</p>'
  ]
  tasks = sorted({r['task'] for r in facts['runs'] if r['task']})
  parts += [f'<h2>{html.escape(task)}</h2>{_chart(facts, task)}' for task in tasks]
  parts.append('<h2>Runs</h2>' + (_runs_table(facts) if facts['runs'] else html.absent('No run.')))
  if facts['rollbacks']:
    parts.append('<h2>Rollbacks</h2>')
    parts.append(
      html.table(
        ['when', 'version', 'serving again as', 'reason'],
        [[r['when'], r['from_version'], r['version'], r['reason']] for r in facts['rollbacks']],
      )
    )
  parts.append('<h2>Model versions (serving/)</h2>')
  parts.append(_versions_table(facts) if facts['versions'] else html.absent('None pushed.'))
  return html.page(f'Runs in {facts["output"]}', ''.join(parts))


def write(facts: dict) -> str:
  """Writes <output>/runs.html atomically; returns its path."""
  return atomic.write(os.path.join(facts['output'], RUNS_PAGE), render(facts))
