"""What a user sees from `pipeline.py run`: the project's own lines, library noise in the log."""

import json
import os
import re
import subprocess
import sys

import pytest
import tensorflow as tf

import config as cfg
from contracts import evaluation
from metadata import artifact_reader
from metadata.run_result import RunResult
from reporting import report, summary_text
from tests.conftest import ROOT, library_noise
from tests.support import runs

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)


def test_a_default_run_prints_only_the_projects_lines(default_run):
  done, output = default_run
  assert done.returncode == 0, done.stderr[-2000:]
  lines = (done.stdout + done.stderr).splitlines()
  noise = library_noise(done.stdout + done.stderr)  # Beam's worker processes: the S3 run's test
  assert not noise, noise[:5]
  assert done.stderr == ''
  assert lines[0].startswith('pipeline tfrecord-pipeline: images from ')
  # Output to a pipe: progress inside components as plain lines; the Trainer's steps rise to the
  # total, ImageExampleGen ends with every file read, the Evaluator with every eval example.
  inside = [line for line in lines if re.match(r' {6}\w+: ', line)]
  shown = [line for line in inside if line.startswith('      Trainer: train step ')]
  steps = [tuple(map(int, re.search(r'step (\d+)/(\d+)', line).groups())) for line in shown]
  assert len(steps) >= 2 and steps == sorted(steps) and steps[-1][0] == steps[-1][1] == 600
  assert all(re.search(r', loss [\d.]+, [\d,]+ examples/s, \d+ s left$', line) for line in shown)
  assert re.match(
    r'      ImageExampleGen: 1,797 of 1,797 image files read, [\d,]+ files/s$',
    [line for line in inside if 'ImageExampleGen' in line][-1],
  )
  evaluated = [line for line in inside if line.startswith('      Evaluator: ')]
  assert re.match(
    r'      Evaluator: ([\d,]+) of \1 eval examples evaluated, [\d,]+/s$', evaluated[-1]
  )
  lines = [line for line in lines if line not in inside]
  assert all(
    re.match(r'\[\d+/10\] \w+ (running…|done in [\d.]+ s \((executed|cached)\))$', line)
    for line in lines[1:21]
  )
  assert lines[21] == '── summary ──' and lines[-2].startswith('report:')
  assert lines[-1] == f'runs page:  {os.path.join(output, "runs.html")}'
  (log,) = re.findall(r'log: (\S+)', lines[0])
  with open(log) as f:
    assert 'Warning' in f.read()  # the library noise went to the run log instead


def test_a_run_leaves_nothing_in_the_system_temp_folder(default_run):
  done, output = default_run
  assert done.returncode == 0, done.stderr[-2000:]
  assert os.listdir(output + '-tmp') == []  # TensorFlow's autograph modules included


def test_the_summary_says_whether_the_input_was_cached(default_run):
  """The embedded digits fit the memory budget by far: the Trainer caches them, and says so."""
  done, output = default_run
  (line,) = [line for line in done.stdout.splitlines() if line.startswith('input check: ')]
  assert line.startswith('input check: not input-bound: the input alone delivers '), line
  assert re.search(r'training waited for input \d+\.\d% of the time', line), line
  assert re.search(
    r'; input held in memory, decoded once \([\d.,]+ MB decoded; '
    r'--input-cache auto\)$',
    line,
  ), line


def test_the_default_runs_report_is_not_input_bound_and_shows_the_summarys_wall_time(default_run):
  """The digits are held decoded in memory, far faster than a step: whatever the stall of a
  paced consumer, the report does not call training input-bound nor advise raw pixels."""
  done, output = default_run
  with open(os.path.join(output, 'last_run.json')) as f:
    result = RunResult.from_json(json.load(f))
  with open(os.path.join(output, report.REPORT_FILE)) as f:
    page = f.read()
  assert 'Not input-bound: the input alone delivers' in page
  assert 'Training was input-bound' not in page and '--encoding raw' not in page
  wall = summary_text.render_wall(result)
  assert f'<td>{wall}</td>' in page and f'wall time:  {wall}' in done.stdout


def test_shards_are_uncompressed_and_readable_by_plain_tf_data(default_run):
  done, output = default_run
  with open(os.path.join(output, 'last_run.json')) as f:
    result = json.load(f)
  for split, count in result['examples_per_split'].items():
    shards = tf.io.gfile.glob(os.path.join(result['examples_uri'], f'Split-{split}', '*'))
    assert [os.path.basename(s) for s in shards] == ['data-00000-of-00001']
    assert sum(1 for _ in tf.data.TFRecordDataset(shards)) == count


# `pipeline.py run` in a process that then lists the heavy modules it imported.
_RUN_AND_LIST = """
import sys
sys.argv = ['pipeline.py', 'run', '--output', sys.argv[1]]
from cli import main
code = main.main()
heavy = ('tensorflow', 'keras', 'tfx', 'apache_beam', 'tensorflow_model_analysis',
         'tensorflow_data_validation', 'matplotlib')  # ml_metadata (0.1 s): the summary's
print(sorted(name for name in heavy if name in sys.modules))
sys.exit(code)
"""


def test_a_run_with_nothing_changed_imports_no_tensorflow_and_shows_that_run(default_run):
  """The same command again: nothing changed since the run that pushed, so nothing runs, and
  neither TFX nor TensorFlow is imported to find that out (cli/unchanged.py)."""
  done, output = default_run
  assert done.returncode == 0, done.stderr[-2000:]
  again = subprocess.run(
    [sys.executable, '-c', _RUN_AND_LIST, output],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=120,
  )
  assert again.returncode == 0, again.stderr[-2000:]
  *printed, imported = again.stdout.splitlines()
  assert imported == '[]'
  with open(os.path.join(output, 'last_run.json')) as f:
    run_id = json.load(f)['run_id']
  said = (
    f'components: none run: the data, code, options and serving model are those of run {run_id},'
  )
  assert any(line.startswith(said) for line in printed), printed
  (wall,) = [line for line in printed if line.startswith('wall time:  ')]
  assert re.match(
    r'wall time:  [\d.]+ s \(that run: [\d.]+ s \([\d.]+ s before the first component', wall
  )


def test_sigterm_stops_a_run_as_ctrl_c_does_with_exit_143(capsys):
  """In-process: the handler's KeyboardInterrupt, the signal noted, the same summary and line;
  the whole path in a real run: tests/e2e/test_interrupted_runs.py."""
  import signal
  import time

  from cli import run
  from contracts.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, INTERRUPTED
  from utils import interrupt

  interrupt.forget()
  before = signal.getsignal(signal.SIGTERM)
  with pytest.raises(KeyboardInterrupt), run._interrupt_requests():
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(10)  # the handler raises at once
  assert signal.getsignal(signal.SIGTERM) == before  # restored
  assert interrupt.received() == 'SIGTERM' and not interrupt.REQUESTED.is_set()
  result = run._not_started(0.5)
  assert result.stop_signal == 'SIGTERM' and result.to_json()['interrupted'] is True
  assert run.finish(result) == EXIT_TERMINATED
  out, err = capsys.readouterr()
  assert 'nothing ran: interrupted (SIGTERM) before the first component started' in out
  assert err == f'{INTERRUPTED}: the same command goes on from the last finished component\n'
  interrupt.forget()
  assert run.finish(run._not_started(0.5)) == EXIT_INTERRUPTED  # no signal noted: Ctrl-C
  assert 'interrupted (Ctrl-C) before' in capsys.readouterr().out


def test_the_default_run_is_blessed_on_an_eval_split_above_the_minimum_sizes(default_run):
  """The embedded digits with every default: the eval split's minimum sizes (issue 59) hold,
  overall and for each class, and the model is blessed."""
  done, output = default_run
  with open(os.path.join(output, 'last_run.json')) as f:
    result = json.load(f)
  assert done.returncode == 0 and result['blessed'], result.get('blessing')
  evaluated = artifact_reader.output(runs.latest_run(output, cfg.PIPELINE_NAME), 'evaluation')
  per_class = [sum(row.values()) for row in evaluation.confusion_rows(evaluated.uri).values()]
  defaults = cfg.PipelineConfig(data='', data_kind='', output='')
  assert evaluation.example_count(evaluated.uri) == result['examples_per_split']['eval']
  assert result['examples_per_split']['eval'] >= defaults.min_eval_examples
  assert len(per_class) == 10 and min(per_class) >= defaults.min_eval_class_examples
