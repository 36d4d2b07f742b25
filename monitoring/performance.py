"""The serving model's error on served rows that carry the label (labels joined back), beside its
own eval figures, as Vertex AI Model Monitoring's and Evidently's performance reports set them
(docs/monitoring.md#the-models-error-on-labelled-rows).

Each row is scored as TFMA scored the eval split (metadata/model_answers.py): the label through
the model's TRANSFORM signature (a class id, or the number), the prediction from serving_default
(CLASS_IDS or PREDICTION; a module file's model: its output read as the Evaluator read it, the
raw label as its transform_features returns it). A regression model is flagged when its MAE on the rows grew more than
`max_error_increase` (a share) above its eval MAE, a classifier when its accuracy fell more than
`max_accuracy_drop` below its eval accuracy — and, either way, by more than twice the window's
standard error, so that a small window's noise flags nothing. Fewer than `min_rows` labelled
rows are measured but not judged.
"""

import math
from typing import Dict, List, Optional

import numpy as np

from contracts import evaluation as evaluation_names
from metadata import model_answers

ENTRY = 'model error'  # its name among the flagged names
STANDARD_ERRORS = 2.0  # a change smaller than this many of the window's standard errors is noise


def labelled(examples: List[bytes], label: str) -> List[bytes]:
  """The serialized tf.Examples that carry a value of `label`."""
  import tensorflow as tf

  found = []
  for serialized in examples:
    feature = tf.train.Example.FromString(serialized).features.feature.get(label)
    kind = feature.WhichOneof('kind') if feature is not None else None
    if kind and len(getattr(feature, kind).value):
      found.append(serialized)
  return found


def judge(
  regression: bool,
  predicted: np.ndarray,
  actual: np.ndarray,
  eval_figures: Dict[str, float],
  max_accuracy_drop: float,
  max_error_increase: float,
  min_rows: int,
) -> dict:
  """The entry of the summary's 'performance': {'task', 'rows', 'figures', 'eval_figures',
  'flagged', 'why'} ('why': one line, flagged or not)."""
  rows = int(len(actual))
  if regression:
    errors = np.abs(predicted - actual)
    figures = {
      evaluation_names.MAE_KEY: float(errors.mean()),
      evaluation_names.RMSE_KEY: float(np.sqrt(np.mean((predicted - actual) ** 2))),
    }
    key, worse_by = evaluation_names.MAE_KEY, max_error_increase
    ours, theirs = figures[key], eval_figures.get(key)
    noise = STANDARD_ERRORS * float(errors.std()) / math.sqrt(rows) if rows else math.inf
    past = theirs is not None and ours > theirs * (1 + worse_by)  # the threshold, noise aside
    worse = past and ours - theirs > noise
    said = (
      f'MAE {ours:,.4g} on {rows} served rows with the label'
      + (f' against {theirs:,.4g} on the eval split' if theirs is not None else '')
      + (f' ({(ours - theirs) / theirs:+.0%}; flagged above +{worse_by:.0%})' if theirs else '')
    )
  else:
    unknown = int(np.sum(actual < 0))  # a class the train split did not have: counted wrong
    figures = {evaluation_names.ACCURACY_KEY: float(np.mean(predicted == actual)) if rows else 0.0}
    key = evaluation_names.ACCURACY_KEY
    ours, theirs = figures[key], eval_figures.get(key)
    spread = theirs if theirs is not None else ours
    noise = STANDARD_ERRORS * math.sqrt(max(spread * (1 - spread), 1e-12) / rows) if rows else 1
    past = theirs is not None and theirs - ours > max_accuracy_drop
    worse = past and theirs - ours > noise
    said = (
      f'accuracy {ours:.4f} on {rows} served rows with the label'
      + (f' against {theirs:.4f} on the eval split' if theirs is not None else '')
      + (f' (flagged more than {max_accuracy_drop:g} below)' if theirs is not None else '')
      + (f'; {unknown} labelled with a class the model was not trained on' if unknown else '')
    )
  if theirs is None:
    said += ': no eval figure recorded for the model, not judged'
  elif rows < min_rows:
    worse = False
    said += f': fewer than {min_rows} rows, not judged'
  elif worse:
    said += f", beyond the window's noise ({noise:.3g})"
  elif past:
    said += f": within the window's noise ({noise:.3g}), not flagged"
  return {
    'task': 'regression' if regression else 'classification',
    'rows': rows,
    'figures': figures,
    'eval_figures': {k: v for k, v in eval_figures.items() if k in figures},
    'flagged': bool(worse),
    'why': said,
  }


def measure(
  saved_model_dir: str,
  examples: List[bytes],
  label: str,
  regression: bool,
  eval_figures: Dict[str, float],
  max_accuracy_drop: float,
  max_error_increase: float,
  min_rows: int,
  fences: Optional[list] = None,
) -> Optional[dict]:
  """judge()'s entry for the rows of `examples` that carry `label`; None when none does, or the
  model cannot be scored on them (model_answers.scored).
  fences: a heavy-tailed label's [low, high]: rows beyond are left out (and counted), as the
  Evaluator left them out of the eval figures."""
  rows = labelled(examples, label) if label else []
  if not rows:
    return None
  scored = model_answers.scored(saved_model_dir, rows, regression, label)
  if scored is None:
    return None
  predicted, actual = scored
  read = ~np.isnan(predicted) & ~np.isnan(actual)
  unread = int((~read).sum())  # a value the model's parsing requires is missing
  predicted, actual = predicted[read], actual[read]
  beyond = 0
  if regression and fences:
    inside = (actual >= fences[0]) & (actual <= fences[1])
    beyond = int((~inside).sum())
    predicted, actual = predicted[inside], actual[inside]
  entry = judge(
    regression,
    predicted,
    actual,
    eval_figures,
    max_accuracy_drop,
    max_error_increase,
    min_rows,
  )
  if unread:
    entry['why'] += (
      f'; {unread} labelled row(s) the model cannot read (a value it requires is missing) left out'
    )
  if beyond:
    entry['why'] += (
      f"; {beyond} labelled row(s) beyond the heavy tail's fences left out, as in the eval figures"
    )
  return dict(entry, beyond_fences=beyond, unread=unread)
