"""The engine clusters' shared command line, with actions made here (no cluster), and each
cluster module's own commands and flags."""

import subprocess
import sys

import pytest

from engines import cli, common, flink, flink_containers, spark


def _main(argv, calls, **more):
  return cli.main(
    'python -m engines.fake',
    'A fake cluster.',
    up=lambda args: calls.append(('up', args.size)),
    down=lambda: calls.append('down') or more.pop('left', []),
    status=lambda: 'fake: not running',
    argv=argv,
    more=more.get('more'),
    arguments=lambda parser: parser.add_argument('--size', type=int, default=1),
  )


def test_up_down_and_status_run_the_clusters_actions(capsys):
  calls = []
  assert _main(['up', '--size', '3'], calls) == 0
  assert _main(['down'], calls) == 0
  assert _main(['status'], calls) == 0
  assert calls == [('up', 3), 'down']
  assert capsys.readouterr().out == 'fake: not running\n'


def test_down_that_leaves_processes_exits_1():
  assert _main(['down'], [], left=[4242]) == 1


def test_an_engine_error_is_one_line_and_exit_2(capsys):
  def fail(args):
    raise common.EngineError('localhost:8081 is already in use')

  assert cli.main('p', 'd', up=fail, down=list, status=str, argv=['up']) == 2
  assert capsys.readouterr().err == 'error: localhost:8081 is already in use\n'


def test_a_usage_error_is_argparses_and_exit_2(capsys):
  def put(args):
    raise cli.UsageError('put needs a PATH')

  with pytest.raises(SystemExit) as exit:
    _main(['put'], [], more={'put': put})
  assert exit.value.code == 2
  assert (
    capsys.readouterr().err.splitlines()[-1] == 'python -m engines.fake: error: put needs a PATH'
  )


def test_more_commands_are_choices_after_the_shared_ones(capsys):
  calls = []
  assert _main(['env'], calls, more={'env': lambda args: calls.append('env')}) == 0
  assert calls == ['env']
  with pytest.raises(SystemExit):
    _main(['bogus'], [], more={'env': print})
  assert "(choose from 'up', 'down', 'status', 'env')" in capsys.readouterr().err


@pytest.mark.parametrize(
  'module, usage',
  [
    (flink, '[--task-managers TASK_MANAGERS]'),
    (spark, '{up,down,status}'),
    (flink_containers, '{up,down,status,put,env} [path]'),
  ],
)
def test_each_cluster_module_has_its_commands(module, usage):
  done = subprocess.run(
    [sys.executable, '-m', module.__name__, '--help'], capture_output=True, text=True, check=False
  )
  assert done.returncode == 0 and usage in done.stdout
