"""TFX's own Chicago taxi pipeline (`taxi_pipeline_native_keras._create_pipeline`, its module
file `taxi_utils_native_keras.py`) run with LocalDagRunner on a few hundred rows: the
Transform and Trainer artifacts, the pushed model and the ML Metadata a module-file run
(`run --module-file`) makes, for the readers of what comes after training."""

import json
import os
from typing import NamedTuple

from tests.support.tfx_data import TAXI_CSV, TFX_DIR

TAXI_DIR = os.path.join(TFX_DIR, 'examples', 'chicago_taxi_pipeline')
MODULE_FILE = os.path.join(TAXI_DIR, 'taxi_utils_native_keras.py')
LABEL = 'tips'
TRAIN_STEPS, EVAL_STEPS = 20, 5  # the example's 1000 and 150: a test needs a model, not a good one


class TaxiRun(NamedTuple):
  root: str  # the pipeline root (the artifacts)
  metadata: str  # metadata.sqlite
  serving: str  # the Pusher's base directory (serving/<version>)
  data: str  # the CSV the ExampleGen read
  held_out: str  # rows not trained on, the label column cut off, as a spreadsheet exports them


def run(folder: str, rows: int = 400, held_out: int = 30) -> TaxiRun:
  """The taxi pipeline on the first `rows` rows (the next `held_out` rows, without `tips`, are
  left for predict) under `folder`, with fewer train and eval steps than the example's."""
  from tfx.examples.chicago_taxi_pipeline import taxi_pipeline_native_keras as taxi
  from tfx.orchestration.local.local_dag_runner import LocalDagRunner

  import config as cfg

  with open(TAXI_CSV) as src:
    lines = [line for _, line in zip(range(1 + rows + held_out), src)]
  data = os.path.join(folder, 'data')
  os.makedirs(data)
  with open(os.path.join(data, 'data.csv'), 'w') as f:
    f.writelines(lines[: 1 + rows])
  held_out_csv = os.path.join(folder, 'unlabeled.csv')
  with open(held_out_csv, 'w', newline='') as f:
    for line in lines[:1] + lines[1 + rows :]:
      f.write(line.rstrip('\n').rsplit(',', 1)[0] + '\r\n')  # tips is the last column
  root, serving = os.path.join(folder, 'root'), os.path.join(folder, 'serving')
  store = os.path.join(folder, 'metadata.sqlite')
  pipeline = taxi._create_pipeline(
    'chicago_taxi_native_keras',
    root,
    data,
    MODULE_FILE,
    serving,
    store,
    ['--direct_running_mode=in_memory', '--direct_num_workers=1', cfg.LOCAL_ENVIRONMENT],
  )
  trainer = next(c for c in pipeline.components if c.id == 'Trainer')
  trainer.exec_properties['train_args'] = json.dumps({'num_steps': TRAIN_STEPS})
  trainer.exec_properties['eval_args'] = json.dumps({'num_steps': EVAL_STEPS})
  # The example blesses at binary accuracy 0.6; a model of TRAIN_STEPS steps is pushed at any
  # accuracy (what comes after a push is tested, not the model)
  evaluator = next(c for c in pipeline.components if c.id == 'Evaluator')
  config = json.loads(evaluator.exec_properties['eval_config'])
  for spec in config['metrics_specs']:
    for metric in spec['metrics']:
      metric['threshold']['value_threshold']['lower_bound'] = 0.0
  evaluator.exec_properties['eval_config'] = json.dumps(config)
  LocalDagRunner().run(pipeline)
  return TaxiRun(root, store, serving, os.path.join(data, 'data.csv'), held_out_csv)
