"""utils/fingerprint.py on a small project of its own: the files a module can import, and what
an edit changes (tests/e2e/test_code_aware_caching.py does it on the project's code)."""

import json

import pytest

from utils import fingerprint


@pytest.fixture
def project(tmp_path, monkeypatch):
  (tmp_path / 'trainer').mkdir()
  (tmp_path / 'trainer' / '__init__.py').write_text('')
  (tmp_path / 'trainer' / 'task.py').write_text(
    'import os\n\ndef run():\n  from trainer import model  # inside a function: counted too\n'
  )
  (tmp_path / 'trainer' / 'model.py').write_text('VALUE = 1\n')
  (tmp_path / 'trainer' / 'unused.py').write_text('VALUE = 2\n')
  (tmp_path / 'requirements.lock').write_text('tensorflow==2.16.2\n')
  monkeypatch.setattr(fingerprint, 'ROOT', str(tmp_path))
  return tmp_path


def test_the_files_are_what_the_module_can_import_and_the_environment(project):
  files = json.loads(fingerprint.of('trainer.task'))
  assert set(files) == {
    'trainer/__init__.py',
    'trainer/task.py',
    'trainer/model.py',
    fingerprint.ENVIRONMENT_FILE,
  }


def test_an_edit_changes_only_its_own_file_and_an_unimported_file_changes_nothing(project):
  before = json.loads(fingerprint.of('trainer.task'))
  (project / 'trainer' / 'unused.py').write_text('VALUE = 3\n')
  assert json.loads(fingerprint.of('trainer.task')) == before
  (project / 'trainer' / 'model.py').write_text('VALUE = 4\n')
  after = json.loads(fingerprint.of('trainer.task'))
  assert [path for path in after if after[path] != before[path]] == ['trainer/model.py']
