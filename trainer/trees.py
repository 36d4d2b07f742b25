"""`--model gbt` in the Trainer: the splits read once into columns, the trees grown by YDF
(trainer/models/gbt.py), and the figures training.json keeps. Trees are not trained by Keras' fit:
no steps, batches, epochs or distribution strategy; the whole train split is one pass."""

import dataclasses
import logging
import time
from typing import Dict, List, Tuple

import keras_tuner
import numpy as np

from contracts import trainer_options
from trainer import models, shards, tabular_input
from trainer.model import REGRESSION_METRIC
from trainer.models import gbt

NAME = models.TREES
MAX_ROWS = 2_000_000  # rows of a split read into memory; beyond, the first MAX_ROWS
READ_BATCH = 8192


@dataclasses.dataclass
class Grown:
  """The trees as the signatures call them, and what training.json says of them."""

  model: gbt.TreesModel
  hyperparameters: dict
  train_rows: int
  seconds: float
  history: Dict[str, List[float]]  # one entry each: the train and eval splits' figures
  loss: str  # regression: MSE or MAE; classes: ''


def hyperparameters() -> keras_tuner.HyperParameters:
  """gbt.search_space at its defaults (the Tuner does not tune trees: cli/model_options.py)."""
  hp = keras_tuner.HyperParameters()
  gbt.search_space(hp)
  return hp


def read_split(file_patterns, spec, guard) -> Tuple[Dict[str, np.ndarray], np.ndarray]:
  """A split's columns as the model takes them and its labels as the model learns them (class
  ids, or the standardized label), in order, at most MAX_ROWS."""
  dataset = tabular_input.tabular_dataset(
    shards.shard_files(file_patterns), spec, READ_BATCH, False, guard
  )
  batches, rows = [], 0
  for features, labels in dataset:
    batches.append(({key: value.numpy() for key, value in features.items()}, labels.numpy()))
    rows += len(batches[-1][1])
    if rows >= MAX_ROWS:
      logging.warning('gbt: the split is read up to its first %d rows', MAX_ROWS)
      break
  columns = {key: np.concatenate([b[0][key] for b in batches])[:MAX_ROWS] for key in batches[0][0]}
  return columns, np.concatenate([b[1] for b in batches])[:MAX_ROWS]


def figures(
  model: gbt.TreesModel, columns, labels: np.ndarray, spec, loss: str
) -> Dict[str, float]:
  """Classes: cross-entropy and accuracy on rows of known classes. Regression: the loss on the
  standardized label, and the mean absolute error in the label's units (as Keras' history)."""
  if spec.regression:
    errors = model(columns).numpy()[:, 0] - labels
    return {
      'loss': float(np.mean(errors**2 if loss == trainer_options.MSE else np.abs(errors))),
      REGRESSION_METRIC: float(np.mean(np.abs(errors)) * spec.label_std),
    }
  known = labels >= 0
  probabilities = model({k: v[known] for k, v in columns.items()}).numpy()
  picked = probabilities[np.arange(len(probabilities)), labels[known]]
  return {
    'loss': float(-np.mean(np.log(np.clip(picked, 1e-7, 1.0)))),
    'sparse_categorical_accuracy': float(np.mean(np.argmax(probabilities, -1) == labels[known])),
  }


def grow(fn_args, spec, guard, seed=None, loss: str = '') -> Grown:
  """The trees trained on the train split, with their figures on train and eval; regression with
  `loss` (--loss; '': gbt.LOSS)."""
  hp = hyperparameters()
  loss = (loss or gbt.LOSS) if spec.regression else ''
  columns, labels = read_split(fn_args.train_files, spec, guard)
  started = time.monotonic()
  trained = gbt.train(columns, labels, spec, hp, seed, loss)
  seconds = time.monotonic() - started
  model = gbt.TreesModel(trained, spec.num_classes, spec.regression)
  rounds = trained.num_trees() // trained.num_trees_per_iteration()  # a tree per class a round
  logging.info('gbt: %d boosting rounds on %d train rows in %.1f s', rounds, len(labels), seconds)
  history = {key: [value] for key, value in figures(model, columns, labels, spec, loss).items()}
  evaluated = figures(model, *read_split(fn_args.eval_files, spec, guard), spec, loss)
  history.update({f'val_{key}': [value] for key, value in evaluated.items()})
  values = dict(hp.values, rounds_kept=rounds)  # early stopping may keep fewer than num_trees
  return Grown(model, values, len(labels), seconds, history, loss)
