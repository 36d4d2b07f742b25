"""Data revisions: runs on an image folder kept under DVC in a git repository, read as of two
revisions with --data-rev (DVC's own file system, from the local cache), recorded in ML Metadata
and compared; a dirty tree is reported; bad revisions are one line.

The repository is made by the test with git's and DVC's own commands, as a user makes one."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from cli import main as cli_main
from cli import unchanged
from tests.conftest import ROOT, run_pipeline, write_digits_subset
from utils import fingerprint

PER_CLASS = 6
DROPPED = 3  # class 1 loses this many images in v2
DVC = [sys.executable, '-m', 'dvc']
ENV = dict(os.environ, DVC_NO_ANALYTICS='1', GIT_AUTHOR_NAME='t', GIT_COMMITTER_NAME='t')


def _sh(repo, *command):
  done = subprocess.run(command, cwd=repo, capture_output=True, text=True, env=ENV)
  assert done.returncode == 0, done.stderr
  return done.stdout


@pytest.fixture(scope='module')
def dvc_repo(tmp_path_factory):
  """A git + DVC repository: images/ (10 digit classes) at tag v1, and at v2 with DROPPED
  images of class 1 deleted and one changed; the work tree at v2."""
  repo = str(tmp_path_factory.mktemp('dvc') / 'repo')
  os.makedirs(repo)
  _sh(repo, 'git', 'init', '-q')
  _sh(repo, 'git', 'config', 'user.email', 't@example.com')
  _sh(repo, *DVC, 'init', '-q')
  write_digits_subset(os.path.join(repo, 'images'), per_class=PER_CLASS)
  _sh(repo, *DVC, 'add', '-q', 'images')
  _sh(repo, 'git', 'add', '-A')
  _sh(repo, 'git', 'commit', '-qm', 'digits v1')
  _sh(repo, 'git', 'tag', 'v1')
  ones = sorted(os.listdir(os.path.join(repo, 'images', '1')))
  for name in ones[:DROPPED]:
    os.remove(os.path.join(repo, 'images', '1', name))
  shutil.copy(
    os.path.join(repo, 'images', '7', sorted(os.listdir(os.path.join(repo, 'images', '7')))[0]),
    os.path.join(repo, 'images', '1', ones[-1]),
  )  # a 7 where a 1 was: class 1's images changed
  _sh(repo, *DVC, 'add', '-q', 'images')
  _sh(repo, 'git', 'commit', '-qam', 'digits v2: class 1 cleaned')
  _sh(repo, 'git', 'tag', 'v2')
  return repo


def _commit(repo, rev):
  return _sh(repo, 'git', 'rev-parse', f'{rev}^{{commit}}').strip()


def _dvc_md5(repo, rev):
  import yaml

  (out,) = yaml.safe_load(_sh(repo, 'git', 'show', f'{rev}:images.dvc'))['outs']
  return out['md5']


@pytest.mark.slow
def test_runs_at_two_revisions_are_traced_compared_and_a_dirty_tree_reported(
  dvc_repo, tmp_path, capsys, monkeypatch
):
  project = tmp_path / 'project'  # the code the runs fingerprint: edited between them
  for name in unchanged.CODE_FOLDERS:
    shutil.copytree(
      os.path.join(ROOT, name), project / name, ignore=shutil.ignore_patterns('__pycache__')
    )
  for name in unchanged.CODE_FILES:
    shutil.copy(os.path.join(ROOT, name), project / name)
  monkeypatch.setattr(fingerprint, 'ROOT', str(project))
  output = str(tmp_path / 'out')
  data = os.path.join(dvc_repo, 'images')
  quick = ('--train-steps', '20', '--min-accuracy', '0', '--max-accuracy-drop', '1')
  code, first = run_pipeline(data, output, *quick, '--data-rev', 'v1')
  assert code == 0, first.get('error')
  assert f'images from {data} at v1 ({_commit(dvc_repo, "v1")[:12]})' in capsys.readouterr().out
  with open(project / 'trainer' / 'model.py', 'a') as f:
    f.write('# an edit of the model\n')
  code, second = run_pipeline(data, output, *quick, '--data-rev', 'v2', '--learning-rate', '0.002')
  assert code == 0, second.get('error')
  assert sum(first['examples_per_split'].values()) == 10 * PER_CLASS
  # v2's copy of a 7 filed under 1 is the same image under two labels: it and the 7 left out.
  assert sum(second['examples_per_split'].values()) == 10 * PER_CLASS - DROPPED - 2
  assert second['duplicates']['label_conflicts'] == 2
  capsys.readouterr()

  # Each run's data version carries its commit and DVC hash, read back through lineage --json.
  answer = tmp_path / 'lineage.json'
  assert cli_main.main(['lineage', '--output', output, '--json', str(answer)]) == 0
  assert 'dvc md5' in capsys.readouterr().out
  versions = {v['uri']: v for v in json.loads(answer.read_text())['data_versions']}
  for run, rev in ((first, 'v1'), (second, 'v2')):
    revision = versions[run['examples_uri']]['revision']
    assert revision == {
      'data_rev': rev,
      'data_git_commit': _commit(dvc_repo, rev),
      'data_git_dirty': 0,
      'data_dvc_md5': _dvc_md5(dvc_repo, rev),
      'data_dvc_file': 'images.dvc',
      'data_source': data,
    }
    assert versions[run['examples_uri']]['input_base'].startswith(
      os.path.join(output, 'data-revisions', _commit(dvc_repo, rev)[:12])
    )

  # compare: the data (revision, class 1's count), the code, the option and the metrics per class.
  from cli.compare import feature_distances
  from metadata import compare

  store = os.path.join(output, 'metadata.sqlite')
  result = compare.between(store, first['run_id'], second['run_id'], feature_distances)
  named = [(d['aspect'], d['name']) for d in result['differences']]
  assert ('data', 'data_git_commit') in named and ('data', 'data_dvc_md5') in named
  assert ('data', 'data_rev') in named
  assert any(a == 'data' and n.endswith('examples of class 1') for a, n in named)
  assert ('code', 'trainer/model.py') in named and ('options', 'learning_rate') in named
  assert any(a == 'statistics' for a, _ in named)  # the label's distribution moved
  assert [a for a, _ in named] == sorted(
    (a for a, _ in named), key=compare.ASPECTS.index
  )  # most telling first
  assert set(result['metrics']['per_class']) == {str(i) for i in range(10)}
  assert all(set(m) == {'a', 'b', 'delta'} for m in result['metrics']['per_class'].values())
  assert compare.between(store, second['run_id'], second['run_id'])['differences'] == []

  # A second run at a revision reads the staged copy again: ExampleGen comes from the cache
  # (the store touched: through TFX, not cli/unchanged.py's answer).
  os.utime(os.path.join(output, 'metadata.sqlite'))
  code, again = run_pipeline(data, output, *quick, '--data-rev', 'v2', '--learning-rate', '0.002')
  assert code == 0 and 'ImageExampleGen' in again['cached'], again.get('error')

  # The work tree with a change not committed: read as it is, reported dirty.
  os.remove(os.path.join(data, '2', sorted(os.listdir(os.path.join(data, '2')))[0]))
  capsys.readouterr()
  schema_out = str(tmp_path / 'schema-out')
  code = cli_main.main(
    ['schema', '--data', data, '--output', schema_out, '--out', str(tmp_path / 's.pbtxt')]
  )
  out = capsys.readouterr().out
  assert code == 0
  assert f'git {_commit(dvc_repo, "v2")[:12]} with uncommitted changes' in out
  assert 'this run did not read a committed snapshot' in out
  with open(os.path.join(schema_out, 'last_run.json')) as f:
    assert json.load(f)['data_revision']['data_git_dirty'] == 1


@pytest.mark.parametrize(
  'rev,prepare,message',
  [
    ('v9', None, '--data-rev v9: no such revision in the git repository'),
    (
      'v1',
      lambda repo: shutil.move(os.path.join(repo, '.dvc', 'cache'), os.path.join(repo, 'cache')),
      'could not be read from the local DVC cache or a remote',
    ),
  ],
)
def test_a_revision_that_cannot_be_read_is_one_line(
  dvc_repo, tmp_path, capsys, rev, prepare, message
):
  if prepare:
    prepare(dvc_repo)
  try:
    code = cli_main.main(
      [
        'run',
        '--data',
        os.path.join(dvc_repo, 'images'),
        '--data-rev',
        rev,
        '--output',
        str(tmp_path),
      ]
    )
  finally:
    if prepare:
      shutil.move(os.path.join(dvc_repo, 'cache'), os.path.join(dvc_repo, '.dvc', 'cache'))
  err = capsys.readouterr().err
  assert code == 2 and err.startswith('error: ') and err.count('\n') == 1 and message in err, err
  assert not os.path.exists(tmp_path / 'data-revisions' / _commit(dvc_repo, 'v1')[:12])
