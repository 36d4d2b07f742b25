"""Runs interrupted mid-component (SIGKILL, Ctrl-C, SIGTERM), then started again with the same
command; a second run on the same output meanwhile refuses."""

import collections
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

from ml_metadata.proto import metadata_store_pb2
import pytest

from metadata import run_reader
from tests.conftest import ROOT, SMALL_EVAL, write_digits_subset

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)

LIVE = metadata_store_pb2.Artifact.LIVE


def _command(data, output, *extra):
  return [
    sys.executable,
    os.path.join(ROOT, 'pipeline.py'),
    'run',
    '--data',
    data,
    '--output',
    output,
    '--train-steps',
    '200',
    *SMALL_EVAL,  # ~60 eval images, a few of a class
    *extra,
  ]


def _start_and_wait_for(command, *started_patterns: str, **popen):
  """Starts `command` in its own process group; returns it once every pattern globs."""
  process = subprocess.Popen(command, cwd=ROOT, start_new_session=True, **popen)
  _wait_for(process, *started_patterns)
  return process


def _wait_for(process, *started_patterns: str, timeout: float = 240, besides=()) -> None:
  """Returns once every pattern globs a path not in `besides` (the run's process group is
  killed if it never does)."""
  deadline = time.monotonic() + timeout
  try:
    while not all(set(glob.glob(pattern)) - set(besides) for pattern in started_patterns):
      assert process.poll() is None, 'the run ended before it could be interrupted'
      assert time.monotonic() < deadline, 'the component never started'
      time.sleep(0.02)
  except BaseException:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    raise


def _run_killed_when(command, *started_patterns: str) -> None:
  """Runs `command` and SIGKILLs its process group as soon as every pattern globs."""
  process = _start_and_wait_for(
    command, *started_patterns, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
  )
  os.killpg(process.pid, signal.SIGKILL)
  process.wait()


def _live_counts(output):
  store = run_reader.open_store(os.path.join(output, 'metadata.sqlite'))
  types = {t.id: t.name for t in store.get_artifact_types()}
  return collections.Counter(types[a.type_id] for a in store.get_artifacts() if a.state == LIVE)


def _executions(output):
  store = run_reader.open_store(os.path.join(output, 'metadata.sqlite'))
  return [
    (run_reader.node_id(store, e), metadata_store_pb2.Execution.State.Name(e.last_known_state))
    for e in store.get_executions()
  ]


@pytest.fixture(scope='module')
def data(tmp_path_factory):
  return write_digits_subset(str(tmp_path_factory.mktemp('interrupted') / 'digits'), per_class=30)


@pytest.fixture(scope='module')
def uninterrupted(default_run):
  """What an uninterrupted run with the defaults leaves live (counts by artifact type, which the
  data set does not change)."""
  done, output = default_run
  assert done.returncode == 0, done.stderr[-2000:]
  return _live_counts(output)


def test_ctrl_c_in_training_then_the_same_command_reruns_only_what_is_left(
  data, uninterrupted, tmp_path
):
  output = str(tmp_path / 'out')
  # The Trainer runs in the main process whatever the Beam mode; in_memory saves Beam's worker
  # start-up (the ExampleGen test below kills a multi_processing run).
  command = _command(data, output, '--beam-mode', 'in_memory')
  pipeline_root = os.path.join(output, 'pipeline_root')
  first = _start_and_wait_for(
    command,
    os.path.join(pipeline_root, 'StatisticsGen', 'statistics', '*'),  # ExampleGen is done
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
    text=True,
  )
  try:
    # While it runs: a second run on the same output is refused; lineage reads ML Metadata
    # (readers take no lock). Both in the background, so that Ctrl-C lands in training.
    second, lineage = (
      subprocess.Popen(
        arguments, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
      )
      for arguments in (command, [sys.executable, 'pipeline.py', 'lineage', '--output', output])
    )
    # Training has started once Keras' TensorBoard callback has written its first event file.
    _wait_for(first, os.path.join(pipeline_root, 'Trainer', 'model_run', '*', 'train', 'events.*'))
    os.killpg(first.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends
    stdout, stderr = first.communicate(timeout=120)
    refused, read = second.communicate(timeout=120), lineage.communicate(timeout=120)
  finally:
    if first.poll() is None:
      os.killpg(first.pid, signal.SIGKILL)
      first.wait()
  assert second.returncode == 2, refused[1][-2000:]
  assert refused[1].splitlines() == [
    f'error: --output {output}: another run (PID {first.pid}) is using it; '
    'wait for it to end or add --wait'
  ]
  assert lineage.returncode == 0 and 'examples #1' in read[0], read[1][-2000:]
  assert first.returncode == 130, stderr[-2000:]
  assert (
    stderr.splitlines()[-1]
    == 'interrupted: the same command goes on from the last finished component'
  )
  assert 'Traceback' not in stdout + stderr
  assert '── summary ──' in stdout
  with open(os.path.join(output, 'last_run.json')) as f:
    summary = json.load(f)
  assert summary['interrupted'] is True and summary['stop_signal'] == 'SIGINT'
  assert re.search(r'report: +\S+report\.html', stdout)
  assert ('Trainer', 'RUNNING') in _executions(output)
  assert _live_counts(output)['Model'] == 0  # the interrupted attempt published nothing
  interrupted_run = glob.glob(os.path.join(output, 'pipeline_root', 'Trainer', 'model_run', '*'))
  assert len(interrupted_run) == 1

  # The same command, stopped in training by SIGTERM (`kill`, a scheduler, a CI timeout) sent to
  # its process alone: as Ctrl-C, with its own exit code.
  training = os.path.join(pipeline_root, 'Trainer', 'model_run', '*', 'train', 'events.*')
  before = glob.glob(training)
  terminated = _start_and_wait_for(
    command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
  )
  _wait_for(terminated, training, besides=before)
  terminated.send_signal(signal.SIGTERM)
  stdout, stderr = terminated.communicate(timeout=120)
  assert terminated.returncode == 143, stderr[-2000:]
  assert 'an earlier run was interrupted in Trainer' in stdout
  assert stderr.splitlines()[-1] == (
    'interrupted: the same command goes on from the last finished component'
  )
  assert '── summary ──' in stdout and 'Traceback' not in stdout + stderr
  with open(os.path.join(output, 'last_run.json')) as f:
    summary = json.load(f)
  assert summary['interrupted'] is True and summary['stop_signal'] == 'SIGTERM'
  assert _live_counts(output)['Model'] == 0

  again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
  assert again.returncode == 0, again.stderr[-2000:]
  assert 'an earlier run was interrupted in Trainer' in again.stdout
  assert 'components: 4 executed, 6 cached of 10' in again.stdout  # Trainer to Pusher
  assert _live_counts(output) == uninterrupted
  states = _executions(output)
  assert ('Trainer', 'CANCELED') in states and ('Trainer', 'COMPLETE') in states
  assert not any(os.path.exists(folder) for folder in interrupted_run)  # partial outputs removed


def test_killed_example_gen_leaves_nothing_later_components_pick_up(data, uninterrupted, tmp_path):
  output = str(tmp_path / 'out')
  # Killed once its executor has started (scratch folder) and made its output folder, Beam's
  # worker processes with it.
  _run_killed_when(
    _command(data, output, '--beam-mode', 'multi_processing'),
    os.path.join(
      output, 'pipeline_root', 'ImageExampleGen', '.system', 'executor_execution', '*', '.temp'
    ),
    os.path.join(output, 'pipeline_root', 'ImageExampleGen', 'examples', '*'),
  )
  assert _executions(output) == [('ImageExampleGen', 'RUNNING')]
  assert _live_counts(output) == {}
  half_written = glob.glob(os.path.join(output, 'pipeline_root', 'ImageExampleGen', '*', '1'))
  half_written += glob.glob(
    os.path.join(output, 'pipeline_root', 'ImageExampleGen', '.system', 'executor_execution', '1')
  )
  assert len(half_written) == 2  # examples/1 and the executor's scratch folder

  # Started again with the default (300 images: Beam in one process): recovery does not depend
  # on the Beam mode.
  again = subprocess.run(_command(data, output), cwd=ROOT, capture_output=True, text=True)
  assert again.returncode == 0, again.stderr[-2000:]
  counts = re.search(r'examples: +train (\d+), eval (\d+)', again.stdout)
  assert int(counts.group(1)) + int(counts.group(2)) == 300
  assert _live_counts(output) == uninterrupted
  assert not any(os.path.exists(folder) for folder in half_written)
