"""The run report: one self-contained HTML page (<output>/report.html) written at the end of
`pipeline.py run`, for people rather than logs.

Drawn from the run's facts, which metadata/report_facts.py gathers from what the run left behind:
ML Metadata (which artifacts this run used or produced), StatisticsGen's statistics,
ExampleValidator's anomalies, the exclusion report, <model_run>/training.json (the model, its
phases, per-epoch history and the Trainer's input check), the Tuner's trials
(tuner_results.json), TFMA's metrics, the lineage (metadata/lineage.py), image data's first eval
records and the model's answers on them (metadata/eval_predictions.py): nothing here reads ML
Metadata, records or models. Charts are drawn with matplotlib (reporting/pictures.py) and embedded as
inline SVG (reporting/html.py): the file opens offline and can be mailed.
A section whose artifacts the run did not produce (it stopped earlier) says so.
"""

import os
import time
from typing import Callable, Dict

from contracts import evaluation as evaluation_names
from reporting import html, lineage_text, pictures, report_data, report_model, summary_text
from utils import atomic

REPORT_FILE = 'report.html'
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
# A module file's run alone (run --module-file): what its Transform computed, before Training.
TRANSFORM_SECTION = ('transform', 'Transform')


def _run_section(result, config) -> str:
  rows = [
    ['pipeline', config.pipeline_name],
    ['data', f'{config.data_kind}: {config.data}'],
    ['output', config.output],
    ['wall time', summary_text.render_wall(result)],  # the summary's figure
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


def _lineage_section(config, lineage) -> str:
  """This run's data version and model (report_facts.Lineage; None: no examples)."""
  if lineage is None:
    return html.absent('No examples were produced.')
  rows = [
    [
      f'examples #{v["examples_id"]}',
      v['created'],
      v['span'],
      v['version'] or '-',
      ', '.join(f'{k} {n}' for k, n in (v['split_counts'] or {}).items()),
      v['source'],
      summary_text.render_revision(v['revision']) or '-',
      str(v['fingerprint'])[:60],
    ]
    for v in lineage.data_versions
  ]
  columns = ['data', 'created', 'span', 'version', 'counts', 'from', 'revision', 'fingerprint']
  parts = [html.table(columns, rows)]
  for entry in lineage.models:
    evaluated = '; '.join(
      f'examples #{e["evaluated_on"]}{" (blessed)" if e["blessed"] else ""}'
      for e in entry['evaluations']
      if e['role'] == evaluation_names.CANDIDATE
    )
    parts.append(
      html.table(
        ['model', 'created', 'trained on', 'evaluated on', 'pushed to'],
        [
          [
            f'model #{entry["model_id"]}',
            entry['created'],
            f'examples #{entry["trained_on"]}' + lineage_text.render_transform(entry),
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


_DRAWN: Dict[str, tuple] = {}  # section: (what it was drawn from, its HTML), the last drawing


def _drawn(section: str, key, draw: Callable[[], str]) -> str:
  """draw(), or the HTML the last draw of `section` gave when its `key` is the same: a warm
  process's next run (`run --watch`) whose data did not change draws its data charts once."""
  last = _DRAWN.get(section)
  if key is None or last is None or last[0] != key:
    last = _DRAWN[section] = (key, draw())
  return last[1]


def render(facts, config) -> str:
  """The whole page of the run's facts (metadata/report_facts.ReportFacts). The sections of the
  data alone (examples, features) are drawn again only when the statistics are another artifact
  (published artifacts do not change)."""
  result, images = facts.result, facts.image_encoding
  drawn_from = facts.statistics.uri
  # Image data: the first eval records (gathered), decoded once for the sample grid and the
  # misclassified.
  eval_images = pictures.parsed_images(facts.eval_predictions.records) if images else ()
  training = facts.training
  bodies = {
    'run': _run_section(result, config),
    'examples': _drawn(
      'examples',
      drawn_from
      and (
        drawn_from,
        config.label,
        summary_text.regressed(result),
        str(result.examples_per_split),
      ),
      lambda: report_data.examples_section(result, facts.statistics),
    )
    + report_data.samples_section(result, images, eval_images),
    'features': _drawn(
      'features',
      drawn_from and (drawn_from, bool(images)),
      lambda: report_data.features_section(facts.statistics.features, histograms=not images),
    ),
    'anomalies': report_data.anomalies_section(result),
    'excluded': report_data.excluded_section(result, facts.excluded),
    'duplicates': report_data.duplicates_section(result, facts.duplicates, config),
    'training': report_model.training_section(training, facts.tuner_trials, facts.model_run_uri),
    'evaluation': report_model.evaluation_section(facts, images, eval_images, config.label),
    'input': report_model.input_section(training, facts.damage),
    'lineage': _lineage_section(config, facts.lineage),
  }
  shown = list(SECTIONS)
  transform = getattr(facts, 'transform', None)
  if transform is not None:
    bodies[TRANSFORM_SECTION[0]] = report_data.transform_section(transform)
    shown.insert(shown.index(('training', 'Training')), TRANSFORM_SECTION)
  title = f'{config.pipeline_name} run, {time.strftime("%Y-%m-%d %H:%M")}'
  nav = ''.join(f'<a href="#{key}">{html.escape(name)}</a>' for key, name in shown)
  sections = ''.join(
    f'<section id="{key}"><h2>{html.escape(name)}</h2>{bodies[key]}</section>'
    for key, name in shown
  )
  return html.page(title, f'<nav>{nav}</nav>{sections}')


def write(facts, config, kept: str = '') -> str:
  """Writes <output>/report.html atomically, and the same page as `kept` (a path under the
  output's local folder: reports/<run id>.html, metadata/runs.report_file) when given, keeping the
  newest config.keep_reports of that folder (0: all); returns report.html's path."""
  page = render(facts, config)
  if kept:
    kept = atomic.write(os.path.join(config.local_dir, kept), page)
    prune(os.path.dirname(kept), config.keep_reports)
  return atomic.write(os.path.join(config.local_dir, REPORT_FILE), page)


def prune(folder: str, keep: int) -> None:
  """Removes all but the newest `keep` reports (*.html) of `folder`; keep 0: none removed."""
  if not keep:
    return
  pages = sorted(
    (os.path.join(folder, name) for name in os.listdir(folder) if name.endswith('.html')),
    key=os.path.getmtime,
  )
  for path in pages[:-keep]:
    os.remove(path)
