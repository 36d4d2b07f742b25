"""Gradient-boosted trees for tables (`--model gbt`), trained by YDF (Yggdrasil Decision Forests)
and served through TensorFlow Decision Forests' inference op.

Not a Keras model, so not behind build_model: the Trainer (trainer/trees.py) reads the train
split into columns once, `train` grows the trees, and `TreesModel` wraps YDF's TensorFlow function
so that it is called as the Keras models are, `model(columns, training=False)` → class
probabilities [B, num_classes], or for regression the standardized label [B, 1] (the signatures
give it back in the label's units), and saved with the same signatures (trainer/signatures.py).
The columns are what the MLP takes (trainer/tabular_input.model_columns): numbers as float32,
categories as hashed int64 ids, which the trees split on as categories; a list column [B, N] is
N numerical features (YDF unrolls it).
"""

from typing import Dict

import numpy as np
import tensorflow as tf

from contracts import trainer_options
from contracts.errors import UnusableModel

NUM_TREES = 'num_trees'
MAX_DEPTH = 'max_depth'
SHRINKAGE = 'shrinkage'
LOSS = trainer_options.MSE  # regression's default: squared error, as scikit-learn's boosting
YDF_LOSSES = {trainer_options.MSE: 'SQUARED_ERROR', trainer_options.MAE: 'MEAN_AVERAGE_ERROR'}
# A leaf's fewest train rows, as scikit-learn's HistGradientBoosting (YDF's own: 5). On the taxi
# fares (docs/models.md), leaves of 5 rows fitted single outliers: eval RMSE 3.8-3.9 against
# 3.3-3.4 with 20 (early stopping on, 3 seeds); classes were unchanged (taxi tips AUC 0.952).
MIN_EXAMPLES = 20


def search_space(hp) -> None:
  """YDF's defaults. Classes: YDF's early stopping on 10 % of the train split picks the rounds
  kept. Regression: every round on every train row (`train`)."""
  hp.Int(NUM_TREES, 50, 500, step=50, default=300)
  hp.Int(MAX_DEPTH, 3, 8, default=6)
  hp.Float(SHRINKAGE, 0.02, 0.3, sampling='log', default=0.1)


def train(columns: Dict[str, np.ndarray], labels: np.ndarray, spec, hp, seed=None, loss: str = ''):
  """YDF gradient-boosted trees of `labels` (class ids, or the standardized label when
  spec.regression, with `loss`: MSE or MAE) from `columns`, keyed as
  trainer/tabular_input.model_columns keys them; spec.categorical columns split as categories."""
  import ydf

  label = '__label__'
  while label in columns:
    label += '_'
  features = [
    (key, ydf.Semantic.CATEGORICAL if key in spec.categorical else ydf.Semantic.NUMERICAL)
    for key in columns
  ]
  task = ydf.Task.CLASSIFICATION
  if spec.regression:
    if loss not in YDF_LOSSES:
      raise UnusableModel(f'--model gbt: --loss {loss}: the trees regress with mse or mae')
    task = ydf.Task.REGRESSION
  learner = ydf.GradientBoostedTreesLearner(
    label=label,
    task=task,
    features=features,
    num_trees=hp.get(NUM_TREES),
    max_depth=hp.get(MAX_DEPTH),
    shrinkage=hp.get(SHRINKAGE),
    min_examples=MIN_EXAMPLES,
    # Regression: no early stopping. Squared error over 10 % of the rows is steered by a few
    # outliers: on the taxi fares it kept 18 to 218 rounds by seed (eval MAE 1.18 to 1.88); all
    # 300 on every row gave MAE 1.19, RMSE 3.09.
    **({'loss': YDF_LOSSES[loss], 'validation_ratio': 0.0} if spec.regression else {}),
    **({} if seed is None else {'random_seed': seed}),
  )
  return learner.train({**columns, label: labels}, verbose=0)


def _input_columns(trained) -> tuple:
  """The columns YDF's TensorFlow function takes: its input features, those YDF unrolled from a
  list column ([B, N] → `pixels.00_of_64` …) as the list column itself, once."""
  spec = trained.data_spec()
  unrolled = {
    spec.columns[i].name: stacked.original_name
    for stacked in spec.unstackeds
    for i in range(stacked.begin_column_idx, stacked.begin_column_idx + stacked.size)
  }
  return tuple(dict.fromkeys(unrolled.get(n, n) for n in trained.input_feature_names()))


class TreesModel(tf.Module):
  """YDF's TensorFlow function as the Keras models are called: columns → probabilities
  [B, num_classes], a class the train split did not hold at 0; regression: [B, 1]."""

  def __init__(self, trained, num_classes: int, regression: bool = False):
    super().__init__(name='gbt')
    self.columns = _input_columns(trained)
    self.trees = trained.to_tensorflow_function()
    self.regression = regression
    if not regression:
      # YDF's classes are the class ids as strings, in its own order: column j of its output
      # is class int(classes[j]) of ours.
      classes = [int(name) for name in trained.label_classes()]
      self.binary = len(classes) == 2  # YDF answers the second class's probability alone
      self._to_classes = tf.constant(np.eye(num_classes, dtype=np.float32)[classes])

  def __call__(self, inputs: Dict[str, tf.Tensor], training: bool = False) -> tf.Tensor:
    out = self.trees({key: inputs[key] for key in self.columns})
    if self.regression:
      return tf.reshape(out, [-1, 1])
    if self.binary:
      out = tf.stack([1.0 - out, out], axis=-1)
    return tf.matmul(out, self._to_classes)
