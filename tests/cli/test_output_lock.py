"""One run per output (cli/output_lock.py), with real processes: the lock holder is a separate
Python process, the second run is `pipeline.py run` itself (it refuses before importing TensorFlow).
"""

import os
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOLD = (
  'import sys; from cli import output_lock; '
  'output_lock.hold(sys.argv[1], "--output " + sys.argv[1], wait=sys.argv[2] == "wait"); '
  'print("held", flush=True); sys.stdin.read()'
)


def _holder(folder, wait=False):
  """A process that takes the lock, says 'held' and keeps it until its stdin closes."""
  return subprocess.Popen(
    [sys.executable, '-c', HOLD, folder, 'wait' if wait else 'now'],
    cwd=ROOT,
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
    text=True,
  )


def test_a_second_run_on_the_same_output_refuses_naming_the_holder(tmp_path):
  holder = _holder(str(tmp_path))
  try:
    assert holder.stdout.readline() == 'held\n'
    second = subprocess.run(
      [sys.executable, 'pipeline.py', 'run', '--output', str(tmp_path)],
      cwd=ROOT,
      capture_output=True,
      text=True,
      timeout=60,
    )
    assert second.returncode == 2, second.stderr
    assert second.stderr == (
      f'error: --output {tmp_path}: another run (PID {holder.pid}) is using it; '
      'wait for it to end or add --wait\n'
    )
    assert not os.path.exists(tmp_path / 'default_data')  # refused before writing anything
  finally:
    holder.kill()
    holder.wait()


def test_the_lock_dies_with_its_process_and_wait_takes_it_then(tmp_path):
  first = _holder(str(tmp_path))
  assert first.stdout.readline() == 'held\n'
  waiting = _holder(str(tmp_path), wait=True)
  try:
    assert waiting.stderr.readline() == (
      f'waiting for the other run on --output {tmp_path} (PID {first.pid}) to end\n'
    )
    os.kill(first.pid, signal.SIGKILL)  # no clean-up code runs: the OS releases the lock
    first.wait()
    assert waiting.stdout.readline() == 'held\n'
    assert (tmp_path / 'run.lock').read_text() == f'{waiting.pid}\n'
  finally:
    for process in (first, waiting):
      process.kill()
      process.wait()
