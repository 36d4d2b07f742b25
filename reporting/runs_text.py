"""`pipeline.py runs` and `pipeline.py models`: their terminal lines, drawn from the facts
metadata/runs.py gathered (a run's row, a model version's)."""

from typing import List, Optional

from contracts import evaluation as evaluation_names
from reporting import summary_text


def figure(entry: dict) -> str:
  """The headline figure: 'accuracy 0.9706', 'MAE 1.23', or '-' (nothing evaluated)."""
  if entry.get('accuracy') is not None:
    return f'accuracy {entry["accuracy"]:.4f}'
  if entry.get('mae') is not None:
    return f'MAE {evaluation_names.figure_text(entry["mae"])}'
  return '-'


def data_text(data: dict) -> str:
  """'/data/digits (300 rows, span 2, git 3a58a3f1d1cb)' of a run's data facts."""
  if not data:
    return 'no data read'
  said = [f'{data["rows"]:,} rows' if data.get('rows') is not None else 'rows ?']
  if data.get('span'):
    said.append(f'span {data["span"]}')
  revision = summary_text.render_revision(data.get('revision') or {})
  if revision:
    said.append(revision)
  return f'{data.get("path")} ({", ".join(said)})'


def outcome(run: dict) -> str:
  """'pushed 1796667527', 'refused: <why>', 'blessed, already serving as …', 'failed'."""
  if run['version']:
    return f'pushed {run["version"]}'
  if run['blessed'] is False:
    return f'refused: {run["blessing"] or "not blessed"}'
  if run['already_serving']:
    return f'blessed, already serving as {run["already_serving"].rstrip("/").rsplit("/", 1)[-1]}'
  if run['exit_code'] == 130:
    return 'interrupted'
  if run['exit_code'] == 1:
    return 'failed'
  return 'blessed, not pushed' if run['blessed'] else 'not evaluated'


def wall(seconds: Optional[float]) -> str:
  return f'{seconds:.0f} s' if seconds is not None else '? s'


def changes(run: dict) -> str:
  """'executed 4 of 10: Trainer (options changed (train_steps 150 → 20)), …' or 'all cached'."""
  total = len(run['executed']) + len(run['cached'])
  if not run['executed']:
    return f'all {total} cached' if total else 'nothing ran'
  named = [
    f'{node} ({run["why_executed"][node]})' if node in run['why_executed'] else node
    for node in run['executed']
  ]
  return f'executed {len(run["executed"])} of {total}: ' + '; '.join(named)


def render_runs(facts: dict) -> List[str]:
  """Two lines per run, newest first, rollbacks between them where they happened."""
  if not facts['runs']:
    return ['no pipeline run in this output folder']
  lines = [f'{len(facts["runs"])} run(s) in {facts["output"]}, newest first:']
  rollbacks = sorted(facts['rollbacks'], key=lambda r: r['when'], reverse=True)
  for run in facts['runs']:
    while rollbacks and rollbacks[0]['when'] >= run['started']:
      lines.append(rollback_line(rollbacks.pop(0)))
    serving = ' (serving)' if run['version'] and run['version'] == facts['serving'] else ''
    lines.append(
      f'{run["run_id"]}  {wall(run["wall_seconds"])}  {data_text(run["data"])}  '
      f'{run["task"] or "-"} {run["model"] or "-"}  {figure(run)}  {outcome(run)}{serving}  '
      f'exit {run["exit_code"]}'
    )
    lines.append(f'    {changes(run)}')
  lines.extend(rollback_line(r) for r in rollbacks)
  return lines


def rollback_line(rollback: dict) -> str:
  return (
    f'{rollback["when"]}  rollback: version {rollback["from_version"]} serving again as '
    f'{rollback["version"]} (model #{rollback["model_id"]}); reason: {rollback["reason"] or "-"}'
  )


def render_models(facts: dict) -> List[str]:
  """One line per version under serving/, oldest first."""
  if not facts['versions']:
    return ['no model version under serving/ (no run pushed one)']
  lines = []
  for v in facts['versions']:
    if v.get('rollback'):
      how = (
        f'rollback of version {v["rollback"]["from_version"]} at {v["pushed"]}'
        f' (reason: {v["rollback"]["reason"] or "-"})'
      )
    elif v['run_id']:
      how = f'pushed {v["pushed"]} by run {v["run_id"]}'
    else:
      how = 'not pushed by any run of this output (not in ML Metadata)'
    trained = (
      f'; model #{v["model_id"]} ({v.get("task") or "-"} {v.get("model") or "-"}) trained on '
      f'{data_text(v.get("data") or {})}; {figure(v)}'
      if v.get('model_id') is not None
      else ''
    )
    state = 'SERVING' if v['serving'] else ('' if v['present'] else 'folder gone')
    lines.append(f'{v["version"]}  {state:<7}  {how}{trained}')
  return lines
