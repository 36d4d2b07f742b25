"""`pipeline.py lineage`'s terminal lines: every data version, model and monitoring run of an
output folder, as metadata/lineage.py traced them."""

from typing import List

from contracts import evaluation as evaluation_names
from reporting import summary_text


def render_evaluation(evaluation: dict) -> str:
  """One evaluation of a model (lineage._evaluation), as candidate or as the serving baseline,
  with the model's own accuracy (a regression model's MAE)."""
  e = evaluation
  accuracy = (
    f'accuracy {e["accuracy"]:.4f}'
    if e['accuracy'] is not None
    else f'MAE {evaluation_names.figure_text(e[evaluation_names.MAE_KEY])}'
    if evaluation_names.MAE_KEY in e
    else 'accuracy ?'
  )
  if e['role'] == evaluation_names.BASELINE:
    verdict = 'blessed' if e['against_blessed'] else 'not blessed'
    return f'baseline on #{e["evaluated_on"]} against model #{e["against"]} ({verdict}): {accuracy}'
  against = f' against model #{e["against"]}' if e['against'] is not None else ''
  return (
    f'evaluated on #{e["evaluated_on"]}{against}: {accuracy}, '
    f'{"blessed" if e["blessed"] else "not blessed"}'
  )


def render_transform(model: dict) -> str:
  """' through transform graph #G (module M)' for a model of a module file's run, else ''."""
  transform = model.get('transform')
  if not transform:
    return ''
  module = model.get('module') or transform.get('module')
  transformed = transform.get('transformed_examples')
  return (
    f' through transform graph #{transform["transform_graph"]}'
    + (f' (examples #{transformed})' if transformed is not None else '')
    + (f', module {module}' if module else '')
  )


def render(report: dict) -> List[str]:
  """One line per data version, model and monitoring run of `report` (lineage.trace)."""
  lines = ['data versions:']
  for v in report['data_versions']:
    counts = ', '.join(f'{k} {n}' for k, n in (v['split_counts'] or {}).items())
    lines.append(
      f'  examples #{v["examples_id"]}  {v["created"]}  span {v["span"]} version '
      f'{v["version"] if v["version"] is not None else "-"}  {counts or "?"}  '
      f'from {v["source"]}  fingerprint {str(v["fingerprint"])[:60]}'
      + (f'  {summary_text.render_revision(v["revision"])}' if v.get('revision') else '')
    )
  lines.append('models:')
  for m in report['models']:
    evaluated = '; '.join(render_evaluation(e) for e in m['evaluations']) or 'not evaluated'
    lines.append(
      f'  model #{m["model_id"]}  {m["created"]}  trained on #{m["trained_on"]}'
      f'{render_transform(m)}; {evaluated}; pushed to {", ".join(m["pushed_to"]) or "nowhere"}'
    )
  if report.get('rollbacks'):
    lines.append('rollbacks (pipeline.py rollback):')
  for r in report.get('rollbacks', []):
    lines.append(
      f'  {r["when"]}  version {r["from_version"]} (model #{r["model_id"]}) serving again as '
      f'{r["path"]}; reason: {r["reason"] or "-"}'
    )
  if report.get('monitoring'):
    lines.append('monitoring runs (pipeline.py monitor):')
  for run in report.get('monitoring', []):
    flagged = ', '.join(run['flagged'])
    lines.append(
      f'  monitor #{run["execution_id"]}  {run["created"]}  model #{run["model_id"]}  '
      f'serving data {run["serving_data"]}: {"flagged " + flagged if flagged else "nothing flagged"}'
      f'  ({run["summary"]})'
    )
  return lines
