"""The label's checks before training, for the Trainer's input setup (trainer/setup.py): numbers
that cannot be classes, a class too small for the Evaluator's minimum, a constant; a regression
label's center and scale."""

import dataclasses

from contracts import labels
from contracts.errors import UnusableData
from trainer import label_figures, shards, tabular_input


def check_eval_classes(what: str, names, train, evaluation, options, hint: str = '') -> None:
  """UnusableData before training when a class has fewer eval examples than the Evaluator needs
  (labels.short_classes_message: its advice). train, evaluation: records per class id."""
  eval_counts = {name: int(evaluation[i]) for i, name in enumerate(names)}
  totals = {name: int(train[i]) + int(evaluation[i]) for i, name in enumerate(names)}
  minimum = options.min_eval_class_examples
  message = labels.short_classes_message(what, eval_counts, totals, minimum, hint)
  if message:
    raise UnusableData(message)


def label_id_counts(files, key: str, classes: int, guard) -> list:
  counts = shards.int_label_counts(files, key, guard)
  return [counts.get(i, 0) for i in range(classes)]


def check_classes(label_key: str, counts: dict) -> None:
  """UnusableData with the true reason when numbers cannot be classes: not all integers (every
  value read, some shown), or integers that look like a quantity (labels.looks_regressed)."""
  examples = f'the {sum(counts.values()):,} train and eval examples'
  fractions = sorted(v for v in counts if not float(v).is_integer())
  if fractions:
    seen, median = 0, None
    for value in sorted(counts):  # the median of the rows
      seen += counts[value]
      median = value if median is None and 2 * seen >= sum(counts.values()) else median
    raise UnusableData(
      labels.float_label_message(label_key, examples, median)
      + f'; not integers: {", ".join(f"{v:g}" for v in fractions[: labels.SHOWN_ROWS])}'
    )
  if labels.looks_regressed(counts):
    raise UnusableData(labels.regression_message(label_key, counts, examples))


def standardized(spec, train_files, guard):
  """(the spec with the train split's label center and scale, label_figures.of's figures);
  UnusableData for a constant."""
  values = tabular_input.label_values(train_files, spec, guard)
  if not values.size or not values.std() > 0:
    raise UnusableData(
      labels.constant_message(
        spec.label_key,
        f'{values[0] if values.size else 0.0:g}',
        f'the {values.size:,} train examples',
      )
    )
  figures = label_figures.of(values)
  center, scale = label_figures.standardization(figures)
  return dataclasses.replace(spec, label_mean=center, label_std=scale), figures
