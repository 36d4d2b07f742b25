"""trainer/task.py: a Ctrl-C that Keras swallowed still stops training; a seed trains the same
model every time."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import ROOT
from trainer import task
from utils import interrupt


def test_a_ctrl_c_keras_swallowed_stops_training_at_the_next_batch():
  model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
  model.compile(optimizer='sgd', loss='mse')
  x = np.zeros((64, 1), np.float32)
  seen = []
  count = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
  interrupt.REQUESTED.set()  # what cli/run.py's SIGINT handler does before raising
  try:
    with pytest.raises(KeyboardInterrupt):
      model.fit(
        x, x, batch_size=8, epochs=3, verbose=0, callbacks=[count, task.stop_on_interrupt()]
      )
  finally:
    interrupt.REQUESTED.clear()
  assert seen == [0]  # stopped after the first batch, not after 24


SCHEMA = """
feature { name: "label" type: INT bool_domain {} shape { dim { size: 1 } } }
feature { name: "x" type: FLOAT shape { dim { size: 1 } } }
feature { name: "y" type: FLOAT shape { dim { size: 1 } } }
"""


def _write_rows(root) -> None:
  """400 rows of two numbers and a label that depends on them, as CSV ExampleGen writes them."""
  rng = np.random.default_rng(0)
  for split, count in (('train', 320), ('eval', 80)):
    os.makedirs(root / f'Split-{split}')
    with tf.io.TFRecordWriter(str(root / f'Split-{split}' / 'data-00000-of-00001')) as writer:
      for x, y in rng.normal(size=(count, 2)):
        label = int(x + y + rng.normal(scale=0.7) > 0)
        feature = {
          'x': tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
          'y': tf.train.Feature(float_list=tf.train.FloatList(value=[y])),
          'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
        }
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        writer.write(example.SerializeToString())
  (root / 'schema.pbtxt').write_text(SCHEMA)


SEEDED = """
import sys
from tensorflow.python.framework import config
from tfx.components.trainer.fn_args_utils import FnArgs
from trainer import task
root, out, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]
for seed in seeds:
  task.run_fn(FnArgs(
    train_files=[root + '/Split-train/*'], eval_files=[root + '/Split-eval/*'], train_steps=60,
    eval_steps=0, schema_path=root + '/schema.pbtxt', serving_model_dir=f'{out}/{seed}/serving',
    model_run_dir=f'{out}/{seed}/run', custom_config={'data_kind': 'tabular', 'seed': int(seed)}))
  assert not config.is_op_determinism_enabled()  # off again for the components after it
"""


@pytest.mark.slow  # two Trainer processes (~20 s)
def test_the_same_seed_trains_the_same_model_in_another_process(tmp_path):
  """Two processes train with --seed 7 (one after a seed 8 training): the same losses and
  eval metrics, epoch by epoch, bit for bit; seed 8 trains another model. Tabular rows: their
  input is cached and reshuffled every pass, and parsed in parallel."""
  examples = tmp_path / 'examples'
  _write_rows(examples)
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL='3')
  runs = [
    subprocess.Popen(
      [sys.executable, '-c', SEEDED, str(examples), str(tmp_path / name), *seeds],
      cwd=ROOT,
      env=env,
      stderr=subprocess.PIPE,
      text=True,
    )
    for name, seeds in (('first', ['8', '7']), ('second', ['7']))
  ]
  for run in runs:
    _, err = run.communicate(timeout=300)
    assert run.returncode == 0, err[-3000:]

  def history(name, seed):
    with open(tmp_path / name / seed / 'run' / 'training.json') as f:
      training = json.load(f)
    assert training['seed'] == int(seed) and training['input_check'] is None
    return training['history']

  seven = history('first', '7')
  assert set(seven) >= {'loss', 'val_loss', 'val_sparse_categorical_accuracy'}
  assert seven == history('second', '7')
  assert history('first', '8')['loss'] != seven['loss']
