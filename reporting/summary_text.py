"""The terminal lines of a run's summary (cli/run.py prints them; `unchanged` reprints them), from
its RunResult (metadata/run_result.py: `result` below)."""

from typing import Dict, List, Optional

from contracts import splits
from contracts.trainer_options import REGRESSION
from reporting.regression_text import render_regression

# What near-duplicate detection of images finds and misses, as bench/near_duplicates.py measured
# it at duplicates.NEAR_DISTANCE (docs/benchmarks.md, "Near-duplicate images": 224x224 crops / large
# photos / tiles). Said on every image run: a copy it misses can straddle train and eval unannounced.
NEAR_COPIES_MEASURED = (
  'near-copies grouped as measured (docs/benchmarks.md): resized, re-encoded or brightened '
  '95-100 %, mirrored 82-100 %, cropped 2 % 75-94 % (32-64 px tiles: 54-99 %); not caught: '
  'crops of 5 % or more (5 %: 20-38 % found, 10 %: almost none)'
)


def regressed(result) -> bool:
  """Whether the run trained a regression model (training.json's task, or its figures)."""
  return (result.training or {}).get('task') == REGRESSION or bool(result.regression)


def render_duplicates(facts: dict, regression: bool = False) -> List[str]:
  """The summary's lines on duplicates: kept together, near-copies, conflicts, given splits;
  regression: the label is a number, whose rows of the same features and other values are its
  spread, kept together (cli/config_builder.py), not conflicts."""
  parts = []
  if facts['duplicates']:
    parts.append(
      f'{facts["duplicates"]} example(s) share their content with another, each set in one split'
    )
  if facts['near_duplicate_groups']:
    parts.append(
      f'{facts["near_duplicate_groups"]} group(s) of near-duplicate images, each in one split'
    )
  conflicts = facts['label_conflicts']
  if conflicts and regression:
    parts.append(
      f'{conflicts} example(s) share their features with another of another label value, '
      "kept, each set in one split (the label's spread, not a conflict)"
    )
  elif conflicts:
    named = ', '.join(f'{c.get("path") or c.get("row")} ({c["label"]})' for c in facts['conflicts'])
    more = (
      f' and {conflicts - len(facts["conflicts"])} more'
      if conflicts > len(facts['conflicts'])
      else ''
    )
    what = (
      'kept, each set in one split: too many for mislabelled copies (over '
      f'{splits.MAX_CONFLICT_SHARE:.0%} of the examples), so the label is noisy for these features'
      if facts.get('label_noisy')
      else 'kept (--duplicates keep-conflicts)'
      if facts['conflicts_kept']
      else 'left out of both splits'
    )
    parts.append(
      f'{conflicts} example(s) whose content is filed under two labels, {what}'
      + (f': {named}{more}' if named else '')
    )
  lines = []
  if parts:
    lines.append('duplicates: ' + '; '.join(parts) + f' (see {facts["report"]})')
  if facts.get('near_copies_checked'):
    lines.append(('            ' if lines else 'duplicates: ') + NEAR_COPIES_MEASURED)
  if facts['across_splits']:
    named = ', '.join(a['row'] for a in facts['across'])
    lines.append(
      f'warning:    {facts["across_splits"]} example(s) of the given splits have their content in '
      f'both train and eval ({named}, …): eval {"errors" if regression else "accuracy"} may be '
      f'{"understated" if regression else "inflated"}; --eval-percent N '
      're-splits the data with duplicates grouped'
    )
  return lines


def render_id_columns(columns: List[str]) -> str:
  """The warning that names the id-like columns ExampleGen found and treated as ids."""
  named = ', '.join(columns)
  return (
    f'warning:    {named}: a different value in every row, treated as row id(s): left out of '
    "the model's inputs and of a row's content (copies of a row under other ids share a split); "
    f'--id-column COLUMN names the id columns instead (--id-column {columns[0]} to keep this)'
  )


def render_numbers_from_text(columns: Dict[str, dict]) -> str:
  """'numbers:    price, temp read as numbers from text (price: currency signs; temp: minus signs
  −; …): price 3 cell(s) not numbers, rate 10 placeholder(s) read as missing' (ExampleGen's
  NUMBERS_FROM_TEXT facts; each column's forms: contracts/text_numbers.FORMS)."""
  missing = []
  for column, cells in columns.items():
    said = [
      f'{cells[key]} {what}'
      for key, what in (('other', 'cell(s) not numbers'), ('placeholders', 'placeholder(s)'))
      if cells.get(key)
    ]
    if said:
      missing.append(f'{column} {" and ".join(said)}')
  forms = '; '.join(
    f'{column}: {", ".join(cells["forms"])}'
    for column, cells in columns.items()
    if cells.get('forms')
  )
  return (
    f'numbers:    {", ".join(columns)} read as numbers from text ('
    + (forms or '$ € £ ¥, %, thousands separators, (accounting) negatives')
    + '; predict and monitor read them alike)'
    + (f': {", ".join(missing)} read as missing' if missing else '')
  )


def render_numbers_unread(columns: Dict[str, list]) -> List[str]:
  """ "numbers:    column 'x' looks numeric but is read as text: '12~5', '7~1', …" per column
  (ExampleGen's NUMBERS_UNREAD facts)."""
  return [
    f'numbers:    column {column!r} looks numeric but is read as text: '
    + ', '.join(repr(cell) for cell in shown)
    + ', … (a category of its cells; the numbers read: docs/data.md)'
    for column, shown in columns.items()
  ]


def render_serving_check(report: dict) -> str:
  """'ok, loaded in 0.41 s; p50 / p99 per request: serving_default 0.8 / 1.9 ms, …' or
  'failed (predict_image_bytes: …)'."""
  if report['problems']:
    return 'failed (' + '; '.join(report['problems']) + ')'
  timings = ', '.join(
    f'{name} {t["p50_ms"]:.1f} / {t["p99_ms"]:.1f} ms' for name, t in report['signatures'].items()
  )
  return f'ok, loaded in {report["load_seconds"]:.2f} s; p50 / p99 per request: {timings}'


def render_input_check(check: dict) -> str:
  """The Trainer's input check (trainer/diagnosis.py) and cache decision, in one line."""
  parts = [check['verdict']] if check.get('verdict') else []
  if check.get('stall_fraction') is not None:
    parts.append(f'training waited for input {check["stall_fraction"]:.1%} of the time')
  if check.get('cache'):
    parts.append(check['cache']['note'])  # trainer/input_cache.py's words
  return '; '.join(parts)


def _values(values: dict) -> str:
  return ', '.join(
    f'{name} {value:g}' if isinstance(value, float) else f'{name} {value}'
    for name, value in sorted(values.items())
  )


def render_training(training: dict) -> List[str]:
  """'label: …' (a table's label: classes, or two on a threshold), 'model: …' (the model, its
  hyperparameters, the backbone's weights) and, for a model trained in phases
  (trainer/fine_tune.py), 'training: …' with each phase's steps, rate, time."""
  weights = f'; backbone weights: {training["weights"]}' if training.get('weights') else ''
  tuned = ' (tuned)' if training.get('tuned') else ''
  seed = f'; seed {training["seed"]}, deterministic ops' if training.get('seed') is not None else ''
  lines = [f'label:      {training["label"]}'] if training.get('label') else []
  if training.get('dates'):
    lines.append(f'dates:      {training["dates"]}')
  if training.get('leakage'):  # trainer/leakage.py's columns on too few eval rows to judge
    lines.append(f'leakage?    {training["leakage"]}')
  loss = f'; loss {training["loss"]}' if training.get('loss') else ''
  lines.append(
    f'model:      {training["model"]}{weights}; {_values(training["hyperparameters"])}{tuned}'
    + loss
    + seed
  )
  phases = training.get('phases') or []
  if len(phases) > 1 or (phases and phases[0]['name'] != 'train'):
    lines.append(
      'training:   '
      + ', then '.join(
        f'{p["name"]} {p["steps"]} steps at learning rate {p["learning_rate"]:g}'
        + (
          f' (top {p["unfrozen_layers"]} backbone layers unfrozen)'
          if p.get('unfrozen_layers')
          else ' (backbone frozen)'
          if p['name'] == 'head'
          else ''
        )
        + f' in {p["seconds"]:.1f} s'
        for p in phases
      )
    )
  return lines


def tuning_score(task: Optional[str]) -> str:
  """What a Tuner trial's score is: the classifier's eval accuracy, the regression model's eval
  loss (the Tuner minimises it)."""
  return 'eval loss' if task == REGRESSION else 'eval accuracy'


def render_tuning(trials: list, task: Optional[str] = None) -> str:
  """'best of 3 trials: trial 2, eval accuracy 0.9100 with learning_rate …' (TFX's
  tuner_results.json: finished trials, best first, each {trial_id, score, **values})."""
  if not trials:
    return 'no trial finished'
  best = {k: v for k, v in trials[0].items() if k not in ('trial_id', 'score')}
  return (
    f'best of {len(trials)} trials: trial {trials[0]["trial_id"]}, {tuning_score(task)} '
    f'{trials[0]["score"]:.4f} with {_values(best)}'
  )


def render_revision(revision: dict) -> str:
  """'git 3a58a3f1d1cb (v1), dvc md5 7625a6b5….dir (images.dvc)' of the data_* properties
  (data_revisions/revision.py); '' for none."""
  parts = []
  if revision.get('data_git_commit'):
    rev = revision.get('data_rev')
    parts.append(
      f'git {revision["data_git_commit"][:12]}'
      + (f' ({rev})' if rev else '')
      + (' with uncommitted changes' if revision.get('data_git_dirty') else '')
    )
  elif revision.get('data_git_dirty'):
    parts.append('git: no commit yet')
  if revision.get('data_dvc_md5'):
    parts.append(f'dvc md5 {revision["data_dvc_md5"]} ({revision["data_dvc_file"]})')
  if revision.get('data_s3_endpoint'):
    parts.append(f'{revision["data_source"]} at {revision["data_s3_endpoint"]}')
  return ', '.join(parts)


def render(result) -> List[str]:
  """Human-readable lines of the summary."""
  lines = ['── summary ──']
  if result.span:
    lines.append(f'data:       span {result.span}')
  revision = result.data_revision or {}
  if render_revision(revision):
    lines.append(f'data rev:   {render_revision(revision)}')
  if revision.get('data_git_dirty'):
    lines.append(
      'warning:    --data has changes git (or DVC) has not committed: '
      'this run did not read a committed snapshot'
    )
  if result.examples_per_split:
    short = result.trainer_read or {}
    lines.append(
      'examples:   '
      + ', '.join(
        f'{split} {n}'
        + (
          f' (the Trainer read {short[split][0]} of {short[split][1]} recorded: '
          f'{short[split][1] - short[split][0]} missing from damaged shards)'
          if split in short
          else ''
        )
        for split, n in result.examples_per_split.items()
      )
      + (
        f'; {result.turned_upright} photo(s) turned upright by their EXIF orientation'
        if result.turned_upright
        else ''
      )
    )
  if result.csv_dialect:
    lines.append(f'csv:        {result.csv_dialect}')
  if result.repeated_headers:
    lines.append(
      f'skipped:    {result.repeated_headers} row(s) repeating the CSV header mid-file (files '
      'joined with their headers), not read as data'
    )
  if result.non_finite_cells:
    lines.append(
      f'missing:    {result.non_finite_cells} cell(s) of inf or nan read as missing values (as '
      'empty cells are), not as numbers'
    )
  if result.numbers_from_text:
    lines.append(render_numbers_from_text(result.numbers_from_text))
  if result.numbers_unread:
    lines.extend(render_numbers_unread(result.numbers_unread))
  if result.input_damage is not None:
    damage = result.input_damage
    lines.append(
      f'input:      {damage["corrupt"]} damaged record(s) dropped from '
      f'{damage["damaged_shards"]} of {damage["shards"]} file(s) ({damage["lost_bytes"]} bytes, '
      f'{damage["truncated_bytes"]} truncated); read from intact copies in {damage["salvaged_to"]}'
    )
  if result.excluded_files is not None:
    lines.append(
      f'excluded:   {result.excluded_files} file(s)'
      + (f' (see {result.excluded_report})' if result.excluded_files else '')
    )
  if result.duplicates:
    lines.extend(render_duplicates(result.duplicates, regressed(result)))
  if result.id_columns:
    lines.append(render_id_columns(result.id_columns))
  if result.anomalies is not None:
    lines.append(
      f'anomalies:  {len(result.anomalies)}' + ''.join(f'\n  - {a}' for a in result.anomalies)
    )
  if result.tuning is not None:
    lines.append(f'tuning:     {render_tuning(result.tuning, (result.training or {}).get("task"))}')
  if result.transform_cache:
    cache = result.transform_cache
    lines.append(
      f"transform:  {cache['from_cache']} analyzers read from the last run's analyzer cache,"
      f' {cache["computed"]} computed'
    )
  if result.training:
    lines.extend(render_training(result.training))
  if result.input_check:
    lines.append(f'input check: {render_input_check(result.input_check)}')
  if result.regression:
    lines.extend(
      render_regression(result.regression, result.evaluation.serving_figures, result.training)
    )
  if result.eval_accuracy is not None:
    lines.append(f'eval accuracy: {result.eval_accuracy:.4f}')
  recall = {name: value for name, value in result.class_recall.items() if value is not None}
  if recall:
    weakest = min(recall, key=recall.get)
    unmeasured = len(result.class_recall) - len(recall)
    lines.append(
      f'per class:  recall {recall[weakest]:.3f} (class {weakest}) to {max(recall.values()):.3f},'
      f' {len(result.class_recall)} classes'
      + (f' ({unmeasured} with no eval example)' if unmeasured else '')
    )
  if result.batch_capped is not None:
    capped = result.batch_capped
    lines.append(
      f'batch:      {capped["train_examples"]}, the whole train split '
      f'(--batch-size {capped["asked"]} is more than it holds)'
    )
  if result.predicts:
    lines.append(f"predicts:   {result.predicts} (the module file's model, read at evaluation)")
  if result.blessed is not None:
    why = f' ({result.blessing})' if result.blessing else ''
    lines.append(f'blessed:    {"yes" if result.blessed else "no"}{why}')
  if result.serving_check is not None:
    lines.append(f'serving:    {render_serving_check(result.serving_check)}')
  if result.push is not None:
    lines.append(
      f'pushed to:  {result.push.destination}'
      if result.push.destination
      else f'pushed to:  not again: already serving as {result.push.already_serving}'
      if result.push.already_serving
      else 'pushed to:  not pushed'
    )
  if (result.inferred or {}).get('csv'):
    lines.append(_inferred_line(result.inferred, result.blessed))
  if result.run_id:
    lines.append(f'run id:     {result.run_id}')
  if result.unchanged:
    lines.append(
      'components: none run: the data, code, options and serving model are those of run '
      f'{result.run_id}, whose results these are (--no-cache runs the pipeline anyway)'
    )
    lines.append(
      f'wall time:  {result.unchanged["seconds"]:.1f} s (that run: {render_wall(result)})'
    )
    lines.extend(_report_line(result))
    return lines
  total = len(result.components)
  lines.append(
    f'components: {len(result.executed)} executed, {len(result.cached)} cached of {total}'
    + (' (all cached: nothing re-ran)' if total and len(result.cached) == total else '')
  )
  for node, reason in sorted((result.why_executed or {}).items()):
    lines.append(f'  {node} executed: {reason}')
  lines.append(f'wall time:  {render_wall(result)}')
  lines.extend(_report_line(result))
  return lines


def _inferred_line(inferred: dict, blessed: Optional[bool]) -> str:
  """'inferred:   40 input(s) → …/predictions.csv', with photos turned and files skipped."""
  return (
    f'inferred:   {inferred["inputs"]} input(s) → {inferred["csv"]}'
    + ('' if inferred['inputs'] or blessed else ' (not blessed: none scored)')
    + (
      f'; {inferred["turned_upright"]} photo(s) turned upright by their EXIF orientation'
      if inferred.get('turned_upright')
      else ''
    )
    + (
      f'; {inferred["skipped"]} file(s) skipped (see {inferred["skipped_report"]})'
      if inferred.get('skipped')
      else ''
    )
  )


def _report_line(result) -> List[str]:
  """Where report.html is, for a run that writes one."""
  if result.report is None:
    return []
  if not result.report:
    return ['report:     not written (see the log)']
  took = result.report_seconds
  lines = [f'report:     {result.report}' + (f' (written in {took:.1f} s after)' if took else '')]
  if result.runs_page is not None:
    lines.append(f'runs page:  {result.runs_page or "not written (see the log)"}')
  return lines


def render_wall(result) -> str:
  """The process's own time, from its start to the end of its components (taken before the
  report is written, so that the report shows it too), and the part before the first component
  (imports, data checks); the components' alone for a summary from before it was recorded."""
  if result.process_seconds is None:
    return f'{result.wall_seconds:.1f} s'
  if result.before_components_seconds is None:  # stopped before the first component
    return f'{result.process_seconds:.1f} s'
  return (
    f'{result.process_seconds:.1f} s ({result.before_components_seconds:.1f} s before '
    f'the first component: imports, data checks; {result.wall_seconds:.1f} s the components)'
  )
