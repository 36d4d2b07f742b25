"""cli/output_folder: an --output or --local-dir inside the data is refused; a file a command
writes replaces no existing file unless --overwrite."""

import pytest

from cli import main as cli_main
from cli import output_folder
from cli.inputs import data_paths
import config as cfg
from contracts.errors import EXIT_BAD_INPUT, UserError


def test_an_output_inside_remote_data_is_found_by_prefix(tmp_path, monkeypatch):
  """And a remote output's local folder (metadata, logs) inside local data."""
  monkeypatch.setattr(data_paths, 'isdir', lambda path: True)  # gs://b/images: a folder
  with pytest.raises(UserError, match=r'gs://b/images/out is inside --data gs://b/images/'):
    output_folder.check_outside_data('gs://b/images/', cfg.IMAGES, '--output', 'gs://b/images/out')
  with pytest.raises(UserError, match=r'; choose a --local-dir outside the data folder$'):
    output_folder.check_outside_data(str(tmp_path), cfg.CSV, '--local-dir', str(tmp_path / 'state'))
  for outside in ('gs://b/images-out', 'gs://b/images/.runs', 's3://b/images/out', '/b/images'):
    output_folder.check_outside_data('gs://b/images', cfg.IMAGES, '--output', outside)


def test_an_existing_file_is_replaced_only_when_asked_or_when_it_is_the_commands_own(tmp_path):
  kept = tmp_path / 'notes.csv'
  kept.write_text('a,b\n')
  output_folder.check_new_file('--json', str(tmp_path / 'new.json'), overwrite=False)
  output_folder.check_new_file('--json', '', overwrite=False)  # not asked for
  output_folder.check_new_file('--json', str(kept), overwrite=True)
  with pytest.raises(UserError, match=r'^--json .*notes.csv: already exists \(give another name'):
    output_folder.check_new_file('--json', str(kept), overwrite=False)
  ours = lambda path: open(path).read().startswith('a,b')
  output_folder.check_new_file('--out', str(kept), False, ours, 'a predictions file')
  with pytest.raises(UserError, match='already exists and is not a predictions file'):
    output_folder.check_new_file(
      '--out', str(kept), False, lambda path: False, 'a predictions file'
    )
  with pytest.raises(UserError, match='is a folder'):
    output_folder.check_new_file('--html', str(tmp_path), overwrite=True)


@pytest.mark.parametrize(
  'argv, flag',
  [
    (['schema', '--data', '{data}', '--output', '{out}', '--out', '{file}'], '--out'),
    (['compare', '--output', '{out}', '--json', '{file}'], '--json'),
    (['compare', '--output', '{out}', '--html', '{file}'], '--html'),
    (['lineage', '--output', '{out}', '--json', '{file}'], '--json'),
    (['runs', '--output', '{out}', '--json', '{file}'], '--json'),
    (['models', '--output', '{out}', '--json', '{file}'], '--json'),
    (['compile', '--pipeline-root', '{out}', '--data', 'gs://b/d', '--out', '{file}'], '--out'),
  ],
)
def test_no_command_replaces_a_file_unasked(tmp_path, capsys, argv, flag):
  """Refused in one line before any work (no output folder, store or pipeline needed)."""
  existing = tmp_path / 'mine.json'
  existing.write_text('{"hand": "edited"}')
  names = {'data': str(tmp_path / 'data.csv'), 'out': str(tmp_path / 'out'), 'file': str(existing)}
  assert cli_main.main([a.format(**names) for a in argv]) == EXIT_BAD_INPUT
  err = capsys.readouterr().err
  what = (
    ' and is not a compiled pipeline' if argv[0] == 'compile' else ''
  )  # compile's own: replaced
  assert err == (
    f'error: {flag} {existing}: already exists{what} (give another name, or --overwrite to '
    'replace it)\n'
  )
  assert existing.read_text() == '{"hand": "edited"}'
  assert not (tmp_path / 'out').exists()
