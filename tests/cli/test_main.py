"""Bad input: one line on stderr, exit code 2, no traceback, nothing written."""

import gzip
import os
import subprocess
import sys

import numpy as np
import pytest

from cli import main as cli_main
from tests.conftest import ROOT, image_bytes


def _make(tmp_path, files):
  """A data folder holding `files`: real 4×4 PNGs for image names, one byte otherwise."""
  png = image_bytes(np.zeros((4, 4), np.uint8), 'PNG', 'L')
  for relpath in files:
    path = tmp_path / 'data' / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png if relpath.endswith(('.png', '.jpg')) else b'x')
  (tmp_path / 'data').mkdir(exist_ok=True)
  return str(tmp_path / 'data')


@pytest.mark.parametrize(
  'files,data_arg,message',
  [
    ([], 'missing', 'no such file or folder'),
    ([], '', 'the folder is empty'),
    (['cats/a.png', 'cats/b.jpg'], '', 'only one class folder'),
    (['cats/a.txt', 'dogs/b.txt'], '', 'no images'),
    (['notes.dat'], 'notes.dat', 'unknown file type'),
    (['notes.txt'], 'notes.txt', 'a .txt file is not read; if it is CSV'),
    (['data.gz'], 'data.gz', 'unknown file type'),  # gzip, but not TFRecords inside
    (['Split-train/a.tfrecord'], '', 'need at least Split-train and Split-eval'),
    (['notes.txt'], '', 'no class folders, CSV or TFRecord files'),
    # A stray data file beside class folders: neither is guessed.
    (['cats/a.png', 'dogs/b.png', 'x.tfrecord'], '', 'holds both folders (cats, dogs) and data'),
    (['cats/a.png', 'dogs/b.png', 'y.csv'], '', 'and data files (y.csv); point --data at'),
    # Hidden and tool folders are not classes.
    (['cats/a.png', '.ipynb_checkpoints/b.png', '__pycache__/c.png'], '', 'only one class'),
  ],
)
def test_bad_data(tmp_path, capsys, files, data_arg, message):
  """Exit 2 with one line, before anything is written."""
  root = _make(tmp_path, files)
  output = tmp_path / 'out'
  code = cli_main.main(['run', '--data', os.path.join(root, data_arg), '--output', str(output)])
  err = capsys.readouterr().err
  assert code == 2
  assert err.count('\n') == 1 and err.startswith('error: ') and message in err
  assert not output.exists()


def _tfrecord(*records: bytes) -> bytes:
  import tempfile

  import tensorflow as tf

  with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, 'records')
    with tf.io.TFRecordWriter(path) as writer:
      for record in records:
        writer.write(record)
    with open(path, 'rb') as f:
      return f.read()


ROWS = b'x,label\n1,0\n2,1\n'


BAD_FILES = [
  ('latin1.csv', 'café,label\n1,0\n2,1\n'.encode('latin-1'), 'not UTF-8 (byte 0xe9 on line 1)'),
  ('excel.csv', b'\xef\xbb\xbf' + ROWS, 'starts with a UTF-8 byte-order mark'),
  ('header.csv', b'x,label\n', '0 data row(s) under the header'),
  ('one.csv', b'x,label\n1,0\n', '1 data row(s) under the header; training and evaluation'),
  ('holes.csv', b'x,label\n1,0\n2,\n3,nan\n4,1\n', '2 of the first 4 rows of'),
  ('twice.csv', b'a,a,label\n1,2,0\n3,4,1\n', "twice.csv: the header names column 'a' more than"),
  (
    'semicolons.csv',
    b'a;b;label\n1;2;0\n3;4;1\n',
    'semicolons.csv: the header looks semicolon-separated (a;b;label); CsvExampleGen reads '
    'comma-separated files: save it as CSV with commas',
  ),
  ('tabs.csv', b'a\tb\tlabel\n1\t2\t0\n3\t4\t1\n', 'looks tab-separated (a\\tb\\tlabel)'),
  (
    'ids.csv',
    b'x,label\n' + b''.join(b'%d,%d\n' % (i % 2, i) for i in range(30)),
    '--label label: every one of the first 30 rows of',
  ),
  ('noise.tfrecord', bytes(range(256)) * 4, 'not a TFRecord file'),
  ('packed.tfrecord', gzip.compress(_tfrecord(b'')), 'GZIP-compressed; name it *.tfrecord.gz'),
  ('empty.tfrecord', b'', 'holds no records'),
  (
    'words.tfrecord',
    _tfrecord(b'hello'),
    'is not a tf.Example or tf.SequenceExample with features',
  ),
]


@pytest.mark.parametrize('name,content,message', BAD_FILES, ids=[case[0] for case in BAD_FILES])
def test_bad_files(tmp_path, capsys, name, content, message):
  """What CsvExampleGen or ImportExampleGen would fail on later: one line now."""
  (tmp_path / name).write_bytes(content)
  output = tmp_path / 'out'
  assert cli_main.main(['run', '--data', str(tmp_path / name), '--output', str(output)]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith('error: ') and message in err, err
  assert not output.exists()


def test_a_damaged_metadata_store_is_named(tmp_path, capsys):
  (tmp_path / 'metadata.sqlite').write_bytes(bytes(range(256)) * 16)
  assert cli_main.main(['run', '--output', str(tmp_path)]) == 2
  err = capsys.readouterr().err
  assert err == (
    f'error: {tmp_path}/metadata.sqlite: not an SQLite database (damaged?); move it away to '
    'start afresh (every component then runs again)\n'
  )
  assert not (tmp_path / 'default_data').exists()


def test_an_output_path_with_glob_characters_is_refused(tmp_path, capsys):
  output = tmp_path / 'runs [2024]'
  assert cli_main.main(['run', '--output', str(output)]) == 2
  err = capsys.readouterr().err
  assert err.startswith(f'error: --output {output}: [ ] would be read as glob patterns')
  assert err.count('\n') == 1 and not output.exists()


def test_compile_to_a_place_that_takes_no_file(tmp_path, capsys):
  blocker = tmp_path / 'a-file'
  blocker.write_text('')
  args = ['compile', '--pipeline-root', 'gs://b/root', '--data', 'gs://b/images']
  assert cli_main.main([*args, '--out', str(blocker / 'pipeline.json')]) == 2
  err = capsys.readouterr().err
  assert err.startswith(f'error: --out {blocker}/pipeline.json: cannot write there (')
  assert err.count('\n') == 1


def test_unwritable_output(tmp_path, capsys):
  blocker = tmp_path / 'a-file'
  blocker.write_text('')
  code = cli_main.main(['run', '--output', str(blocker / 'out')])
  err = capsys.readouterr().err
  assert code == 2 and err.count('\n') == 1 and 'not writable' in err
  assert not os.path.exists(os.path.join(str(tmp_path), 'a-file', 'out'))
  code = cli_main.main(['run', '--output', str(blocker)])
  assert code == 2 and 'not a folder' in capsys.readouterr().err


@pytest.mark.parametrize(
  'option,value',
  [
    ('--eval-percent', '0'),
    ('--eval-percent', '100'),
    ('--shard-size-mb', '0'),
    ('--train-steps', '0'),
    ('--batch-size', '0'),
    ('--learning-rate', '-1'),
    ('--eval-steps', '-2'),
    ('--image-size', '-3 5'),
    ('--min-accuracy', '1.5'),
    ('--max-accuracy-drop', '-0.1'),
    ('--min-class-recall', '1.5'),
    ('--min-improvement', '1'),
    ('--min-improvement', '-0.1'),
    ('--max-mae', '0'),
    ('--max-rmse', '-2'),
    ('--max-error-increase', '-0.01'),
    ('--min-eval-examples', '-1'),
    ('--min-eval-class-examples', '-5'),
    ('--max-damaged-percent', '101'),
    ('--max-image-side', '-1'),
    ('--seed', '-1'),
  ],
)
def test_out_of_range_numbers(tmp_path, capsys, option, value):
  code = cli_main.main(['run', option, *value.split(), '--output', str(tmp_path / 'out')])
  err = capsys.readouterr().err
  assert code == 2 and err.startswith('error: ') and f'{option} {value}: must be' in err
  assert err.count('\n') == 1 and not (tmp_path / 'out').exists()
  # compile checks the same numbers before it writes a spec
  spec = tmp_path / 'spec.json'
  compile_args = [
    '--pipeline-root',
    str(tmp_path / 'root'),
    '--data',
    'gs://b/d',
    '--out',
    str(spec),
  ]
  code = cli_main.main(['compile', *compile_args, option, *value.split()])
  assert code == 2 and f'{option} {value}: must be' in capsys.readouterr().err
  assert not spec.exists()


def test_slices_need_columns(tmp_path, capsys):
  code = cli_main.main(['run', '--slice-feature', 'x', '--output', str(tmp_path / 'out')])
  err = capsys.readouterr().err
  assert code == 2 and err == (
    'error: --slice-feature: only tabular data (CSV or TFRecord columns) has features\n'
  )
  assert not (tmp_path / 'out').exists()  # the embedded digits are images: nothing written


def test_max_image_side_is_for_image_folders(tmp_path, capsys):
  csv = tmp_path / 'rows.csv'
  csv.write_text('a,label\n1,0\n2,1\n')
  out = tmp_path / 'out'
  code = cli_main.main(['run', '--data', str(csv), '--max-image-side', '256', '--output', str(out)])
  err = capsys.readouterr().err
  assert (
    code == 2 and err == 'error: --max-image-side: only image folders are stored by the project\n'
  )
  assert not out.exists()


def test_missing_schema_file(tmp_path, capsys):
  code = cli_main.main(
    ['run', '--schema', str(tmp_path / 'nope.pbtxt'), '--output', str(tmp_path / 'out')]
  )
  assert code == 2 and 'no such file' in capsys.readouterr().err


def test_command_line_errors_have_no_traceback_and_help_works(tmp_path):
  bad = subprocess.run(
    [sys.executable, 'pipeline.py', 'run', '--data', str(tmp_path / 'nope')],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=120,
  )
  assert bad.returncode == 2
  assert bad.stderr.strip().count('\n') == 0 and 'Traceback' not in bad.stderr
  for command in ([], ['run'], ['schema']):
    shown = subprocess.run(
      [sys.executable, 'pipeline.py', *command, '--help'],
      cwd=ROOT,
      capture_output=True,
      text=True,
      timeout=120,
    )
    assert shown.returncode == 0 and 'usage: pipeline.py' in shown.stdout
  assert '--data' in shown.stdout and '--out' in shown.stdout


@pytest.mark.parametrize(
  'extra,message',
  [
    (['--label', 'price'], '--label price: no such column in'),
    (['--text-column', 'comment'], '--text-column comment: no such column in'),
    (['--id-column', 'row'], '--id-column row: no such column in'),
    (['--slice-feature', 'town'], '--slice-feature town: no such column in'),
    (['--allow-feature', 'town'], '--allow-feature town: no such column in'),
  ],
)
def test_csv_columns_are_checked_before_anything_runs(tmp_path, capsys, extra, message):
  data = tmp_path / 'rows.csv'
  data.write_text('label,city\n1,Paris\n0,Rome\n')
  output = tmp_path / 'out'
  assert cli_main.main(['run', '--data', str(data), '--output', str(output), *extra]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and message in err and 'columns: label, city' in err
  assert not output.exists()


@pytest.mark.parametrize('flag', ['--slice-feature', '--allow-feature', '--id-column'])
def test_tfrecord_features_are_checked_before_anything_runs(tmp_path, capsys, flag):
  """A feature no record holds was ignored (--slice-feature: no slices, no word)."""
  import tensorflow as tf

  def example(i):
    feature = {
      'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
      'city': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'Paris'])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

  data = tmp_path / 'rows.tfrecord'
  data.write_bytes(_tfrecord(*(example(i) for i in range(4))))
  output = tmp_path / 'out'
  argv = ['run', '--data', str(data), '--label', 'label', '--output', str(output)]
  assert cli_main.main([*argv, flag, 'town']) == 2
  err = capsys.readouterr().err
  assert err == (
    f'error: {flag} town: no such feature in the first 200 records of {data} (features: city, '
    'label)\n'
  )
  assert not output.exists()


@pytest.mark.parametrize(
  'files,data,output,message',
  [
    (['cats/a.png', 'dogs/b.png'], 'data', 'data/out', 'its files would be read as images'),
    (['cats/a.png', 'dogs/b.png'], 'data', 'data', 'its files would be read as images'),
    (['cats/a.png', 'dogs/b.png'], 'link', 'data/out', 'is inside --data'),  # link → data
    (['span-1/cats/a.png', 'span-1/dogs/b.png'], 'data', 'data/out', 'read as images'),
    (['a.csv'], 'data', 'data/out', 'the next run would take its folder for part of the data'),
  ],
)
def test_an_output_inside_the_data_folder_is_refused(
  tmp_path, capsys, files, data, output, message
):
  """The pipeline's own files would become data (an extra class of images, for one)."""
  (tmp_path / 'data').mkdir()
  for name in files:
    (tmp_path / 'data' / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / 'data' / name).write_bytes(
      image_bytes(np.zeros((4, 4), np.uint8), 'PNG', 'L') if name.endswith('.png') else ROWS
    )
  (tmp_path / 'link').symlink_to(tmp_path / 'data')
  code = cli_main.main(['run', '--data', str(tmp_path / data), '--output', str(tmp_path / output)])
  err = capsys.readouterr().err
  assert code == 2 and err.count('\n') == 1, err
  assert err.startswith(f'error: --output {tmp_path / output} is inside --data {tmp_path / data}: ')
  assert message in err and err.endswith('; choose an output outside the data folder\n')
  assert not (tmp_path / 'data' / 'out').exists()


def test_an_output_beside_a_csv_file_or_hidden_in_the_data_is_taken(tmp_path, monkeypatch):
  """Only the CSV file is read, not its folder; hidden folders are never read as data."""
  from cli import config_builder
  from contracts.errors import UserError

  images = _make(tmp_path, ['cats/a.png', 'dogs/b.png'])
  (tmp_path / 'rows.csv').write_bytes(ROWS)
  monkeypatch.chdir(tmp_path)
  for argv in (['--data', 'rows.csv'], ['--data', images, '--output', f'{images}/.runs']):
    config = config_builder.build_config(cli_main.parser().parse_args(['run', *argv]))
    assert config.output == os.path.abspath(argv[-1] if '--output' in argv else 'output')
  monkeypatch.chdir(images)  # the default output, ./output, inside --data .
  with pytest.raises(UserError, match=r'^--output output is inside --data \.: its files'):
    config_builder.build_config(cli_main.parser().parse_args(['run', '--data', '.']))
  assert not os.path.exists('output')
