"""What `pipeline.py run` prints before its first component runs (no component runs here)."""

import importlib
import types

import pytest

from cli import main as cli_main


def _csv(tmp_path):
  data = tmp_path / 'rows.csv'
  data.write_text('x,label\n1,0\n2,1\n')
  return data


class _RunsNothing:
  """A LocalDagRunner that runs no component."""

  def run(self, dag):
    pass


def test_the_first_line_names_the_csv_file_given(tmp_path, monkeypatch, capsys):
  from tfx import v1 as tfx

  import pipeline
  from reporting import report

  monkeypatch.setattr(
    pipeline, 'create_pipeline', lambda *a, **k: types.SimpleNamespace(components=[])
  )
  monkeypatch.setattr(tfx.orchestration, 'LocalDagRunner', _RunsNothing)
  monkeypatch.setattr(report, 'write', lambda *args: None)
  data = _csv(tmp_path)
  cli_main.main(['run', '--data', str(data), '--output', str(tmp_path / 'out')])
  first = capsys.readouterr().out.splitlines()[0]
  assert first.startswith(f'pipeline tfrecord-pipeline: csv from {data}; log: '), first


@pytest.mark.parametrize(
  'module,function',
  [
    ('cli.inputs.data_layout', 'resolve_data'),  # while --data is checked
    ('pipeline', 'create_pipeline'),  # TensorFlow and TFX imported, the DAG being built
  ],
)
def test_ctrl_c_before_the_first_component_prints_a_summary(
  tmp_path, monkeypatch, capsys, module, function
):
  def interrupted(*args, **kwargs):
    raise KeyboardInterrupt

  monkeypatch.setattr(importlib.import_module(module), function, interrupted)
  code = cli_main.main(['run', '--data', str(_csv(tmp_path)), '--output', str(tmp_path / 'out')])
  out, err = capsys.readouterr()
  assert code == 130
  assert out.splitlines()[:2] == [
    '── summary ──',
    'nothing ran: interrupted (Ctrl-C) before the first component started',
  ]
  assert out.splitlines()[-1].startswith('wall time: ')
  assert err == 'interrupted: the same command goes on from the last finished component\n'
