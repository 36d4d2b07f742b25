"""Which eval classes a model never predicts, from TFMA's confusion matrix as
`contracts.evaluation.confusion_rows` reads it; runs without TFX.

A model that always answers the majority class of 990:10 labels has accuracy 0.99 and is useless
for the minority class. The confusion matrix (threshold 0: the top class) says it directly: no
example of that class lands on the diagonal. One missed example says little, though: a class
missed counts against the model (`judged`) when the eval split holds enough of its examples to
tell, or when it is a minority class there (docs/design/evaluation.md, "Every class predicted").
"""

from typing import Dict, List

# A class with this many eval examples, none predicted as it: the model misses it (if it found
# half of such a class, five misses in a row would happen 1 time in 32).
ENOUGH_EXAMPLES = 5
# A class with this many times fewer eval examples than the largest one is a minority class:
# judged however few its examples (990:10 labels leave ~2 in a 20 % eval split). Balanced data
# does not reach this ratio by the split's chance (10 eval examples per class on average: ~4 to
# ~16 per class).
MINORITY_RATIO = 10


def missed_classes(rows: Dict[int, Dict[int, float]]) -> List[dict]:
  """[{'class_id': c, 'examples': n, 'judged': bool}] for each class with eval examples none of
  which the model predicts as c, by class id."""
  sizes = {c: sum(row.values()) for c, row in rows.items() if c >= 0}
  largest = max(sizes.values(), default=0)
  return [
    {
      'class_id': class_id,
      'examples': int(round(size)),
      'judged': size >= ENOUGH_EXAMPLES or size * MINORITY_RATIO <= largest,
    }
    for class_id, size in sorted(sizes.items())
    if size > 0 and not rows[class_id].get(class_id)
  ]


def unevaluated_classes(rows: Dict[int, Dict[int, float]], num_classes: int) -> List[int]:
  """The model's class ids (0 to num_classes - 1) that no eval example holds: nothing to judge
  them on, so a blessing covers the evaluated classes only."""
  return [c for c in range(num_classes) if not sum(rows.get(c, {}).values())]
