"""The run report's model sections (reporting/report.py assembles the page): training (the model,
its phases and history, the Tuner's trials), evaluation (per class, the confusion matrix, slices,
the blessing, the serving check) and the Trainer's input pipeline. Drawn from the run's facts
(metadata/report_facts.py).
"""

from typing import Dict, List, Optional, Sequence

from contracts import evaluation as evaluation_names
from contracts import input_check
from contracts.trainer_options import REGRESSION
from reporting import html, pictures, regression_text, summary_text

# Confused pairs listed in place of a confusion matrix too big to read (pictures.MAX_MATRIX):
# the few that explain most errors, on one screen.
MAX_CONFUSED_PAIRS = 30


def _model_html(training: dict) -> str:
  """The model, its backbone's weights and hyperparameters, and the phases it trained in
  (trainer/fine_tune.py); '' for a training.json written before they were recorded."""
  if 'model' not in training:
    return ''
  rows = [['label', training['label']]] if training.get('label') else []
  if training.get('dates'):
    rows.append(['dates', training['dates']])
  if training.get('task') == REGRESSION:
    rows.append(['task', f'regression, loss {training.get("loss", "?")}'])
    rows += [
      [f'train {name}', training[key]]
      for name, key in (
        ('label mean', 'label_mean'),
        ('label median', 'label_median'),
        ('label deviation', 'label_std'),
      )
      if key in training
    ]
  rows.append(['model', training['model']])
  if training.get('weights'):
    rows.append(['backbone weights', training['weights']])
  if 'xla' in training:
    rows.append(['XLA', 'on' if training['xla'] else 'off'])
  if 'seed' in training:  # run --seed: reproducible (docs/operations.md)
    seed = training['seed']
    rows.append(['seed', 'none' if seed is None else f'{seed} (deterministic ops)'])
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


def _tuning_html(trials: Optional[list], task: Optional[str] = None) -> str:
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
    "best one's values.</p>"
    + html.table(['trial'] + names + [summary_text.tuning_score(task)], rows)
  )


def training_section(
  training: Optional[dict], tuner_trials: Optional[list], model_run_uri: Optional[str]
) -> str:
  """training.json, the Tuner's trials (None without a Tuner) and where TensorBoard's logs are."""
  tuning = _tuning_html(tuner_trials, (training or {}).get('task'))
  if training is None:
    return html.absent('No training: the run stopped before the Trainer.') + tuning
  history = training['history']
  metrics = [k for k in history if not k.startswith('val_')]
  regressing = training.get('task') == REGRESSION
  if regressing:  # the error in the label's units first; the loss is on the standardized label
    metrics.sort(key=lambda k: k != evaluation_names.MAE_KEY)
  metrics = metrics[:3]
  figure, axes = pictures.new_figure('training curves', (4 * len(metrics), 3), 1, len(metrics))
  for axis, metric in zip(axes[0], metrics):
    epochs = range(1, len(history[metric]) + 1)
    axis.plot(epochs, history[metric], marker='o', label='train')
    if f'val_{metric}' in history:
      axis.plot(epochs, history[f'val_{metric}'], marker='o', label='eval')
    axis.set_title(_curve_title(metric) if regressing else metric)
    axis.set_xlabel('epoch')
    axis.legend()
  rows = [
    [epoch + 1] + [history[k][epoch] for k in history] for epoch in range(len(history[metrics[0]]))
  ]
  return (
    _model_html(training)
    + _trained_how(training)
    + html.chart(figure)
    + html.table(['epoch'] + list(history), rows)
    + '<p>TensorBoard: <code>.venv/bin/tensorboard --logdir '
    + f'{html.escape(model_run_uri)}</code></p>'
    + _single_features_html(training.get('single_feature_scores') or {}, regressing)
    + tuning
  )


def _trained_how(training: dict) -> str:
  """Steps, batch and epochs; gradient-boosted trees (training.json's `trees`): their rounds."""
  trees = training.get('trees')
  if trees:
    return (
      f'<p>Gradient-boosted trees: {trees["rounds"]:,} boosting rounds on {trees["train_rows"]:,} '
      f"train rows in {trees['seconds']:.1f} s (grown by YDF, not by Keras' fit; the history "
      'has one row: the train and eval splits).</p>'
    )
  return (
    f'<p>{training["train_steps"]:,} steps of batch {training["batch_size"]} in '
    f'{training["epochs"]} epochs.</p>'
  )


def _curve_title(metric: str) -> str:
  """A regression model's training curve named with its units: its MAE in the label's, its loss
  on the label standardized by the train split's mean and deviation (training.json)."""
  if metric == evaluation_names.MAE_KEY:
    return 'MAE (label units)'
  return f'{metric} (standardized label)' if metric == 'loss' else metric


def _single_features_html(scores: Dict[str, float], regressing: bool = False) -> str:
  """Each column alone (trainer/leakage.py), best first; '' for data without columns."""
  if not scores:
    return ''
  score, rule, away = (
    (
      'eval R² on the label ranks',
      'the mean label rank of the train rows of the same or nearest value',
      'about as high as the label itself scores through the rule',
    )
    if regressing
    else (
      'eval accuracy',
      'the label most train rows of the same or nearest value have',
      'near 1.0',
    )
  )
  return (
    f'<h3>Each column alone</h3><p>{score[0].upper() + score[1:]} of a one-feature rule learned '
    f'on train ({rule}): a column {away} gives the label away, and the run stops before '
    'training unless --allow-feature keeps it.</p>'
    + html.table(['column', f'{score} alone'], [[n, f'{s:.4f}'] for n, s in scores.items()])
  )


def _confusion(rows: Dict[int, Dict[int, float]], size: int = 0) -> Optional[List[List[float]]]:
  """The candidate's confusion matrix on the eval split (rows: evaluation_names.confusion_rows)
  as rows true, columns predicted class id; at least `size` (the number of class names) square,
  so that a class that is last and neither seen nor predicted still has its row and column."""
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
    + html.left_out_line(min(len(names), pictures.MAX_BARS), len(names), rest, 'recall')
    + html.table(header, rows)
  )
  if matrix:
    html_out += '<h3>Confusion matrix (eval split)</h3>' + confusion_html(matrix, names)
  return html_out


def _per_class_section(facts, images: str, eval_images: tuple) -> str:
  """per_class_html of the run and, for image data (images: their encoding, else '';
  eval_images: pictures.parsed_images), the misclassified eval images."""
  names = list(facts.result.class_recall)
  if not facts.evaluation.metrics or not names:
    return ''
  classes = facts.evaluation.per_class
  candidate = classes.get(evaluation_names.CANDIDATE, {})
  html_out = per_class_html(
    names,
    candidate.get(evaluation_names.RECALL_KEY, []),
    candidate.get(evaluation_names.PRECISION_KEY, []),
    classes.get(evaluation_names.BASELINE, {}).get(evaluation_names.RECALL_KEY),
    _confusion(facts.evaluation.confusion, len(names)),
  )
  predicted = facts.eval_predictions.class_ids
  if eval_images and predicted is not None:
    figure = pictures.misclassified(predicted, *eval_images, names, images)
    html_out += '<h3>Misclassified</h3>' + (
      html.chart(figure) if figure else '<p>No misclassified image among those checked.</p>'
    )
  return html_out


def slices_html(slices: Dict[str, dict]) -> str:
  """Example count and accuracy (a classifier) or the regression figures per value of each
  --slice-feature (report_facts.Evaluation.slices)."""
  if not slices:
    return ''
  figures = [
    key
    for key in (evaluation_names.MAE_KEY, evaluation_names.RMSE_KEY, evaluation_names.R2_KEY)
    if any(key in found for found in slices.values())
  ]
  shown = figures or ['accuracy']
  rows = [
    [where, found['examples']] + [found.get(k) for k in shown] for where, found in slices.items()
  ]
  names = [evaluation_names.FIGURE_NAMES.get(k, k) for k in shown]
  return '<h3>Per slice</h3>' + html.table(['slice', 'examples'] + names, rows)


def regression_html(result, predictions, label: str) -> str:
  """A regression model against the train split's best constants, its predictions out of the
  train labels' range, the label's heavy tail, why no MAPE (regression_text.py), and its pictures
  on the first eval rows (predictions: report_facts' eval_predictions; pictures.regression, axes
  named by the label column); '' for a classifier."""
  figures = result.regression
  if not figures:
    return ''
  no_mape = evaluation_names.mape_left_out(figures)
  sentences = [
    regression_text.beyond_text(figures),
    regression_text.baseline_text(figures),
    regression_text.range_text(figures, result.training),
    regression_text.tail_text(result.training),
    f'No MAPE: {no_mape}' if no_mape else '',
  ]
  said = ''.join(f'<p>{html.escape(text[0].upper() + text[1:])}.</p>' for text in sentences if text)
  if predictions.predicted is None:
    return '<h3>Predictions</h3>' + said
  figure = pictures.regression(predictions.predicted, predictions.actual, label)
  return '<h3>Predictions</h3>' + said + html.chart(figure)


def evaluation_section(facts, images: str, eval_images: tuple, label: str = 'label') -> str:
  """The Evaluator's figures, the blessing, the serving check and the details of the run's
  facts (report_facts.ReportFacts)."""
  metrics, result = facts.evaluation.metrics, facts.result
  if not metrics:
    return html.absent('No evaluation: the run stopped before the Evaluator.')
  why = html.escape(result.blessing or '')
  verdict = (
    f'<p class="good">Blessed ({why}); pushed to '
    f'<code>{html.escape(result.pushed_to or "-")}</code>.</p>'
    if result.blessed
    else f'<p class="bad">Not blessed ({why}); not pushed, the serving model stays.</p>'
  )
  details = (
    regression_html(result, facts.eval_predictions, label)
    + _per_class_section(facts, images, eval_images)
    + slices_html(facts.evaluation.slices)
  )
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


def input_section(training: Optional[dict], damage: Optional[dict]) -> str:
  if training is None:
    return html.absent('No input check: the run stopped before the Trainer.')
  check = training['input_check']
  if check is None and training.get('trees'):
    return html.absent('No input check: gradient-boosted trees read their splits into memory once.')
  if check is None:
    return html.absent(
      f'No input check: skipped under distributed training ({training.get("distribution")}).'
    )
  found = input_check.of_check(check, training['batch_size'])
  verdict = (
    f'<p class="bad">Training was {html.escape(found.words)}. First thing to try: '
    f'{html.escape(check["hint"])}.</p>'
    if found.input_bound
    else f'<p class="good">{html.escape(found.words[0].upper() + found.words[1:])}.</p>'
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
    read, recorded = damage.get('read') or {}, damage.get('recorded') or {}
    if any(read.get(split, 0) != n for split, n in recorded.items()):
      rows.append(
        [
          'records read of those recorded',
          ', '.join(f'{split} {read.get(split, 0):,} of {n:,}' for split, n in recorded.items())
          + f' ({damage["missing"]:,} missing)',
        ]
      )
  return verdict + html.table(['', ''], rows)
