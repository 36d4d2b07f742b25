"""A regression model's figures in words, for the summary (render_regression) and the run report
(report_model.py): against the baselines, its predictions out of the train labels' range, the
label's heavy tail (trainer/label_figures.py), why no MAPE."""

from typing import Dict, List, Optional

from contracts import evaluation as names
from contracts.evaluation import FIGURE_NAMES, figure_text, improvement


def shown(found: Dict[str, float], keys) -> str:
  """'MAE 1.132, RMSE 2.403, MAPE 12.3 %' of the keys `found` has."""
  return ', '.join(
    f'{FIGURE_NAMES[key]} {figure_text(found[key])}' + (' %' if key == names.MAPE_KEY else '')
    for key in keys
    if key in found
  )


def baseline_text(figures: Dict[str, float]) -> str:
  """ "predicting the train median for every row: MAE 7.061; this model's is 84% lower" (and the
  mean's RMSE where measured); '' without the median predictor's MAE."""
  gain = improvement(figures)
  if gain is None or names.BASELINE_MAE_KEY not in figures:
    return ''
  rmse = figures.get(names.BASELINE_RMSE_KEY)
  return (
    f'predicting the train median for every row: MAE '
    f"{figure_text(figures[names.BASELINE_MAE_KEY])}; this model's is {abs(gain):.0%} "
    + ('lower' if gain >= 0 else 'HIGHER')
    + (f' (the train mean: RMSE {figure_text(rmse)})' if rmse is not None else '')
  )


def range_text(figures: Dict[str, float], training: Optional[dict]) -> str:
  """ "12 eval predictions outside the train labels' range [3, 9,800]; 4 below 0, where no train
  label is"; '' when every prediction is within it."""
  outside, other = figures.get(names.OUT_OF_RANGE_KEY), figures.get(names.OTHER_SIGN_KEY)
  if not outside:
    return ''
  training = training or {}
  low, high = training.get('label_min'), training.get('label_max')
  span = (
    f' [{figure_text(low)}, {figure_text(high)}]' if low is not None and high is not None else ''
  )
  said = f"{outside:,.0f} eval prediction(s) outside the train labels' range{span}"
  if other:
    side = 'below' if (low or 0) >= 0 else 'above'
    said += f'; {other:,.0f} {side} 0, where no train label is'
  return said


def tail_text(training: Optional[dict]) -> str:
  """ "the label is heavy-tailed: 6 of 2,400 train labels (0.25 %) beyond …"; '' when it is not
  (or the run recorded no tail)."""
  tail = (training or {}).get('label_tail')
  if not tail:
    return ''
  loss = (training or {}).get('loss')
  return (
    f'the label is heavy-tailed: {tail["rows"]:,} of {tail["of"]:,} train labels '
    f'({tail["rows"] / tail["of"]:.2%}) beyond [{figure_text(tail["low"])}, '
    f"{figure_text(tail['high'])}] (Tukey's far-out fences) pull the mean to "
    f'{figure_text(tail["mean"])} from {figure_text(tail["mean_without"])} without them (median '
    f'{figure_text(tail["median"])}): standardized by its median and IQR, the model judged on '
    'the eval rows within the fences, against the median; --loss mae or huber fits the bulk'
    + (f' (this run: {loss})' if loss else '')
  )


def beyond_text(figures: Dict[str, float]) -> str:
  """ "1 eval row(s) beyond the heavy tail's fences left out of these figures"; '' for none."""
  beyond = figures.get(names.BEYOND_KEY)
  return (
    f"{beyond:,.0f} eval row(s) beyond the heavy tail's fences left out of these figures"
    if beyond
    else ''
  )


def render_regression(
  figures: Dict[str, float], serving: Dict[str, float], training: Optional[dict] = None
) -> List[str]:
  """'eval:       MAE 1.132, RMSE 2.403, R² 0.8812, MAPE 12.3 %' and 'baseline:   …': a
  regression model's figures on the eval split (in the label's units) against the best constants
  of the train split, its predictions out of range, the label's heavy tail, and the serving
  model's figures when one was compared."""
  main = (names.MAE_KEY, names.RMSE_KEY, names.R2_KEY, names.MAPE_KEY)
  no_mape = names.mape_left_out(figures)
  beyond = beyond_text(figures)
  lines = [
    f'eval:       {shown(figures, main)} (eval split, label units)'
    + (f'; {beyond}' if beyond else '')
    + (f'; no MAPE: {no_mape}' if no_mape else '')
  ]
  if baseline_text(figures):
    lines.append(f'baseline:   {baseline_text(figures)}')
  if range_text(figures, training):
    lines.append(f'range:      {range_text(figures, training)}')
  if tail_text(training):
    lines.append(f'tail:       {tail_text(training)}')
  means = shown(figures, (names.MEAN_LABEL_KEY, names.MEAN_PREDICTION_KEY))
  if means:
    lines.append(f'means:      {means}')
  if serving:
    lines.append(f'serving model: {shown(serving, main)} (the same eval rows)')
  return lines
