"""`pipeline.py run`: the whole pipeline locally with LocalDagRunner and SQLite ML Metadata."""

import argparse
import contextlib
import errno
import json
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from typing import Optional

from cli import flag_groups, prepare_run, unchanged, watch
from cli.inputs import tfrecord_salvage
import config as cfg
from contracts import artifacts, labels
from contracts.errors import (
  EXIT_BAD_INPUT,
  EXIT_FAILED,
  EXIT_INTERRUPTED,
  EXIT_NOT_BLESSED,
  EXIT_NOT_SERVABLE,
  EXIT_OK,
  EXIT_TERMINATED,
  INTERRUPTED,
  UnusableData,
)
from metadata.run_result import RunResult
from utils import interrupt

HELP = 'run the whole pipeline locally (LocalDagRunner)'
DESCRIPTION = (
  'Run the whole pipeline locally with LocalDagRunner and SQLite ML Metadata in '
  '<output>/metadata.sqlite. Exit codes: 0 done, 1 data anomalies or a failed '
  'component, 2 bad input (also found by a component: fewer than two classes, labels missing), 3 trained but not blessed, 4 blessed but failed the serving check '
  '(3 and 4: nothing pushed), 130 interrupted (Ctrl-C; the same command goes on from there). '
  'One run per --output at a time: a second one refuses (exit 2) unless given --wait.'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
  flag_groups.add(
    parser,
    *flag_groups.DATA,
    *flag_groups.INFER,
    *flag_groups.OUTPUT,
    '--keep-reports',
    *flag_groups.BEAM,
    *flag_groups.TRAINING,
  )
  parser.add_argument(
    '--watch',
    action='store_true',
    help='stay up: run again on every save of the data, the model file, the schema or the '
    "project's code, with TensorFlow and TFX already loaded (Ctrl-C ends; cli/watch.py)",
  )


def process_seconds() -> float:
  """Seconds since this process started (Linux: /proc/self/stat), else since this module loaded:
  the summary's wall time is the whole command's, imports included; under --watch, since this
  run started (_WATCHED_RUN_STARTED)."""
  try:
    with open('/proc/self/stat') as f:
      started = int(f.read().rsplit(')', 1)[1].split()[19]) / os.sysconf('SC_CLK_TCK')
    with open('/proc/uptime') as f:
      seconds = float(f.read().split()[0]) - started
  except (OSError, ValueError, IndexError):
    seconds = time.monotonic() - _LOADED
  return seconds - _WATCHED_RUN_STARTED[0]


_LOADED = time.monotonic()
_WATCHED_RUN_STARTED = [0.0]  # process_seconds() when the current --watch run started


def _watched_run(args: argparse.Namespace) -> int:
  """One run of --watch, its seconds counted from its own start."""
  _WATCHED_RUN_STARTED[0] = 0.0
  _WATCHED_RUN_STARTED[0] = process_seconds()
  return _main(args)


def run_local(config: cfg.PipelineConfig, schema_only: bool = False) -> RunResult:
  """Runs the pipeline with LocalDagRunner; returns its result (with an error on failure)."""
  interrupt.forget()
  # Beam workers and the Trainer import user code (trainer.task) by module path.
  os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, [cfg.HERE, os.environ.get('PYTHONPATH')]))
  os.makedirs(os.path.join(config.local_dir, 'logs'), exist_ok=True)
  log_path = os.path.join(config.local_dir, 'logs', time.strftime('run-%Y%m%d-%H%M%S.log'))
  from cli import progress

  with progress.stderr_to(log_path), _temporary_folder():
    result = _run(config, schema_only, log_path)
  result.log = log_path
  if result.process_seconds is None:  # not started: no report took the figure
    result.process_seconds = round(process_seconds(), 1)
  try:
    result.write(os.path.join(config.local_dir, unchanged.SUMMARY_FILE))
  except OSError as e:  # a full disk: the summary is still printed
    logging.warning('last_run.json not written: %s', e)
  return result


@contextlib.contextmanager
def _interrupt_requests():
  """While a run goes, Ctrl-C and SIGTERM raise KeyboardInterrupt, and set
  utils.interrupt.REQUESTED, noting which signal it was (see there)."""

  def requested(signum, frame):
    interrupt.note(signum)
    raise KeyboardInterrupt

  previous = {number: signal.signal(number, requested) for number in interrupt.SIGNALS}
  try:
    yield
  finally:
    for number, handler in previous.items():
      signal.signal(number, handler)
    interrupt.REQUESTED.clear()


@contextlib.contextmanager
def _temporary_folder():
  """The run's temporary files in a folder of their own, removed when the run ends: TensorFlow
  leaves its autograph modules (~25 a run) behind when a process ends without the interpreter's
  clean-up. Beam's worker processes and the serving check's probe inherit it through TMPDIR."""
  folder = tempfile.mkdtemp(prefix='tfrecord-pipeline-run-')
  saved = os.environ.get('TMPDIR'), tempfile.tempdir
  os.environ['TMPDIR'] = tempfile.tempdir = folder
  try:
    yield
  finally:
    if saved[0] is None:
      del os.environ['TMPDIR']
    else:
      os.environ['TMPDIR'] = saved[0]
    tempfile.tempdir = saved[1]
    shutil.rmtree(folder, ignore_errors=True)


def _run(config: cfg.PipelineConfig, schema_only: bool, log_path: str) -> RunResult:
  started = time.monotonic()
  try:  # importing TensorFlow and TFX, building the DAG: a Ctrl-C here stops no component
    dag, components = _built(config, schema_only)
  except KeyboardInterrupt:
    return _not_started(time.monotonic() - started)
  from cli import progress
  from components.serving_check import probe_process
  import pipeline

  # The serving check's process imports TensorFlow while the Evaluator runs (probe_process.py).
  on_execute = {pipeline.EVALUATOR: probe_process.start}
  watched = progress.ComponentProgress(components, on_execute=on_execute)
  try:
    with progress.logs_routed(log_path, watched):
      return _run_dag(config, dag, schema_only, log_path)
  finally:
    probe_process.release()  # kept by --watch for its next run


def _built(config: cfg.PipelineConfig, schema_only: bool) -> tuple:
  """(the pipeline, its component ids in order) after an interrupted earlier run's clean-up."""
  from tfx.dsl.components.common import resolver

  from metadata import connection, recovery
  import pipeline

  for interrupted in recovery.cancel_interrupted(config.metadata_path, config.pipeline_root):
    print(
      f'an earlier run was interrupted in {interrupted}: marked CANCELED, its partial '
      'outputs removed',
      flush=True,
    )
  dag = pipeline.create_pipeline(
    config,
    connection.connection_config(config.metadata_path),
    schema_only=schema_only,
  )
  return dag, [c.id for c in dag.components if not isinstance(c, resolver.Resolver)]


def _not_started(seconds: float) -> RunResult:
  """The result of a run interrupted (Ctrl-C, SIGTERM) before its first component."""
  return RunResult(
    wall_seconds=round(seconds, 1),
    error=INTERRUPTED,
    interrupted=True,
    stop_signal=interrupt.received(),
    not_started=True,
  )


def _stopped_by(stop_signal: Optional[str]) -> str:
  """How the summary names what interrupted a run: Ctrl-C or SIGTERM."""
  return 'Ctrl-C' if stop_signal in (None, signal.SIGINT.name) else stop_signal


def _run_dag(config: cfg.PipelineConfig, dag, schema_only: bool, log_path: str) -> RunResult:
  """Runs `dag` with LocalDagRunner (logs routed): the run's result for the summary."""
  from tfx.orchestration.local.local_dag_runner import LocalDagRunner

  from contracts.anomalies import AnomaliesFound
  from data_revisions import revision as data_revision
  from metadata import report_facts, run_reader, summary
  from metadata import runs as history
  from reporting import report

  named = run_reader.data_named(config.data, config.data_pattern)
  revision = data_revision.of_run(config, named)
  given = (
    f'{config.data_source} at {config.data_rev} ({revision[data_revision.COMMIT][:12]})'
    if config.data_rev
    else named
  )
  print(f'pipeline {config.pipeline_name}: {config.data_kind} from {given}; log: {log_path}')
  if config.trainer.module_file:  # the module file's model says what it predicts (Evaluator)
    print(
      f'label:      {config.label}, the raw column the checks read; what the model predicts '
      'is read from it when it is evaluated'
    )
  elif config.data_kind in (cfg.CSV, cfg.TFRECORDS):  # a table: what the label trains as
    line = labels.task_line(
      config.label, config.trainer.task, config.trainer.label_threshold, config.task_reason
    )
    print(f'label:      {line}')
  if config.label_warning:  # cli/inputs/csv_input.shifted_label_columns
    print(f'leakage?    {config.label_warning}')
  if config.trainer.module_file:  # which contract trains (cli/inputs/module_file.py)
    from cli.inputs import module_file

    print(f'module:     {module_file.contract_line(config.trainer.module_file)}')
  sys.stdout.flush()
  started = time.monotonic()
  before_components = process_seconds()
  error = None
  try:
    with _interrupt_requests():
      LocalDagRunner().run(dag)
  except KeyboardInterrupt as e:  # Ctrl-C, SIGTERM: summary and report; the next run recovers
    logging.warning('pipeline run interrupted (%s)', _stopped_by(interrupt.received()))
    error = e
  except Exception as e:  # any component's failure: reported in the summary, logged in full
    logging.exception('pipeline run failed')
    error = e
  if os.path.exists(config.metadata_path):
    store = run_reader.open_store(config.metadata_path)
    runs = run_reader.pipeline_runs(store, config.pipeline_name)
    nodes = run_reader.run_nodes(store, runs[-1]) if runs else {}
  else:  # the run failed before ML Metadata was created
    store, runs, nodes = None, [], {}
  runs_known = bool(runs)
  result = summary.build(nodes, time.monotonic() - started)
  result.before_components_seconds = round(before_components, 1)
  if runs:
    result.run_id = runs[-1].name  # pipeline.py compare takes it
  if revision and result.examples_uri:
    data_revision.record(config.metadata_path, result.examples_uri, revision)
    result.data_revision = revision
  result.why_executed = run_reader.why_executed(store, config.pipeline_name, nodes) if store else {}
  damage = os.path.join(config.data, artifacts.DAMAGE_FILE)
  if os.path.basename(config.data) == tfrecord_salvage.SALVAGED_INPUT and os.path.exists(damage):
    with open(damage) as f:
      result.input_damage = dict(json.load(f), salvaged_to=config.data)
  result.log = log_path
  if isinstance(error, KeyboardInterrupt):
    result.error = INTERRUPTED
    result.interrupted = True
    result.stop_signal = interrupt.received()
  elif error is not None:
    result.error = str(error).splitlines()[0] if str(error) else type(error).__name__
    if _no_space_left(error):
      result.error = _no_space_message(config.pipeline_root, result.error)
    result.unusable_data = isinstance(error, UnusableData)
    result.anomalies_stop = isinstance(error, AnomaliesFound) or bool(result.anomalies)
  result.process_seconds = round(process_seconds(), 1)  # the summary's and the report's
  if result.pushed_to and runs:
    _keep_baseline(config, result.pushed_to)
  if not schema_only:
    try:
      facts = report_facts.gather(nodes, result, config.metadata_path, config.label)
      kept = history.report_file(result.run_id) if result.run_id else ''
      result.report = report.write(facts, config, kept)
    except Exception:  # the run's outcome stands without its report
      logging.exception('run report not written')
      result.report = ''
    result.report_seconds = round(process_seconds() - result.process_seconds, 1)
    result.runs_page = _runs_page(config) if runs_known else None
  return result


def _keep_baseline(config: cfg.PipelineConfig, pushed_to: str) -> None:
  """A model pushed again after a rollback: named the next run's baseline again
  (metadata/rollback_record.keep_baseline)."""
  from metadata import rollback_record

  try:
    rollback_record.keep_baseline(config.metadata_path, config.pipeline_name, pushed_to)
  except Exception:  # the push stands; the next run may compare with the rolled-back model
    logging.exception('the serving model not named the baseline again')


def _runs_page(config: cfg.PipelineConfig) -> str:
  """Rewrites <output>/runs.html with every run of the output (metadata/runs.py gathers,
  reporting/runs_page.py draws); its path, '' when it could not be written."""
  from metadata import runs
  from reporting import runs_page

  try:
    facts = runs.gather(
      config.metadata_path, config.pipeline_name, config.serving_dir, config.local_dir
    )
    return runs_page.write(facts)
  except Exception:  # the run's outcome stands without its runs page
    logging.exception('runs page not written')
    return ''


def _no_space_left(error: BaseException) -> bool:
  """Whether a full disk is behind `error` (an OSError or TensorFlow's own wording of it)."""
  while error is not None:
    if getattr(error, 'errno', None) == errno.ENOSPC or 'No space left on device' in str(error):
      return True
    error = error.__cause__ or error.__context__
  return False


def _no_space_message(folder: str, error: str) -> str:
  """One line: which folder's disk is full, how much is free now, and what was being written."""
  while not os.path.exists(folder):
    folder = os.path.dirname(folder)
  usage = shutil.disk_usage(folder)
  written = re.search(r'(/\S+?)[;:,]? No space left on device', error)
  return (
    f'no space left on the disk of {folder} ({usage.free / 2**20:.1f} MB free of '
    f'{usage.total / 2**20:.1f} MB)'
    + (f' while writing {written.group(1)}' if written else '')
    + '; free some space or give another --output'
  )


def finish(result: RunResult) -> int:
  """Prints the summary (and the error, if any); returns the exit code."""
  from reporting import summary_text

  lines = summary_text.render(result)
  if result.not_started:
    lines.insert(
      1,
      f'nothing ran: interrupted ({_stopped_by(result.stop_signal)}) before the first component '
      'started',
    )
  print('\n'.join(lines))
  if result.interrupted:
    print(
      f'{INTERRUPTED}: the same command goes on from the last finished component',
      file=sys.stderr,
    )
    return EXIT_TERMINATED if result.stop_signal == signal.SIGTERM.name else EXIT_INTERRUPTED
  if result.error is None:
    # Not blessed, or blessed but it does not serve: nothing pushed, the serving model stays.
    if result.blessed is False:
      return EXIT_NOT_BLESSED
    if (result.serving_check or {}).get('serves') is False:
      return EXIT_NOT_SERVABLE
    return EXIT_OK
  if result.unusable_data:  # a fact about the data, found by a component: bad input
    print(f'error: {result.error}', file=sys.stderr)
    return EXIT_BAD_INPUT
  if result.anomalies_stop:
    print(
      'stopped before training: the data does not match its schema (anomalies above)',
      file=sys.stderr,
    )
  else:
    print(f'error: {result.error} (full log: {result.log})', file=sys.stderr)
  return EXIT_FAILED


def main(args: argparse.Namespace) -> int:
  interrupt.forget()
  with _interrupt_requests():  # SIGTERM before the pipeline runs too: as Ctrl-C
    if getattr(args, 'watch', False):
      from components.serving_check import probe_process

      with probe_process.kept():  # one serving-check worker for every watched run
        return watch.watch(args, _watched_run, unchanged.code_digest, _restarted)
    return _main(args)


def _restarted() -> None:
  """--watch after a code edit: the serving check's worker ended, the process started anew."""
  from components.serving_check import probe_process

  probe_process.stop()
  watch.restart_process()


def _main(args: argparse.Namespace) -> int:
  interrupt.forget()
  started = time.monotonic()
  try:  # the data checked, the embedded digits written out, the last run's files compared
    config = prepare_run.prepare_run(args)
    previous = unchanged.previous_result(config)
  except KeyboardInterrupt:  # before any component too
    return finish(_not_started(time.monotonic() - started))
  if previous is not None:  # nothing to run: that run's summary, without importing TFX
    result = RunResult.from_json(previous)
    result.unchanged = {'seconds': round(process_seconds(), 1)}
    return finish(result)
  unchanged.forget(config)
  result = run_local(config)
  if result.error is None:
    unchanged.record(config)
  return finish(result)
