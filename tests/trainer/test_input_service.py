"""trainer/input_service.py: the Trainer's training input on tf.data service.

Real processes on 127.0.0.1: a dispatcher and two workers started with
`python -m trainer.input_service`, the project's input function and Trainer reading through them.
"""

import collections
import json
import logging
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import keras
import pytest
import tensorflow as tf
from tfx.components.trainer.fn_args_utils import FnArgs

from cli import main as cli_main
from components.image_example_gen import encode
import config as cfg
from contracts import artifacts, image_record
from contracts.trainer_options import TrainerOptions
import pipeline
from records import image_codec
from tests.support import built_models
from trainer import data_spec, image_input, input_service, task

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BATCH = 16
START_S = 120  # hang guard: a process importing TensorFlow on 2 busy cores


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


def _start(log_dir, name: str, *args: str) -> subprocess.Popen:
  log = open(os.path.join(log_dir, f'{name}.log'), 'w')  # TensorFlow logs a lot: not a pipe
  return subprocess.Popen(
    [sys.executable, '-m', 'trainer.input_service', *args],
    cwd=ROOT,
    stdout=subprocess.PIPE,
    stderr=log,
    text=True,
    env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL='2'),
  )


def _ready(process: subprocess.Popen) -> str:
  """The process's first line ('… ready: …'), waiting at most START_S."""
  readable, _, _ = select.select([process.stdout], [], [], START_S)
  line = process.stdout.readline() if readable else ''
  assert 'ready' in line, f'{process.args[3:]} not ready (exit {process.poll()})'
  return line


def _stop(processes) -> None:
  for process in processes:
    if process.poll() is None:
      process.kill()
    process.wait(timeout=30)


class Service:
  """A dispatcher and `workers` worker processes on loopback; stop() ends them all."""

  def __init__(self, log_dir, workers: int = 2):
    port = _free_port()
    self.address = f'grpc://127.0.0.1:{port}'
    self.dispatcher = _start(log_dir, 'dispatcher', 'dispatcher', '--port', str(port))
    self.workers = []
    try:
      _ready(self.dispatcher)
      self.workers = [
        _start(
          log_dir, f'worker{i}', 'worker', '--dispatcher', self.address, '--port', str(_free_port())
        )
        for i in range(workers)
      ]
      for worker in self.workers:
        _ready(worker)
    except BaseException:
      self.stop()
      raise

  def stop(self) -> None:
    _stop([self.dispatcher] + self.workers)


@pytest.fixture(scope='module')
def service(tmp_path_factory):
  started = Service(str(tmp_path_factory.mktemp('service-logs')))
  yield started
  started.stop()


@pytest.fixture(scope='module')
def examples(digits_subset, tmp_path_factory) -> str:
  """The digits subset as the ExampleGen writes it: 4 train shards, 1 eval shard, meta."""
  root = str(tmp_path_factory.mktemp('examples'))
  labels = sorted(os.listdir(digits_subset))
  writers = {}
  for split, count in (('train', 4), ('eval', 1)):
    os.makedirs(os.path.join(root, f'Split-{split}'))
    writers[split] = [
      tf.io.TFRecordWriter(os.path.join(root, f'Split-{split}', f'data-{i}')) for i in range(count)
    ]
  index = 0
  for label, name in enumerate(labels):
    for filename in sorted(os.listdir(os.path.join(digits_subset, name))):
      with open(os.path.join(digits_subset, name, filename), 'rb') as f:
        image = encode.encode_image(f.read())
      shards = writers['eval' if index % 5 == 0 else 'train']
      shards[index % len(shards)].write(
        image_codec.make_example(image, label, name, f'{name}/{filename}').SerializeToString()
      )
      index += 1
  for shards in writers.values():
    for writer in shards:
      writer.close()
  with open(os.path.join(root, artifacts.IMAGE_META_FILE), 'w') as f:
    json.dump(
      {
        'most_common_size': [8, 8],
        'channels_seen': [1],
        'labels': labels,
        'encoding': image_record.ENCODED,
        'uniform_size': True,
      },
      f,
    )
  return root


def _records(batches) -> collections.Counter:
  """Each delivered record as (label, its 8×8 pixels), counted."""
  seen = collections.Counter()
  for images, labels in batches:
    seen.update(zip(labels.numpy().tolist(), (i.tobytes() for i in images.numpy())))
  return seen


def _one_epoch(examples):
  """The project's image input function over the training split, one pass (no repeat)."""
  spec = data_spec.image_spec(examples, TrainerOptions())
  return image_input.image_dataset(
    os.path.join(examples, 'Split-train', '*'), spec, BATCH, training=False
  )


def test_distributed_epoch_delivers_every_training_record_exactly_once(service, examples):
  here = _records(_one_epoch(examples))
  assert sum(here.values()) == 320
  job = 'exactly-once'
  assert _records(input_service.distribute(_one_epoch(examples), service.address, job)) == here
  # Both workers serve: parallel_epochs, where each worker reads everything, delivers it twice.
  twice = _records(
    input_service.distribute(_one_epoch(examples), service.address, 'twice', mode='parallel_epochs')
  )
  assert twice == collections.Counter({key: 2 * n for key, n in here.items()})


def test_trainers_sharing_the_job_each_get_a_share_and_together_the_epoch(service, examples):
  """Each trainer builds its own dataset (in one process, a second iteration of the same dataset
  object would be a new iteration of the job: a whole epoch of its own)."""
  shares = [None, None]

  def trainer(index):
    shares[index] = _records(
      input_service.distribute(_one_epoch(examples), service.address, 'shared')
    )

  threads = [threading.Thread(target=trainer, args=(i,)) for i in range(2)]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join(timeout=60)
  assert all(shares), 'a trainer got nothing (or hung)'
  assert shares[0] + shares[1] == _records(_one_epoch(examples))


def _run_trainer(examples, out, **custom_config) -> dict:
  task.run_fn(
    FnArgs(
      train_files=[os.path.join(examples, 'Split-train', '*')],
      eval_files=[os.path.join(examples, 'Split-eval', '*')],
      train_steps=200,
      eval_steps=0,
      serving_model_dir=os.path.join(out, 'serving'),
      model_run_dir=os.path.join(out, 'run'),
      custom_config=dict(
        data_kind='image', batch_size=BATCH, label_key='label', learning_rate=3e-3, **custom_config
      ),
    )
  )
  with open(os.path.join(out, 'run', 'training.json')) as f:
    return json.load(f)


@pytest.mark.slow  # trainer and worker processes, training
def test_the_trainer_through_the_service_learns_as_well_as_here(
  service, examples, tmp_path, caplog
):
  here = _run_trainer(examples, str(tmp_path / 'here'))
  with caplog.at_level(logging.INFO):
    remote = _run_trainer(examples, str(tmp_path / 'remote'), input_service=service.address)
  accuracy = [
    sum(run['history']['val_sparse_categorical_accuracy'][-3:]) / 3  # last 3 epochs
    for run in (here, remote)
  ]
  assert min(accuracy) > 0.6 and abs(accuracy[0] - accuracy[1]) < 0.15, accuracy
  assert f'input from tf.data service {service.address} alone' in caplog.text
  assert remote['input_check']['input_service'] == service.address
  assert here['input_check']['input_service'] == ''
  assert here['input_cache']['used'] and not remote['input_cache']['used']  # auto, both
  assert remote['input_cache']['why_not'] == 'the tf.data service decodes'
  assert f'tf.data service {service.address}: 2 worker(s)' in caplog.text


TRAINER = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from tfx.components.trainer.fn_args_utils import FnArgs
from trainer import task
root, out, service = sys.argv[1:4]
task.run_fn(FnArgs(
    train_files=[root + '/Split-train/*'], eval_files=[root + '/Split-eval/*'], train_steps=6,
    eval_steps=2, serving_model_dir=out + '/serving', model_run_dir=out + '/model_run',
    custom_config={'data_kind': 'image', 'batch_size': 8, 'label_key': 'label',
                   'input_service': service}))
"""


@pytest.mark.slow  # trainer and worker processes, training
def test_two_trainers_train_together_from_one_shared_job(service, examples, tmp_path):
  """MultiWorkerMirroredStrategy, two real trainer processes: no file sharding, one job."""
  out = str(tmp_path / 'out')
  cluster = {'worker': [f'localhost:{_free_port()}' for _ in range(2)]}
  trainers = [
    subprocess.Popen(
      [sys.executable, '-c', TRAINER, examples, out, service.address],
      cwd=ROOT,
      stderr=subprocess.PIPE,
      text=True,
      env=dict(
        os.environ,
        PYTHONPATH=ROOT,
        TF_CPP_MIN_LOG_LEVEL='3',
        TF_CONFIG=json.dumps({'cluster': cluster, 'task': {'type': 'worker', 'index': i}}),
      ),
    )
    for i in range(2)
  ]
  try:
    logs = [trainer.communicate(timeout=240)[1] for trainer in trainers]
  finally:
    _stop(trainers)
  for trainer, log in zip(trainers, logs):
    assert trainer.returncode == 0, log[-3000:]
    assert f'training input on tf.data service {service.address}: 2 worker(s)' in log
    assert 'training shards:' not in log  # no worker reads every n-th shard
  epochs = [re.findall(r'epoch (\d+/\d+) \(worker \d of 2\): (.*)', log) for log in logs]
  assert len(epochs[0]) == 6 and epochs[0] == epochs[1]  # one model, trained together
  assert os.path.isfile(os.path.join(out, 'serving', 'saved_model.pb'))


@pytest.mark.slow  # trainer and worker processes, training
def test_a_worker_killed_mid_epoch_leaves_training_to_the_other(examples, tmp_path):
  """distributed_epoch: the dead worker's files of this pass are lost, training goes on."""
  own = Service(str(tmp_path))
  try:
    spec = data_spec.image_spec(examples, TrainerOptions())
    train = image_input.image_dataset(
      os.path.join(examples, 'Split-train', '*'), spec, BATCH, training=True
    )
    train = input_service.distribute(train, own.address, 'killed')
    built = built_models.built_in('cnn', spec)
    kill = keras.callbacks.LambdaCallback(
      on_train_batch_end=lambda batch, logs: own.workers[0].kill() if batch == 5 else None
    )
    steps, done = 120, []  # 120 batches of 16: 6 passes over the 320 records
    fit = threading.Thread(
      target=lambda: done.append(
        built.fit(train, epochs=1, steps_per_epoch=steps, verbose=0, callbacks=[kill])
      )
    )
    fit.start()
    fit.join(timeout=120)
    assert done, 'training stopped or hung after the worker was killed'
    assert len(done[0].history['loss']) == 1
    assert own.workers[0].wait(timeout=10) == -signal.SIGKILL
    assert own.workers[1].poll() is None  # the other one served the rest
    for process in (own.workers[1], own.dispatcher):  # SIGTERM: a clean stop
      process.send_signal(signal.SIGTERM)
      assert process.wait(timeout=20) == 0
  finally:
    own.stop()


def _closed_port() -> str:
  return f'grpc://127.0.0.1:{_free_port()}'


def test_a_worker_without_its_dispatcher_is_one_line_and_exit_2_in_seconds():
  started = time.monotonic()
  shown = subprocess.run(
    [
      sys.executable,
      '-m',
      'trainer.input_service',
      'worker',
      '--dispatcher',
      _closed_port(),
      '--port',
      str(_free_port()),
    ],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=20,
  )
  assert shown.returncode == 2
  assert shown.stderr.count('\n') == 1 and shown.stderr.startswith('error: ')
  assert 'unreachable: nothing listens there' in shown.stderr
  assert time.monotonic() - started < 20  # the guard above; no import of TensorFlow needed


@pytest.mark.parametrize(
  'args,message',
  [
    (['worker', '--dispatcher', 'localhost:5050'], "'localhost:5050' is not grpc://HOST:PORT"),
    (['worker', '--dispatcher', 'grpc://h:5050', '--port', '70000'], 'not a port number'),
    (['dispatcher', '--port', 'x'], 'not a port number'),
    (['worker'], 'the following arguments are required: --dispatcher'),
  ],
)
def test_bad_command_lines_are_one_line_and_exit_2(capsys, args, message):
  assert input_service.main(args) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith('error: ') and message in err
  assert input_service.main(['worker', '--help']) == 0
  assert '--worker-address' in capsys.readouterr().out


def test_a_taken_port_is_one_line_and_exit_2(capsys):
  with socket.socket() as taken:  # gRPC would share it (SO_REUSEPORT) instead of failing
    taken.bind(('', 0))
    port = str(taken.getsockname()[1])
    assert input_service.main(['dispatcher', '--port', port]) == 2
    assert input_service.main(['worker', '--dispatcher', 'grpc://127.0.0.1:1', '--port', port]) == 2
  err = capsys.readouterr().err
  assert err.splitlines() == [f'error: port {port}: Address already in use'] * 2


def test_the_library_check_fails_fast_even_when_something_else_holds_the_port(tmp_path):
  with pytest.raises(input_service.Unreachable, match='unreachable: nothing listens there'):
    input_service.check(_closed_port())
  with socket.socket() as silent:  # accepts connections, never speaks gRPC
    silent.bind(('127.0.0.1', 0))
    silent.listen()
    started = time.monotonic()
    with pytest.raises(input_service.Unreachable, match='no answer within 3 s'):
      input_service.check(f'grpc://127.0.0.1:{silent.getsockname()[1]}')
    assert time.monotonic() - started < 20
  with pytest.raises(input_service.Unreachable, match='unreachable'):  # the Trainer, before reading
    _run_trainer(str(tmp_path / 'missing'), str(tmp_path / 'out'), input_service=_closed_port())


def _compile_args(out) -> list:
  """`compile` for Kubeflow with the fewest flags, to `out`."""
  return ['compile', '--pipeline-root', 'gs://b/r', '--data', 'gs://b/d', '--out', str(out)]


@pytest.mark.parametrize('command', ['run', 'compile'])
def test_pipeline_flag_bad_value_is_one_line_and_exit_2(tmp_path, capsys, command):
  args = (
    ['run', '--output', str(tmp_path / 'out')]
    if command == 'run'
    else _compile_args(tmp_path / 'p.json')
  )
  assert cli_main.main(args + ['--input-service', 'dispatcher:5050']) == 2
  err = capsys.readouterr().err
  assert (
    err.count('\n') == 1 and "--input-service: 'dispatcher:5050' is not grpc://HOST:PORT" in err
  )
  if command == 'run':  # a local run also needs the dispatcher to answer, before anything runs
    assert cli_main.main(args + ['--input-service', _closed_port()]) == 2
    assert 'unreachable: nothing listens there' in capsys.readouterr().err
    assert not (tmp_path / 'out').exists()


def test_the_flag_reaches_the_trainer_and_the_compiled_spec(tmp_path):
  def trainer_config(**extra):
    built = pipeline.create_pipeline(
      cfg.PipelineConfig(str(tmp_path), cfg.IMAGES, str(tmp_path), trainer=TrainerOptions(**extra))
    )
    (trainer,) = [c for c in built.components if c.id == 'Trainer']
    return json.loads(trainer.exec_properties['custom_config'])

  assert (
    trainer_config(input_service='grpc://dispatcher:5050')['input_service']
    == 'grpc://dispatcher:5050'
  )
  assert trainer_config()['input_service'] == ''  # off: the Trainer reads here
  output = tmp_path / 'p.json'
  assert cli_main.main(_compile_args(output) + ['--input-service', 'grpc://dispatcher:5050']) == 0
  assert 'grpc://dispatcher:5050' in output.read_text()
