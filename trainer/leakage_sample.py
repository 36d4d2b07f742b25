"""The samples trainer/leakage.py judges, read from a table's train and eval shards: the model's
columns for the one-feature rules, the values as written for one_to_one."""

from typing import List

import numpy as np
import tensorflow as tf

from trainer import leakage, shards, tabular_input

SAMPLE_ROWS = 4096  # rows of each split read


def single_feature_scores(features, train_labels, eval_files, spec, guard) -> tuple:
  """(leakage.single_feature_scores of the train sample against an eval sample of as many rows,
  the eval sample's labels)."""
  sample = tabular_input.tabular_dataset(eval_files, spec, SAMPLE_ROWS, False, guard)
  found = next(iter(sample), None)
  if found is None:
    return {}, np.zeros(0)
  train, evaluation = (  # a list column is not scored: no one value of it is the column
    {k: v.numpy() for k, v in d.items() if k not in spec.list_lengths} for d in (features, found[0])
  )
  eval_labels = found[1].numpy()
  scores = leakage.single_feature_scores(
    train, train_labels.numpy(), evaluation, eval_labels, spec.categorical, spec.regression
  )
  return scores, eval_labels


def _written(files: List[str], spec):
  """The first SAMPLE_ROWS rows of `files` parsed as written (ragged), or None."""
  batch = next(iter(shards.serialized_batches(files, SAMPLE_ROWS, False)), None)
  return None if batch is None else tf.io.parse_example(batch, spec.parse_spec())


def _text(values: np.ndarray) -> np.ndarray:
  return np.array([v.decode('utf-8', 'replace') if isinstance(v, bytes) else v for v in values])


def check_one_to_one(train_files: List[str], eval_files: List[str], spec, allowed, guard) -> None:
  """leakage.check_one_to_one on the values as written in the train and eval samples together
  (all rows of a table of up to SAMPLE_ROWS a split), against the class names; classes only."""
  if spec.regression:
    return
  parts = [
    p
    for p in (_written(shards.readable_files(f, guard), spec) for f in (train_files, eval_files))
    if p is not None
  ]
  if not parts:
    return
  ids = np.concatenate(
    [
      tabular_input.tabular_label(
        tabular_input.label_or_default(p[spec.label_key], spec), spec
      ).numpy()
      for p in parts
    ]
  )
  names = spec.class_names
  classes = np.array([names[i] if 0 <= i < len(names) else '' for i in ids])
  columns = {
    key: (
      _text(np.concatenate([tabular_input.first_or_default(p[key]).numpy() for p in parts])),
      np.concatenate([p[key].row_lengths().numpy() > 0 for p in parts]) & (ids >= 0),
    )
    for key in spec.numeric + spec.categorical
    if key not in spec.list_lengths
  }
  leakage.check_one_to_one(columns, classes, spec.label_key, allowed)
