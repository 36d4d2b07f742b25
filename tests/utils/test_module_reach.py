"""What a module file's function reaches: an edit outside it leaves its digest alone."""

import shutil

from tests.support.tfx_data import TAXI_MODULE
from utils import module_reach


def _copy(tmp_path):
  path = tmp_path / 'taxi_utils.py'
  shutil.copy(TAXI_MODULE, path)
  return path


def _edit(path, old: str, new: str) -> None:
  text = path.read_text()
  assert old in text
  path.write_text(text.replace(old, new))


def test_run_fn_edit_leaves_preprocessing_fn_digest(tmp_path):
  path = _copy(tmp_path)
  before = (
    module_reach.digest(str(path), 'preprocessing_fn'),
    module_reach.digest(str(path), 'run_fn'),
  )
  _edit(path, 'first_dnn_layer_size = 100', 'first_dnn_layer_size = 90')
  _edit(path, '"""Python source file', '# a comment\n"""Python source file')
  after = (
    module_reach.digest(str(path), 'preprocessing_fn'),
    module_reach.digest(str(path), 'run_fn'),
  )
  assert after[0] == before[0] and after[1] != before[1]


def test_a_constant_or_helper_it_reaches_changes_it(tmp_path):
  path = _copy(tmp_path)
  before = module_reach.digest(str(path), 'preprocessing_fn')
  _edit(path, '_FEATURE_BUCKET_COUNT = 10', '_FEATURE_BUCKET_COUNT = 12')
  bucketed = module_reach.digest(str(path), 'preprocessing_fn')
  _edit(path, "default_value = '' if", "default_value = '?' if")
  assert len({before, bucketed, module_reach.digest(str(path), 'preprocessing_fn')}) == 3


def test_files_beside_it_that_it_imports(tmp_path):
  (tmp_path / 'helpers.py').write_text('import more\nSCALE = 2\n')
  (tmp_path / 'more.py').write_text('X = 1\n')
  (tmp_path / 'unused.py').write_text('Y = 1\n')
  path = tmp_path / 'module.py'
  path.write_text('import helpers\n\ndef preprocessing_fn(inputs):\n  return helpers.SCALE\n')
  assert module_reach.local_imports(str(path)) == [
    str(tmp_path / 'helpers.py'),
    str(tmp_path / 'more.py'),
  ]
  before = module_reach.digest(str(path), 'preprocessing_fn')
  (tmp_path / 'more.py').write_text('X = 2\n')
  assert module_reach.digest(str(path), 'preprocessing_fn') != before
