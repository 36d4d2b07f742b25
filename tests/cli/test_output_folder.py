"""cli/output_folder: an --output or --local-dir inside the data is refused."""

import pytest

from cli import output_folder
from cli.inputs import data_paths
import config as cfg
from contracts.errors import UserError


def test_an_output_inside_remote_data_is_found_by_prefix(tmp_path, monkeypatch):
  """And a remote output's local folder (metadata, logs) inside local data."""
  monkeypatch.setattr(data_paths, 'isdir', lambda path: True)  # gs://b/images: a folder
  with pytest.raises(UserError, match=r'gs://b/images/out is inside --data gs://b/images/'):
    output_folder.check_outside_data('gs://b/images/', cfg.IMAGES, '--output', 'gs://b/images/out')
  with pytest.raises(UserError, match=r'; choose a --local-dir outside the data folder$'):
    output_folder.check_outside_data(str(tmp_path), cfg.CSV, '--local-dir', str(tmp_path / 'state'))
  for outside in ('gs://b/images-out', 'gs://b/images/.runs', 's3://b/images/out', '/b/images'):
    output_folder.check_outside_data('gs://b/images', cfg.IMAGES, '--output', outside)
