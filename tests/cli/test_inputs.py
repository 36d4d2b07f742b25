"""cli/inputs.resolve_data: which ExampleGen reads --data, and with which file pattern."""

import dataclasses
import os

import pytest

from cli import inputs
import config as cfg
from tests.conftest import write_digits_subset


def _touch(path):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, 'w') as f:
    f.write('a,b\n1,2\n')


def test_flat_folders_of_each_kind(tmp_path, digits_subset):
  _touch(str(tmp_path / 'csv' / 'part.csv'))
  _touch(str(tmp_path / 'tfr' / 'part.tfrecord.gz'))
  assert inputs.resolve_data(str(tmp_path / 'csv')) == (
    cfg.CSV,
    str(tmp_path / 'csv'),
    '*.csv',
    (),
    (),
    0,
  )
  assert inputs.resolve_data(str(tmp_path / 'tfr')).pattern == '*.tfrecord.gz'
  assert inputs.resolve_data(digits_subset) == (cfg.IMAGES, digits_subset, '*/*', (), (), 400)


def test_spans_and_versions_of_each_kind(tmp_path):
  for span, version in ((1, 1), (2, 1), (2, 3)):
    _touch(str(tmp_path / 'csv' / f'span-{span}' / f'version-{version}' / 'part.csv'))
    _touch(str(tmp_path / 'tfr' / f'span-{span}' / 'part.tfrecord'))
    write_digits_subset(str(tmp_path / 'img' / f'span-{span}' / f'version-{version}'), 1)
  assert inputs.resolve_data(str(tmp_path / 'csv')) == (
    cfg.CSV,
    str(tmp_path / 'csv'),
    'span-{SPAN}/version-{VERSION}/*.csv',
    (1, 2),
    (),
    0,
  )
  assert inputs.resolve_data(str(tmp_path / 'tfr')) == (
    cfg.TFRECORDS,
    str(tmp_path / 'tfr'),
    'span-{SPAN}/*.tfrecord',
    (1, 2),
    (),
    0,
  )
  assert inputs.resolve_data(str(tmp_path / 'img')) == (
    cfg.IMAGES,
    str(tmp_path / 'img'),
    'span-{SPAN}/version-{VERSION}/*/*',
    (1, 2),
    (),
    10,  # the latest version's: one digit of each class
  )


@pytest.mark.parametrize(
  'flags,mode',
  [
    ([], 'in_memory'),  # 400 images: below cfg.IN_MEMORY_BELOW_IMAGES
    (['--beam-workers', '2'], 'multi_processing'),  # worker processes asked for
    (['--beam-mode', 'multi_threading'], 'multi_threading'),
  ],
)
def test_auto_keeps_beam_in_one_process_for_few_images(tmp_path, digits_subset, flags, mode):
  from cli import main as cli_main
  from cli import options

  args = cli_main.parser().parse_args(
    ['run', '--data', digits_subset, '--output', str(tmp_path / 'out'), *flags]
  )
  config = options.build_config(args)
  assert config.beam_direct_running_mode == mode
  assert f'--direct_running_mode={mode}' in config.beam_pipeline_args


def test_auto_keeps_beam_in_one_process_for_a_small_csv(tmp_path):
  from cli import main as cli_main
  from cli import options

  (tmp_path / 'rows.csv').write_text('x,label\n' + ''.join(f'{i},{i % 2}\n' for i in range(50)))
  args = cli_main.parser().parse_args(
    [
      'run',
      '--data',
      str(tmp_path / 'rows.csv'),
      '--label',
      'label',
      '--output',
      str(tmp_path / 'o'),
    ]
  )
  assert options.build_config(args).beam_direct_running_mode == 'in_memory'


def test_auto_is_worker_processes_for_many_images_large_data_and_compiled_specs():
  below = cfg.IN_MEMORY_BELOW_IMAGES
  assert cfg.direct_running_mode(cfg.BEAM_AUTO, below - 1, 0) == 'in_memory'
  assert cfg.direct_running_mode(cfg.BEAM_AUTO, below, 0) == 'multi_processing'
  assert cfg.direct_running_mode(cfg.BEAM_AUTO, 0, 0) == 'multi_processing'  # size unknown
  small, large = cfg.IN_MEMORY_BELOW_BYTES - 1, cfg.IN_MEMORY_BELOW_BYTES  # CSV, TFRecords
  assert cfg.direct_running_mode(cfg.BEAM_AUTO, 0, 0, small) == 'in_memory'
  assert cfg.direct_running_mode(cfg.BEAM_AUTO, 0, 0, large) == 'multi_processing'
  assert cfg.direct_running_mode(cfg.BEAM_AUTO, 0, 2, small) == 'multi_processing'  # workers asked
  compiled = cfg.PipelineConfig(data='gs://b/d', data_kind=cfg.IMAGES, output='gs://b/o')
  assert compiled.beam_direct_running_mode == cfg.BEAM_AUTO  # compile counts no files
  assert '--direct_running_mode=multi_processing' in compiled.beam_pipeline_args


def test_the_arrow_csv_example_gen_keeps_beam_in_one_process_below_its_own_size():
  import pipeline

  below = cfg.ARROW_CSV_IN_MEMORY_BELOW_BYTES
  assert cfg.arrow_csv_running_mode(cfg.BEAM_AUTO, 0, below - 1) == 'in_memory'
  assert cfg.arrow_csv_running_mode(cfg.BEAM_AUTO, 0, below) == ''  # the pipeline's mode
  assert cfg.arrow_csv_running_mode(cfg.BEAM_AUTO, 2, 1) == ''  # workers asked for
  assert cfg.arrow_csv_running_mode('multi_processing', 0, 1) == ''
  config = cfg.PipelineConfig(
    data='/d', data_kind=cfg.CSV, output='/o', csv_direct_running_mode='in_memory'
  )
  component = pipeline.example_gen_for(config)
  assert component.id == 'CsvExampleGen'
  args = config.beam_pipeline_args + component.executor_spec.beam_pipeline_args
  assert args[-1] == '--direct_running_mode=in_memory'  # TFX puts the component's last: it wins
  stock = pipeline.example_gen_for(dataclasses.replace(config, csv_reader=cfg.STOCK_CSV))
  assert not stock.executor_spec.beam_pipeline_args


def test_the_image_executor_reads_the_resolved_version_folder():
  from components.image_example_gen import executor

  properties = {
    'input_base': '/data',
    'input_config': '{"splits": [{"name": "images", "pattern": "span-2/version-3/*/*"}]}',
  }
  assert executor.images_root(properties) == '/data/span-2/version-3'


def test_a_span_folder_next_to_other_files_is_not_a_data_version_nor_guessed_away(tmp_path):
  _touch(str(tmp_path / 'span-1' / 'part.csv'))
  _touch(str(tmp_path / 'notes.csv'))
  with pytest.raises(inputs.UserError, match=r'holds both folders \(span-1\) and data files'):
    inputs.resolve_data(str(tmp_path))
  assert inputs.resolve_data(str(tmp_path / 'notes.csv')).pattern == 'notes.csv'


def test_an_empty_latest_span_is_a_one_line_error(tmp_path):
  _touch(str(tmp_path / 'span-1' / 'part.csv'))
  os.makedirs(tmp_path / 'span-2')
  with pytest.raises(inputs.UserError, match='span-2: the folder is empty'):
    inputs.resolve_data(str(tmp_path))


TFX_DIR = os.path.dirname(__import__('tfx').__file__)
SEQUENCE_TESTDATA = os.path.join(TFX_DIR, 'components', 'testdata', 'tfrecord_sequence')
IMDB = os.path.join(TFX_DIR, 'examples', 'imdb', 'data', 'imdb_small_with_labels.txt')


def _csv(path, header, rows):
  with open(path, 'w') as f:
    f.write(','.join(header) + '\n' + ''.join(','.join(row) + '\n' for row in rows))
  return str(path)


def test_a_csv_whose_only_other_column_is_free_text_takes_the_text_route(tmp_path):
  reviews = _csv(
    tmp_path / 'r.csv',
    ['label', 'review'],
    [('1', 'a fine film with a good cast'), ('0', 'dull and far too long')] * 5,
  )
  assert inputs.text_column(reviews, 'label') == 'review'
  codes = _csv(tmp_path / 'c.csv', ['label', 'city'], [('1', 'Paris'), ('0', 'New York')] * 5)
  assert inputs.text_column(codes, 'label') == ''  # short strings: a categorical column
  assert inputs.text_column(codes, 'label', chosen='city') == 'city'
  wide = _csv(tmp_path / 'w.csv', ['label', 'a', 'b'], [('1', 'x y z w v u', 'p q r s t u')] * 5)
  assert inputs.text_column(wide, 'label') == ''  # tabular: more than one other column
  with pytest.raises(inputs.UserError, match='--label sentiment: no such column .* label, review'):
    inputs.text_column(reviews, 'sentiment')


@pytest.mark.parametrize(
  'labels,label_default,refused',
  [
    ([str(i) for i in range(30)], '', True),  # an id column
    ([f'user-{i}' for i in range(30)], '', True),
    ([str(i) for i in range(19)], '', False),  # a tiny CSV with one row per class
    ([f'{i / 7:.3f}' for i in range(30)], '', False),  # a float: binarised by a threshold
    ([str(i) for i in range(25)] + [''] * 5, '0', False),  # missing cells: the default's
  ],
)
def test_a_label_unique_per_row_is_refused_as_an_id(tmp_path, labels, label_default, refused):
  path = _csv(tmp_path / 'rows.csv', ['id', 'x'], [(label, '1') for label in labels])
  if not refused:
    assert inputs.text_column(path, 'id', label_default=label_default) == ''
    return
  with pytest.raises(inputs.UserError) as raised:
    inputs.text_column(path, 'id', label_default=label_default)
  assert str(raised.value) == (
    f'--label id: every one of the first 30 rows of {path} has its own value (30 distinct); a '
    'label names classes shared by many rows — is this an id column?'
  )


def test_an_output_inside_remote_data_is_found_by_prefix(tmp_path, monkeypatch):
  """And a remote output's local folder (metadata, logs) inside local data."""
  monkeypatch.setattr(inputs, '_isdir', lambda path: True)  # gs://b/images: a folder
  with pytest.raises(inputs.UserError, match=r'gs://b/images/out is inside --data gs://b/images/'):
    inputs.check_outside_data('gs://b/images/', cfg.IMAGES, '--output', 'gs://b/images/out')
  with pytest.raises(inputs.UserError, match=r'; choose a --local-dir outside the data folder$'):
    inputs.check_outside_data(str(tmp_path), cfg.CSV, '--local-dir', str(tmp_path / 'state'))
  for outside in ('gs://b/images-out', 'gs://b/images/.runs', 's3://b/images/out', '/b/images'):
    inputs.check_outside_data('gs://b/images', cfg.IMAGES, '--output', outside)


def test_the_imdb_txt_gets_a_one_line_hint_and_its_csv_copy_is_text(tmp_path):
  with pytest.raises(inputs.UserError, match='give it a .csv name'):
    inputs.resolve_data(IMDB)
  copy = tmp_path / 'imdb.csv'
  copy.write_bytes(open(IMDB, 'rb').read())
  source = inputs.resolve_data(str(copy))
  assert source.kind == cfg.CSV
  assert inputs.text_column(inputs.sample_file(source), 'label') == 'text'


def test_split_folders_of_gzip_sequence_examples_are_recognised():
  source = inputs.resolve_data(SEQUENCE_TESTDATA)
  assert source.kind == cfg.TFRECORDS
  assert source.splits == (('eval', 'Split-eval/*'), ('train', 'Split-train/*'))
  assert inputs.holds_sequence_examples(inputs.sample_file(source))
  single = inputs.resolve_data(
    os.path.join(SEQUENCE_TESTDATA, 'Split-eval', 'data_tfrecord_eval.gz')
  )
  assert single.kind == cfg.TFRECORDS and single.pattern == 'data_tfrecord_eval.gz'


def test_files_of_two_suffixes_are_refused_rather_than_half_read(tmp_path):
  for name in ('part-0.tfrecord', 'part-1.tfrecord', 'part-2.tfrecord.gz'):
    (tmp_path / name).write_bytes(b'')
  with pytest.raises(inputs.UserError) as refused:
    inputs.resolve_data(str(tmp_path))
  assert str(refused.value) == (
    f'--data {tmp_path}: holds .tfrecord (part-0.tfrecord and 1 more), .tfrecord.gz '
    '(part-2.tfrecord.gz): one kind of file is read at a time; give them one suffix (compress '
    'all of them or none)'
  )


def test_split_folders_need_train_and_eval(tmp_path):
  (tmp_path / 'Split-train').mkdir()
  with pytest.raises(inputs.UserError, match='need at least Split-train and Split-eval'):
    inputs.resolve_data(str(tmp_path))


def test_tf_examples_are_not_sequence_examples(tmp_path):
  import tensorflow as tf

  path = str(tmp_path / 'x.tfrecord')
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(
      tf.train.Example(
        features=tf.train.Features(
          feature={'x': tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}
        )
      ).SerializeToString()
    )
  assert not inputs.holds_sequence_examples(path)


def test_split_tfrecords_keep_their_splits_unless_eval_percent_asks_to_split_them_again(tmp_path):
  import tensorflow as tf

  from cli import main as cli_main
  from cli import options
  from tests import shards

  feature = {'y': tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}
  example = tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
  for split in ('train', 'eval'):
    (tmp_path / 'data' / f'Split-{split}').mkdir(parents=True)
    shards.write_shard(str(tmp_path / 'data' / f'Split-{split}' / 'part.tfrecord'), [example])
  base = ['run', '--data', str(tmp_path / 'data'), '--label', 'y']
  kept = options.build_config(
    cli_main.parser().parse_args(base + ['--output', str(tmp_path / 'a')])
  )
  assert dict(kept.data_splits) == {'eval': 'Split-eval/*', 'train': 'Split-train/*'}
  assert kept.eval_percent == 20
  again = options.build_config(
    cli_main.parser().parse_args(base + ['--output', str(tmp_path / 'b'), '--eval-percent', '25'])
  )
  assert again.data_splits == () and again.data_pattern == 'Split-*/*'
  assert again.eval_percent == 25
