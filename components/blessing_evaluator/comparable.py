"""Whether the serving model can be scored on this run's data at all; runs without TFX.

The Evaluator compares the candidate with the serving model (the change threshold) only when the
serving model reads this data as it was trained to: an output folder reused for a table of other
columns would otherwise fail inside TFMA (the serving model's `transform_features` cannot parse
a column of another type) or score the serving model on defaults for the columns it misses
(accuracy 0.000). Not comparable: the comparison is skipped, the candidate is judged on its own
thresholds, and the blessing names why (`contracts.evaluation.NOT_COMPARED`).

Each check takes the two models' SavedModel folders and says why they cannot be compared, or ''
(not_comparable runs them all): the columns here; another check of the serving model against
this data (its class list, say) joins CHECKS.
"""

from typing import List

from contracts import serving

SHOWN = 5  # columns named per list, at most


def _named(columns: List[str]) -> str:
  more = len(columns) - SHOWN
  return ', '.join(columns[:SHOWN]) + (f' and {more} more' if more > 0 else '')


def other_columns(candidate_dir: str, serving_dir: str) -> str:
  """Why the serving model cannot read this data's records: columns it parses that the candidate
  (trained on this data) does not, or parses as another type; '' when it reads them all (extra
  columns here do not matter) or a model says nothing of its columns (serving.columns)."""
  theirs, ours = serving.columns(serving_dir), serving.columns(candidate_dir)
  if not theirs or not ours:
    return ''
  missing = sorted(set(theirs) - set(ours))
  retyped = sorted(c for c in set(theirs) & set(ours) if theirs[c] != ours[c])
  if not missing and not retyped:
    return ''
  said = []
  if missing:
    said.append(f'it reads {_named(missing)}, not in this data')
  if retyped:
    said.append(
      _named([f'{c} ({theirs[c]}, here {ours[c]})' for c in retyped]) + ' of another type'
    )
  added = sorted(set(ours) - set(theirs))
  if added:
    said.append(f'new here: {_named(added)}')
  return 'trained on other columns: ' + '; '.join(said)


CHECKS = (other_columns,)


def not_comparable(candidate_dir: str, serving_dir: str) -> str:
  """Why the serving model cannot be compared with the candidate on this data ('' when it can):
  every check's reason, joined."""
  return '; '.join(filter(None, (check(candidate_dir, serving_dir) for check in CHECKS)))
