"""Whether the eval split is large enough to judge a model on; runs without TFX.

5 eval rows all right is accuracy 1.0, and says almost nothing: no model is blessed on fewer
eval examples than `min_examples`, nor (classifiers) on fewer than `min_class_examples` of any
of its classes (docs/design/evaluation.md, "Enough eval examples"; the defaults and why:
config.py).
"""

from typing import Dict, Optional


def too_small(
  examples: int,
  min_examples: int,
  class_sizes: Optional[Dict[int, float]] = None,
  min_class_examples: int = 0,
) -> Optional[dict]:
  """What is too small, None when nothing is: {'examples': n, 'min_examples': N} with, for a
  classifier (class_sizes: eval examples per class id of the model, 0 for a class none holds),
  'classes': [{'class_id': c, 'examples': k}] below min_class_examples and 'min_class_examples'.
  A minimum of 0 is not checked."""
  short = [
    {'class_id': c, 'examples': int(round(size))}
    for c, size in sorted((class_sizes or {}).items())
    if size < min_class_examples
  ]
  if examples >= min_examples and not short:
    return None
  found = {'examples': examples, 'min_examples': min_examples}
  if short:
    found.update(classes=short, min_class_examples=min_class_examples)
  return found


def class_sizes(rows: Dict[int, Dict[int, float]], num_classes: int) -> Dict[int, float]:
  """Eval examples per class id 0..num_classes - 1 of the model (0 where none), from the
  confusion matrix as contracts.evaluation.confusion_rows reads it."""
  return {c: sum(rows.get(c, {}).values()) for c in range(num_classes)}
