"""utils/saved_model_ops.py: a fresh process loads a trees model only once the ops are
registered, as ServingCheck's probe, `predict` and Beam's workers do."""

import os
import subprocess
import sys

import tensorflow as tf

from tests.support import tabular_rows
from trainer import signatures, tabular_input, trees
from trainer.models import gbt
from utils import saved_model_ops

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOAD = """
import sys
import tensorflow as tf
from utils import saved_model_ops
try:
  tf.saved_model.load(sys.argv[1])
except Exception as e:
  print('before:', str(e).splitlines()[0])
saved_model_ops.register()
serve = tf.saved_model.load(sys.argv[1]).signatures['serving_default']
print('after:', serve(examples=tf.constant([bytes.fromhex(sys.argv[2])]))['class_ids'].numpy())
"""


def test_a_fresh_process_loads_trees_after_register(tmp_path):
  spec = tabular_rows.SPEC
  examples = tf.constant([tabular_rows.example(*row) for row in tabular_rows.rows(300)])
  columns, labels = tabular_input.parse_tabular(examples, spec)
  columns = {key: value.numpy() for key, value in columns.items()}
  model = gbt.TreesModel(
    gbt.train(columns, labels.numpy(), spec, trees.hyperparameters()), spec.num_classes
  )
  path = str(tmp_path / 'model')
  tf.saved_model.save(model, path, signatures=signatures.tabular_signatures(model, spec))
  red = tabular_rows.example(0.5, 'red').hex()
  done = subprocess.run(
    [sys.executable, '-c', LOAD, path, red], capture_output=True, text=True, check=True, cwd=ROOT
  )
  assert "before: Op type not registered 'SimpleML" in done.stdout  # TF-DF's op, unregistered
  assert 'after: [0]' in done.stdout  # red is class 0


def test_beam_args_name_the_ops_once():
  args = saved_model_ops.with_beam_args(['--direct_num_workers=2'])
  assert args == ['--direct_num_workers=2', f'--beam_plugins={saved_model_ops.OPS_MODULE}']
  assert saved_model_ops.with_beam_args(args) == args
