"""data_revisions/revision.py without pipeline runs: which git and DVC facts a --data path gets."""

import os
import subprocess

from data_revisions import revision


def _git(repo, *args):
  subprocess.run(
    ['git', '-C', str(repo), *args],
    check=True,
    capture_output=True,
    env=dict(os.environ, GIT_AUTHOR_NAME='t', GIT_COMMITTER_NAME='t', EMAIL='t@example.com'),
  )


def test_data_outside_git_or_ignored_by_it_has_no_revision(tmp_path):
  (tmp_path / 'plain').mkdir()
  assert revision.of_data(str(tmp_path / 'plain')) == {}
  repo = tmp_path / 'repo'
  (repo / 'output' / 'digits').mkdir(parents=True)
  _git(repo, 'init', '-q')
  (repo / '.gitignore').write_text('output/\n')
  _git(repo, 'add', '.gitignore')
  _git(repo, 'commit', '-qm', 'ignore output')
  assert revision.of_data(str(repo / 'output' / 'digits')) == {}  # e.g. make run's digits


def test_committed_data_is_clean_until_a_file_changes(tmp_path):
  repo = tmp_path / 'repo'
  (repo / 'rows').mkdir(parents=True)
  (repo / 'rows' / 'a.csv').write_text('x,label\n1,0\n')
  (repo / 'elsewhere.txt').write_text('')
  _git(repo, 'init', '-q')
  _git(repo, 'add', '-A')
  _git(repo, 'commit', '-qm', 'rows')
  head = subprocess.run(
    ['git', '-C', str(repo), 'rev-parse', 'HEAD'], capture_output=True, text=True
  ).stdout.strip()
  rows = str(repo / 'rows')
  assert revision.of_data(rows) == {'data_git_commit': head, 'data_git_dirty': 0}
  (repo / 'elsewhere.txt').write_text('changed')  # outside the data path: still clean
  assert revision.of_data(rows)['data_git_dirty'] == 0
  (repo / 'rows' / 'b.csv').write_text('x,label\n2,1\n')  # untracked, inside: dirty
  assert revision.of_data(rows)['data_git_dirty'] == 1


def test_the_dvc_hash_covers_a_tracked_folder_or_a_stage_output():
  files = {
    'data/images.dvc': 'outs:\n- md5: abc.dir\n  path: images\n',
    'dvc.lock': 'schema: "2.0"\nstages:\n  prepare:\n    outs:\n    - path: prepared/rows.csv\n'
    '      md5: f00\n',
  }
  read = files.get
  assert revision._tracked('data/images', read) == ('data/images.dvc', 'abc.dir')
  assert revision._tracked('data/images/cats', read) == ('data/images.dvc', 'abc.dir')
  assert revision._tracked('prepared/rows.csv', read) == ('dvc.lock', 'f00')
  assert revision._tracked('data/other', read) == ('', '')


def test_s3_data_records_the_endpoint_and_path_lakefs_commits_are_read_through(monkeypatch):
  monkeypatch.setenv('AWS_ENDPOINT_URL', 'http://127.0.0.1:8000')
  path = 's3://repository/64d1f0c2/images'  # lakeFS: bucket = repository, key = commit/path
  assert revision.of_data(path) == {
    'data_source': path,
    'data_s3_endpoint': 'http://127.0.0.1:8000',
  }
  assert revision.of_data('gs://bucket/images') == {}
