"""`run --infer-data`: what is refused in one line before anything runs."""

import numpy as np
import PIL.Image
import pytest

from cli import main as cli_main


def _data(tmp_path):
  data = tmp_path / 'rows.csv'
  data.write_text('x,label\n1,0\n2,1\n3,0\n')
  return data


def _images(tmp_path):
  for label in ('a', 'b'):
    (tmp_path / 'images' / label).mkdir(parents=True)
    PIL.Image.fromarray(np.zeros((8, 8), np.uint8)).save(tmp_path / 'images' / label / '1.png')
  return tmp_path / 'images'


def _text(tmp_path):
  data = tmp_path / 'reviews.csv'
  rows = ''.join(f'"a review of many words number {i}",{i % 2}\n' for i in range(30))
  data.write_text('review,label\n' + rows)
  return data


def _mkdir(path):
  path.mkdir(parents=True)
  return path


def _tfrecord(tmp_path):
  import tensorflow as tf

  with tf.io.TFRecordWriter(str(tmp_path / 'new.tfrecord')) as writer:
    writer.write(tf.train.Example().SerializeToString())
  return tmp_path / 'new.tfrecord'


@pytest.mark.parametrize(
  'data,infer,message',
  [
    (_data, lambda p: p / 'missing.csv', '--infer-data {p}/missing.csv: no such file or folder'),
    (_data, _tfrecord, 'tfrecords data, but --data is csv data'),
    (_text, _data, 'only images, CSV and TFRecord (tf.Example) data are scored'),
    (_images, _data, '--infer-data {p}/rows.csv: a folder of images, not a file'),
    (
      _images,
      lambda p: (_mkdir(p / 'new') / 'notes.txt').write_text('x') and p / 'new',
      '--infer-data {p}/new: no images (.jpg, .jpeg',
    ),
    (
      _data,
      lambda p: (_mkdir(p / 'new' / 'span-1') / 'rows.csv').write_text('x\n1\n') and p / 'new',
      'not span-<N> or Split-<name> folders',
    ),
    (_data, lambda p: (p / 'empty').mkdir() or p / 'empty', '--infer-data'),
    (
      _data,
      # a ';' file is read as the dialect reads it (contracts/csv_dialect.py): its columns x, colour
      lambda p: (p / 'new.csv').write_text('x;colour\r\n1;red\r\n') and p / 'new.csv',
      '--infer-data {p}/new.csv: column(s) colour not in --data (columns: x, label)',
    ),
  ],
)
def test_bad_infer_data_is_one_line(tmp_path, capsys, data, infer, message):
  code = cli_main.main(
    [
      'run',
      '--data',
      str(data(tmp_path)),
      '--infer-data',
      str(infer(tmp_path)),
      '--output',
      str(tmp_path / 'out'),
    ]
  )
  err = capsys.readouterr().err
  assert code == 2 and err.startswith('error: ') and err.count('\n') == 1, err
  assert message.format(p=tmp_path) in err, err
