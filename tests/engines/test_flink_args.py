"""FlinkRunner's arguments against a fake Flink REST API on loopback (no cluster: the real one is
in test_flink.py), and the command line's one-line refusals."""

import pytest

from cli import main as cli_main
from engines import common, flink, flink_args
from tests.support import json_server
from utils import progress

ANSWERS = {
  '/overview': {'taskmanagers': 2, 'slots-total': 4},
  '/jobmanager/config': [{'key': 'parallelism.default', 'value': '3'}],
}


@pytest.fixture(scope='module')
def fake_rest():
  with json_server.serving(ANSWERS) as master:
    yield master


def test_other_cluster_gets_its_own_job_server_and_loopback(fake_rest, tmp_path, monkeypatch):
  monkeypatch.setattr(common, 'ENGINES_DIR', str(tmp_path))
  lib = tmp_path / 'flink' / 'job-server' / 'lib'
  lib.mkdir(parents=True)
  (tmp_path / 'flink' / 'job-server' / 'flink-job-server.jar').write_bytes(b'')
  args = flink_args.flink_args(f'http://{fake_rest}/')
  assert args[:3] == ['--runner=FlinkRunner', f'--flink_master={fake_rest}', '--parallelism=3']
  assert '--environment_type=LOOPBACK' in args
  assert any(a.startswith('--flink_job_server_jar=') for a in args)
  assert '--experiments=pre_optimize=all' in args
  assert flink_args.flink_args(fake_rest, parallelism=2)[2] == '--parallelism=2'


def test_local_cluster_gets_its_job_server_and_worker_pool(fake_rest, tmp_path, monkeypatch):
  monkeypatch.setattr(common, 'ENGINES_DIR', str(tmp_path))
  common.write_state(
    flink.NAME,
    dict(
      rest=fake_rest,
      job_endpoint='localhost:8099',
      worker_pool='localhost:27000',
      job_server_pid=common.os.getpid(),
    ),
  )
  args = flink_args.flink_args(fake_rest)
  assert '--job_endpoint=localhost:8099' in args
  assert (
    args[args.index('--environment_type=EXTERNAL') + 1] == '--environment_config=localhost:27000'
  )


def test_job_server_not_installed_is_one_error(fake_rest, tmp_path, monkeypatch):
  monkeypatch.setattr(common, 'ENGINES_DIR', str(tmp_path))
  with pytest.raises(common.EngineError, match='make flink-up'):
    flink_args.flink_args(fake_rest)


@pytest.mark.parametrize(
  'flags, error',
  [
    (
      ['--beam-runner', 'FlinkRunner', '--flink-master', '127.0.0.1:9'],
      'error: --flink-master 127.0.0.1:9: no Flink cluster answers there',
    ),
    (['--beam-runner', 'FlinkRunner'], 'error: --beam-runner FlinkRunner needs --flink-master'),
    (['--flink-master', 'localhost:8081'], 'error: --flink-master goes with --beam-runner Flink'),
  ],
)
def test_refused_in_one_line(flags, error, tmp_path, capsys):
  output = tmp_path / 'out'
  assert cli_main.main(['run', '--output', str(output), *flags]) == 2
  err = capsys.readouterr().err
  assert err.startswith(error) and err.count('\n') == 1
  assert not output.exists()  # nothing half-made


def test_live_count_from_the_runner():
  counts = iter([None, 40, 90])
  watch = progress.CountsProgress(
    'StatisticsGen',
    100,
    lambda d, t, r: f'{d} of {t}',
    exact=True,
    reported=lambda: next(counts),
    runner='FlinkRunner',
  )
  assert [watch.done(), watch.done(), watch.done()] == [0, 40, 90]


def test_runner_without_live_counts_says_so_once(caplog):
  with caplog.at_level('INFO', logger=progress.LOGGER):
    watch = progress.CountsProgress(
      'Evaluator', 10, lambda d, t, r: f'{d} of {t}', exact=True, runner='SparkRunner'
    )
  assert [r.getMessage() for r in caplog.records] == [
    'Evaluator: SparkRunner reports no counts while it runs: no live progress for this step'
  ]
  assert watch.done() == 0 and watch._final() == 10  # the total, not a wrong "0 of 10"
