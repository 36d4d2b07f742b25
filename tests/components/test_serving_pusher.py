"""ServingPusher: a model that is already the newest serving version is not copied again."""

import shutil

from components.serving_pusher import versions


def _model(folder, weights: bytes):
  (folder / 'variables').mkdir(parents=True)
  (folder / 'saved_model.pb').write_bytes(b'graph')
  (folder / 'variables' / 'variables.data-00000-of-00001').write_bytes(weights)
  return folder


def test_the_newest_serving_version_holding_the_same_files_is_found(tmp_path):
  model = _model(tmp_path / 'model', b'weights')
  serving = tmp_path / 'serving'
  assert versions.serving_copy(str(model), str(serving)) is None  # nothing serving yet
  shutil.copytree(model, serving / '1700000000')
  assert versions.serving_copy(str(model), str(serving)) == str(serving / '1700000000')

  _model(serving / '1700000100', b'other weights')  # a newer, different model serves now
  assert versions.serving_copy(str(model), str(serving)) is None
  (serving / 'notes').mkdir()  # not a version folder
  assert versions.newest_version(str(serving)) == str(serving / '1700000100')


def test_an_extra_or_changed_file_is_another_model(tmp_path):
  model = _model(tmp_path / 'model', b'weights')
  serving = tmp_path / 'serving'
  shutil.copytree(model, serving / '1')
  (serving / '1' / 'assets').mkdir()
  (serving / '1' / 'assets' / 'labels.txt').write_text('a\n')
  assert versions.serving_copy(str(model), str(serving)) is None
  shutil.rmtree(serving / '1' / 'assets')
  (serving / '1' / 'saved_model.pb').write_bytes(b'graph, edited')
  assert versions.serving_copy(str(model), str(serving)) is None
