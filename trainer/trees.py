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


def hyperparameters(tuned=None) -> keras_tuner.HyperParameters:
  """gbt.search_space at its defaults, or at the Tuner's best values (a get_config())."""
  if tuned:
    return keras_tuner.HyperParameters.from_config(tuned)
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


def chosen_loss(spec, asked: str) -> str:
  """Regression's loss: --loss, else gbt.LOSS; '' for classes."""
  return (asked or gbt.LOSS) if spec.regression else ''


def fit(split, spec, hp, seed, loss: str):
  """(YDF's trees, the TreesModel that serves them) grown on `split` (columns, labels)."""
  trained = gbt.train(*split, spec, hp, seed, loss)
  return trained, gbt.TreesModel(trained, spec.num_classes, spec.regression)


def grow(fn_args, spec, guard, seed=None, loss: str = '') -> Grown:
  """The trees trained on the train split, with their figures on train and eval; regression with
  `loss` (--loss; '': gbt.LOSS)."""
  hp = hyperparameters(fn_args.hyperparameters)
  loss = chosen_loss(spec, loss)
  train = read_split(fn_args.train_files, spec, guard)
  started = time.monotonic()
  trained, model = fit(train, spec, hp, seed, loss)
  seconds = time.monotonic() - started
  rounds = trained.num_trees() // trained.num_trees_per_iteration()  # a tree per class a round
  logging.info('gbt: %d boosting rounds on %d train rows in %.1f s', rounds, len(train[1]), seconds)
  history = {key: [value] for key, value in figures(model, *train, spec, loss).items()}
  evaluated = figures(model, *read_split(fn_args.eval_files, spec, guard), spec, loss)
  history.update({f'val_{key}': [value] for key, value in evaluated.items()})
  values = dict(hp.values, rounds_kept=rounds)  # early stopping may keep fewer than num_trees
  return Grown(model, values, len(train[1]), seconds, history, loss)


class TreesSearch(keras_tuner.Tuner):
  """KerasTuner's random search over gbt.search_space for TFX's Tuner: the splits read once, each
  trial grows the trees on train and is scored on eval (`val_` figures, as Keras' fit names
  them); no Keras model is built and none is kept."""

  def __init__(self, fn_args, spec, guard, objective: str, options, search_seed: int):
    """options: the TunerOptions (max_trials; seed and loss as the Trainer's)."""
    oracle = keras_tuner.oracles.RandomSearchOracle(
      objective=objective,
      max_trials=options.max_trials,
      hyperparameters=hyperparameters(),
      seed=search_seed,
    )
    super().__init__(
      oracle=oracle, directory=fn_args.working_dir, project_name='trials', overwrite=True
    )
    self.spec, self.seed, self.loss = spec, options.seed, chosen_loss(spec, options.loss)
    self.train = read_split(fn_args.train_files, spec, guard)
    self.evaluation = read_split(fn_args.eval_files, spec, guard)

  def run_trial(self, trial, *args, **kwargs) -> Dict[str, float]:
    _, model = fit(self.train, self.spec, trial.hyperparameters, self.seed, self.loss)
    evaluated = figures(model, *self.evaluation, self.spec, self.loss)
    return {f'val_{key}': value for key, value in evaluated.items()}
