"""An edit re-runs exactly the components whose code it touches, and the summary says why.

A copy of the project's files (its code, schema and lock) in a temporary folder is fingerprinted,
edited and run again, as an engineer does in the edit → run loop.
"""

import glob
import json
import os
import re
import shutil

import pytest

from cli import main as cli_main
from tests.conftest import ROOT, run_pipeline, write_digits_subset
from utils import fingerprint

COPIED = (
  'cli',
  'components',
  'contracts',
  'data_revisions',
  'metadata',
  'records',
  'reporting',
  'trainer',
  'utils',
  'kubeflow',
  'schema',
  'pipeline.py',
  'cache_keys.py',
  'example_gens.py',
  'config.py',
  'requirements.lock',
  'README.md',
)


def _append(path: str, line: str) -> None:
  with open(path, 'a') as f:
    f.write(line + '\n')


@pytest.mark.slow
def test_edits_rerun_what_runs_the_edited_code(tmp_path, capsys, monkeypatch):
  """In one process, as in a notebook: the fingerprints read the copy's files (ROOT), and each
  run reads them again (their mtime is in the cache key)."""
  project = tmp_path / 'project'
  for name in COPIED:
    source = os.path.join(ROOT, name)
    if os.path.isdir(source):
      shutil.copytree(source, project / name, ignore=shutil.ignore_patterns('__pycache__'))
    else:
      shutil.copy(source, project / name)
  monkeypatch.setattr(fingerprint, 'ROOT', str(project))
  data = write_digits_subset(str(tmp_path / 'digits'), per_class=10)

  run_ids = []

  def run(steps: str = '20') -> str:
    capsys.readouterr()
    code, last_run = run_pipeline(
      data,
      str(tmp_path / 'out'),
      *('--train-steps', steps, '--min-accuracy', '0'),
      # Runs with fewer steps may fall behind the serving model; blessing is not tested here.
      *('--max-accuracy-drop', '1'),
    )
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    run_ids.append(last_run['run_id'])
    return out

  assert 'components: 10 executed, 0 cached of 10' in run()
  _append(project / 'README.md', 'An edit no component executes.')
  out = run()
  # Nothing re-runs for the edit, and nothing else changed since the first run (whose model
  # serves now): the command answers with that run's summary (cli/unchanged.py).
  assert 'components: none run: ' in out and 'code changed' not in out
  assert run_ids[1] == run_ids[0]

  # Damage made after that run finished (issue 60): every train shard of its Examples cut to
  # 100 bytes. Judged against the records the ExampleGen recorded, whether ShardCheck runs
  # (another --max-damaged-percent) or comes from the cache (another --train-steps: the Trainer
  # itself counts what is missing). Both stop before training; the shards are put back.
  with open(tmp_path / 'out' / 'last_run.json') as f:
    examples = json.load(f)['examples_uri']
  cut = {}
  for shard in glob.glob(os.path.join(examples, 'Split-train', '*')):
    with open(shard, 'rb') as f:
      cut[shard] = f.read()
    with open(shard, 'wb') as f:
      f.write(cut[shard][:100])
  for extra, stopped_by in ((('--max-damaged-percent', '50'), 'ShardCheck'), ((), 'Trainer')):
    code, failed = run_pipeline(
      data, str(tmp_path / 'out'), '--train-steps', '25', '--min-accuracy', '0', *extra
    )
    assert code == 1 and failed['components'][stopped_by] == 'FAILED'
    assert failed['components']['ShardCheck'] == ('FAILED' if extra else 'CACHED')
    assert re.search(r'\d+ of \d+ recorded records missing', failed['error']), failed['error']
  for shard, content in cut.items():
    with open(shard, 'wb') as f:
      f.write(content)

  _append(project / 'trainer' / 'model.py', '# an edit of the model')
  out = run(steps='25')  # and an option of the Trainer
  assert 'components: 4 executed, 6 cached of 10' in out
  assert (
    'Trainer executed: code changed since the cached run (trainer/model.py); '
    'options changed (train_steps 20 → 25)'
  ) in out
  assert re.search(r'Evaluator executed: new inputs from upstream', out)

  _append(project / 'components' / 'image_example_gen' / 'executor.py', '# an edit')
  out = run()
  assert 'components: 10 executed, 0 cached of 10' in out  # ExampleGen and all downstream of it
  assert (
    'ImageExampleGen executed: code changed since the cached run '
    '(components/image_example_gen/executor.py)'
  ) in out

  # pipeline.py compare on these runs: what differs, read back from ML Metadata.
  def compare(*runs: str) -> dict:
    answer = tmp_path / 'compare.json'  # each comparison replaces the last: --overwrite
    capsys.readouterr()
    code = cli_main.main(
      ['compare', *runs, '--output', str(tmp_path / 'out'), '--json', str(answer), '--overwrite']
    )
    assert code == 0, capsys.readouterr().err[-2000:]
    with open(answer) as f:
      return dict(json.load(f), printed=capsys.readouterr().out)

  def named(result: dict, aspect: str) -> dict:
    return {d['name']: d for d in result['differences'] if d['aspect'] == aspect}

  assert 'README.md' not in named(compare(run_ids[0], run_ids[2]), 'code')  # none runs it
  result = compare(run_ids[1], run_ids[2])  # the model edit and --train-steps 25
  assert named(result, 'code')['trainer/model.py']['where'] == ['Trainer']
  steps = named(result, 'options')['train_steps']
  assert (steps['a'], steps['b'], steps['delta'], steps['where']) == (20, 25, 5, ['Trainer'])
  assert not named(result, 'data') and not named(result, 'schema')  # the same data version
  per_class = result['metrics']['per_class']
  assert sorted(per_class) == [str(digit) for digit in range(10)]
  assert all(set(v) == {'a', 'b', 'delta'} for v in per_class.values())
  assert any(v['delta'] is not None for v in per_class.values())
  assert (
    'trainer/model.py (Trainer)' in result['printed'] and 'recall of class 0' in result['printed']
  )
  result = compare(run_ids[2], run_ids[3])  # the ExampleGen edit, back to 20 steps
  assert named(result, 'code')['components/image_example_gen/executor.py']['where'] == [
    'ImageExampleGen'
  ]
  assert named(result, 'options')['train_steps']['delta'] == -5
  for runs in ([run_ids[2], run_ids[2]], [run_ids[3]]):  # a run with itself (the latest): refused
    assert cli_main.main(['compare', *runs, '--output', str(tmp_path / 'out')]) == 2
    assert 'would be compared with itself' in capsys.readouterr().err


def test_a_fingerprint_covers_imported_code_the_environment_and_read_files(tmp_path, monkeypatch):
  files = fingerprint.source_files('trainer.task')
  assert {
    'trainer/task.py',
    'trainer/model.py',
    'trainer/setup.py',
    'trainer/shards.py',
    'trainer/image_input.py',
    'trainer/tabular_input.py',
    'contracts/image_record.py',
    'records/scan.py',
  } <= files
  assert not any(path.startswith(('cli/', 'metadata/')) for path in files)

  for name in ('trainer', 'contracts', 'utils', 'records', 'requirements.lock'):
    source = os.path.join(ROOT, name)
    if os.path.isdir(source):
      shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns('__pycache__'))
    else:
      shutil.copy(source, tmp_path / name)
  schema = tmp_path / 'schema.pbtxt'
  schema.write_text('feature { name: "label" type: INT }\n')
  monkeypatch.setattr(fingerprint, 'ROOT', str(tmp_path))
  before = fingerprint.of('trainer.task', data_files=[str(schema)])
  for edited in ('trainer/model.py', 'requirements.lock', 'schema.pbtxt'):
    _append(tmp_path / edited, '# edited')
    after = fingerprint.of('trainer.task', data_files=[str(schema)])
    old, new = json.loads(before), json.loads(after)
    assert [path for path in new if old[path] != new[path]] == [edited]
    before = after
