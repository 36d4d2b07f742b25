"""bench/engine_runs.py without a cluster: why a run failed, from its summary or its log."""

import json

from bench import engine_runs


def test_a_failed_runs_error_is_its_summarys_last_line(tmp_path):
  (tmp_path / 'last_run.json').write_text(json.dumps({'error': 'Traceback …\nValueError: bad'}))
  log = tmp_path / 'bench.log'
  log.write_text('RuntimeError: not this one\n')
  assert engine_runs.error_line(str(tmp_path), str(log)) == 'ValueError: bad'


def test_without_a_summary_the_logs_last_error_line(tmp_path):
  log = tmp_path / 'bench.log'
  log.write_text('starting\nERROR: the job failed\nException in thread x\nshutting down\n\n')
  assert engine_runs.error_line(str(tmp_path), str(log)) == 'Exception in thread x'
  log.write_text('one\nlast\n')
  assert engine_runs.error_line(str(tmp_path), str(log)) == 'last'
  log.write_text('')
  assert engine_runs.error_line(str(tmp_path), str(log)) == '(no output)'
