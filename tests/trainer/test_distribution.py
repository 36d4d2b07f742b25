"""trainer/distribution.py: the strategy from the environment, and file-level sharding.

The multi-worker test starts two real Trainer processes on localhost with a real TF_CONFIG.
"""

import glob
import json
import logging
import os
import re
import socket
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from components.image_example_gen import encode
from contracts import artifacts, image_record
from contracts.trainer_options import TrainerOptions
from records import image_codec
from trainer import distribution

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARDS = 4


def test_a_plain_cpu_gets_the_default_strategy_in_float32_without_xla(monkeypatch, caplog):
  monkeypatch.delenv('TF_CONFIG', raising=False)
  monkeypatch.delenv('TPU_NAME', raising=False)
  with caplog.at_level(logging.INFO):
    plan = distribution.plan(TrainerOptions())
  assert plan.strategy is tf.distribute.get_strategy()
  assert (plan.num_workers, plan.mixed_precision, plan.jit_compile) == (1, 'float32', False)
  assert plan.global_batch(64) == 64
  assert 'no TPU, no GPU, no multi-worker TF_CONFIG' in caplog.text
  assert distribution.plan(TrainerOptions(mixed_precision='mixed_bfloat16', xla=True)).jit_compile


def test_tf_config_gives_the_worker_count_and_index_chief_first(monkeypatch):
  cluster = {'chief': ['h:1'], 'worker': ['h:2', 'h:3']}
  monkeypatch.setenv(
    'TF_CONFIG', json.dumps({'cluster': cluster, 'task': {'type': 'worker', 'index': 1}})
  )
  assert distribution._cluster() == (3, 2)
  monkeypatch.setenv(
    'TF_CONFIG', json.dumps({'cluster': cluster, 'task': {'type': 'chief', 'index': 0}})
  )
  assert distribution._cluster() == (3, 0)


def test_each_worker_gets_every_nth_shard_and_too_few_shards_warn(caplog):
  default = tf.distribute.get_strategy()
  files = [f's{i}' for i in range(5)]
  shares = [distribution.Plan(default, '', 2, i).worker_shards(files) for i in range(2)]
  assert shares == [['s0', 's2', 's4'], ['s1', 's3']]
  with caplog.at_level(logging.WARNING):
    assert distribution.Plan(default, '', 3, 1).worker_shards(['a', 'b']) == ['b']
  assert '2 training shards for 3 workers' in caplog.text
  with pytest.raises(ValueError, match='worker 2 of 3 has no training shard'):
    distribution.Plan(default, '', 3, 2).worker_shards(['a', 'b'])


def _write_examples(root: str) -> None:
  """Digits-like 8x8 records: 4 train shards, 1 eval shard, image_meta.json, as ExampleGen does."""
  rng = np.random.default_rng(0)

  def shard(path, count):
    with tf.io.TFRecordWriter(path) as writer:
      for i in range(count):
        label = i % 2
        pixels = np.full((8, 8), 200 if label else 30, np.uint8) + rng.integers(
          0, 20, (8, 8), dtype=np.uint8
        )
        image = encode.encode_image(tf.io.encode_png(pixels[..., None]).numpy())
        writer.write(
          image_codec.make_example(image, label, str(label), f'{i}.png').SerializeToString()
        )

  os.makedirs(os.path.join(root, 'Split-train'))
  os.makedirs(os.path.join(root, 'Split-eval'))
  for i in range(SHARDS):
    shard(os.path.join(root, 'Split-train', f'data-{i:05d}-of-{SHARDS:05d}'), 64)
  shard(os.path.join(root, 'Split-eval', 'data-00000-of-00001'), 32)
  with open(os.path.join(root, artifacts.IMAGE_META_FILE), 'w') as f:
    json.dump(
      {
        'most_common_size': [8, 8],
        'channels_seen': [1],
        'labels': ['0', '1'],
        'encoding': image_record.ENCODED,
        'uniform_size': True,
      },
      f,
    )


WORKER = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from tfx.components.trainer.fn_args_utils import FnArgs
from trainer import task
from contracts import artifacts, image_record
from records import image_codec
root, out = sys.argv[1:3]
task.run_fn(FnArgs(
    train_files=[root + '/Split-train/*'], eval_files=[root + '/Split-eval/*'], train_steps=6,
    eval_steps=2, serving_model_dir=out + '/serving', model_run_dir=out + '/model_run',
    custom_config={'data_kind': 'image', 'batch_size': 8, 'label_key': 'label'}))
"""


def _free_ports(count):
  sockets = [socket.socket() for _ in range(count)]
  for s in sockets:
    s.bind(('localhost', 0))
  ports = [s.getsockname()[1] for s in sockets]
  for s in sockets:
    s.close()
  return ports


@pytest.mark.slow
def test_two_workers_train_together_on_disjoint_shards_and_only_the_chief_saves(tmp_path):
  examples, out = str(tmp_path / 'examples'), str(tmp_path / 'out')
  _write_examples(examples)
  cluster = {'worker': [f'localhost:{port}' for port in _free_ports(2)]}
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL='3')
  workers = [
    subprocess.Popen(
      [sys.executable, '-c', WORKER, examples, out],
      cwd=ROOT,
      stderr=subprocess.PIPE,
      text=True,
      env=dict(
        env, TF_CONFIG=json.dumps({'cluster': cluster, 'task': {'type': 'worker', 'index': i}})
      ),
    )
    for i in range(2)
  ]
  logs = []
  for worker in workers:
    try:
      _, err = worker.communicate(timeout=300)
    except subprocess.TimeoutExpired:
      for w in workers:
        w.kill()
      raise
    logs.append(err)
    assert worker.returncode == 0, err[-3000:]
  shares = []
  for index, log in enumerate(logs):
    assert f'MultiWorkerMirroredStrategy (TF_CONFIG lists 2 workers; this is worker {index})' in log
    (line,) = re.findall(rf'worker {index} of 2 reads 2 of {SHARDS} training shards: (.*)', log)
    shares.append(line.split(', '))
  # One model trained together: every epoch's loss is all-reduced, so both logs agree.
  epochs = [re.findall(r'epoch (\d+/\d+) \(worker \d of 2\): (.*)', log) for log in logs]
  assert len(epochs[0]) == 6 and epochs[0] == epochs[1]
  all_shards = sorted(glob.glob(os.path.join(examples, 'Split-train', '*')))
  assert shares == [all_shards[0::2], all_shards[1::2]]  # disjoint, together all of them
  assert os.path.isfile(os.path.join(out, 'serving', 'saved_model.pb'))
  assert sorted(os.listdir(out)) == ['model_run', 'serving']  # the other worker wrote elsewhere
  curves = [
    e
    for e in tf.compat.v1.train.summary_iterator(
      glob.glob(os.path.join(out, 'model_run', 'train', 'events.out.tfevents.*'))[0]
    )
    for v in e.summary.value
    if v.tag == 'epoch_loss'
  ]
  assert len(curves) == 6  # TensorBoard curves from the chief
  with open(os.path.join(out, 'model_run', 'training.json')) as f:
    assert len(json.load(f)['history']['loss']) == 6
  assert 'worker-1' in re.search(r'Saved model with signatures .* to (.*)', logs[1]).group(1)
