"""trainer/trees.py: the splits read into columns (bounded), the trees grown with YDF and their
figures on train and eval."""

import types

import numpy as np

from tests.support import tabular_rows
from trainer import trees
from trainer.models import gbt


def _fn_args(tmp_path, train_rows: int, table=tabular_rows.rows, hyperparameters=None):
  train = tabular_rows.write(str(tmp_path / 'train'), table(train_rows))
  evaluation = tabular_rows.write(str(tmp_path / 'eval'), table(200, seed=5))
  return types.SimpleNamespace(
    train_files=[train],
    eval_files=[evaluation],
    hyperparameters=hyperparameters,
    working_dir=str(tmp_path / 'tuner'),
  )


def test_grown_trees_and_their_figures(tmp_path):
  grown = trees.grow(_fn_args(tmp_path, 500), tabular_rows.SPEC, None, seed=3)
  assert grown.train_rows == 500
  assert set(grown.history) == {
    'loss',
    'sparse_categorical_accuracy',
    'val_loss',
    'val_sparse_categorical_accuracy',
  }
  assert grown.history['val_sparse_categorical_accuracy'][0] > 0.9
  assert 0 < grown.history['val_loss'][0] < 0.5
  assert grown.hyperparameters[gbt.NUM_TREES] == 300  # the defaults, and the trees kept
  assert 0 < grown.hyperparameters['rounds_kept'] <= 300


def test_regression_figures_in_the_label_units(tmp_path):
  spec = tabular_rows.regression_spec(tabular_rows.numbers(500))
  grown = trees.grow(_fn_args(tmp_path, 500, tabular_rows.numbers), spec, None, loss='mae')
  assert grown.loss == 'mae' and grown.hyperparameters['rounds_kept'] > 0
  assert set(grown.history) == {
    'loss',
    'mean_absolute_error',
    'val_loss',
    'val_mean_absolute_error',
  }
  # the loss on the standardized label, the error in the label's units (deviation ~30)
  mae = grown.history['val_mean_absolute_error'][0]
  assert 0.5 < mae < 5
  np.testing.assert_allclose(grown.history['val_loss'][0], mae / spec.label_std, rtol=1e-4)


def test_a_split_is_read_up_to_max_rows(tmp_path, monkeypatch):
  monkeypatch.setattr(trees, 'MAX_ROWS', 100)
  monkeypatch.setattr(trees, 'READ_BATCH', 64)
  columns, labels = trees.read_split(_fn_args(tmp_path, 300).train_files, tabular_rows.SPEC, None)
  assert len(labels) == 100 and set(columns) == {'x', 'color'}
  assert all(len(values) == 100 for values in columns.values())
  expected = [label for _, _, label in tabular_rows.rows(300)[:100]]
  np.testing.assert_array_equal(labels, expected)  # in order


def test_the_tuner_searches_trees_and_the_trainer_grows_the_best(tmp_path):
  fn_args = _fn_args(tmp_path, 400)
  options = types.SimpleNamespace(max_trials=3, seed=None, loss='')
  search = trees.TreesSearch(
    fn_args, tabular_rows.SPEC, None, 'val_sparse_categorical_accuracy', options, 0
  )
  search.search()
  trials = search.oracle.get_best_trials(3)
  assert len(trials) == 3
  scores = [t.score for t in trials]
  assert scores == sorted(scores, reverse=True) and scores[0] > 0.9  # accuracy: higher is better
  assert len({tuple(sorted(t.hyperparameters.values.items())) for t in trials}) == 3
  best = search.get_best_hyperparameters()[0]
  tuned = _fn_args(tmp_path, 400, hyperparameters=best.get_config())
  grown = trees.grow(tuned, tabular_rows.SPEC, None)
  for name in (gbt.NUM_TREES, gbt.MAX_DEPTH, gbt.SHRINKAGE):
    assert grown.hyperparameters[name] == best.get(name)
  assert grown.history['val_sparse_categorical_accuracy'][0] == scores[0]
