"""cli/config_builder.build_config: the Beam mode decided from the data, the splits kept, and
nothing written (what a run writes first is cli/prepare_run.py's, tested here beside it)."""

import dataclasses

import pytest

from cli import config_builder
from cli import main as cli_main
import config as cfg
from contracts import text_record, trainer_options
from contracts.errors import UserError
from contracts.trainer_options import TrainerOptions


@pytest.mark.parametrize(
  'flags,mode',
  [
    ([], 'in_memory'),  # 400 images: below cfg.IN_MEMORY_BELOW_IMAGES
    (['--beam-workers', '2'], 'multi_processing'),  # worker processes asked for
    (['--beam-mode', 'multi_threading'], 'multi_threading'),
  ],
)
def test_auto_keeps_beam_in_one_process_for_few_images(tmp_path, digits_subset, flags, mode):
  args = cli_main.parser().parse_args(
    ['run', '--data', digits_subset, '--output', str(tmp_path / 'out'), *flags]
  )
  config = config_builder.build_config(args)
  assert config.beam_direct_running_mode == mode
  assert f'--direct_running_mode={mode}' in config.beam_pipeline_args


def test_auto_keeps_beam_in_one_process_for_a_small_csv(tmp_path):
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
  assert config_builder.build_config(args).beam_direct_running_mode == 'in_memory'


def test_a_number_to_regress_keeps_duplicates_conflicts_unless_another_rule_was_asked(tmp_path):
  rows = ''.join(f'{i},{i * 1.37 + 0.11:.2f}\n' for i in range(60))
  (tmp_path / 'rows.csv').write_text('x,fare\n' + rows)
  base = ['run', '--data', str(tmp_path / 'rows.csv'), '--label', 'fare', '--output']
  built = lambda *more: config_builder.build_config(
    cli_main.parser().parse_args([*base, str(tmp_path / 'o'), *more])
  )
  assert built().trainer.task == trainer_options.REGRESSION
  assert built().duplicates == 'keep-conflicts'  # contracts/task_defaults.py
  assert built('--duplicates', 'off').duplicates == 'off'


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
  import example_gens

  below = cfg.ARROW_CSV_IN_MEMORY_BELOW_BYTES
  assert cfg.arrow_csv_running_mode(cfg.BEAM_AUTO, 0, below - 1) == 'in_memory'
  assert cfg.arrow_csv_running_mode(cfg.BEAM_AUTO, 0, below) == ''  # the pipeline's mode
  assert cfg.arrow_csv_running_mode(cfg.BEAM_AUTO, 2, 1) == ''  # workers asked for
  assert cfg.arrow_csv_running_mode('multi_processing', 0, 1) == ''
  config = cfg.PipelineConfig(
    data='/d', data_kind=cfg.CSV, output='/o', csv_direct_running_mode='in_memory'
  )
  component = example_gens.example_gen_for(config)
  assert component.id == 'CsvExampleGen'
  args = config.beam_pipeline_args + component.executor_spec.beam_pipeline_args
  # TFX puts the component's last: they win (in this process: one worker)
  assert args[-2:] == ['--direct_running_mode=in_memory', '--direct_num_workers=1']
  stock = example_gens.example_gen_for(dataclasses.replace(config, csv_reader=cfg.STOCK_CSV))
  assert not stock.executor_spec.beam_pipeline_args


def test_split_tfrecords_keep_their_splits_unless_eval_percent_asks_to_split_them_again(tmp_path):
  import tensorflow as tf

  from tests.support import shards

  feature = {'y': tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}
  example = tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
  for split in ('train', 'eval'):
    (tmp_path / 'data' / f'Split-{split}').mkdir(parents=True)
    shards.write_shard(str(tmp_path / 'data' / f'Split-{split}' / 'part.tfrecord'), [example])
  base = ['run', '--data', str(tmp_path / 'data'), '--label', 'y']
  kept = config_builder.build_config(
    cli_main.parser().parse_args(base + ['--output', str(tmp_path / 'a')])
  )
  assert dict(kept.data_splits) == {'eval': 'Split-eval/*', 'train': 'Split-train/*'}
  assert kept.eval_percent == 20
  again = config_builder.build_config(
    cli_main.parser().parse_args(base + ['--output', str(tmp_path / 'b'), '--eval-percent', '25'])
  )
  assert again.data_splits == () and again.data_pattern == 'Split-*/*'
  assert again.eval_percent == 25
  (tmp_path / 'data' / 'Split-eval' / 'part.tfrecord').unlink()
  (tmp_path / 'data' / 'Split-eval').rmdir()  # a train split alone: split again when asked
  with pytest.raises(UserError, match='Split-train and Split-eval .+ or give --eval-percent'):
    config_builder.build_config(
      cli_main.parser().parse_args(base + ['--output', str(tmp_path / 'c')])
    )
  alone = config_builder.build_config(
    cli_main.parser().parse_args(base + ['--output', str(tmp_path / 'd'), '--eval-percent', '30'])
  )
  assert alone.data_splits == () and alone.data_pattern == 'Split-*/*'
  assert alone.eval_percent == 30


def test_the_trainer_flags_become_the_config_s_trainer_options_and_its_custom_config(tmp_path):
  import pipeline

  (tmp_path / 'rows.csv').write_text('x,y\n' + ''.join(f'{i},{i % 2}\n' for i in range(40)))
  given = ['--batch-size', '7', '--fine-tune-layers', '3', '--image-size', '5', '6', '--xla', 'off']
  given += ['--label-threshold', '0.5', '--label-default', '1', '--input-cache', 'memory']
  given += ['--date-order', 'mdy', '--input-accessor', trainer_options.TFX_ACCESSOR]
  given += ['--tabular-stats', trainer_options.TRANSFORM]
  args = cli_main.parser().parse_args(
    ['run', '--data', str(tmp_path / 'rows.csv'), '--label', 'y', '--output', str(tmp_path / 'o')]
    + given
  )
  config = config_builder.build_config(args)
  expected = TrainerOptions(
    data_kind=trainer_options.TABULAR,
    label_key='y',
    label_threshold=0.5,
    label_default='1',
    task=trainer_options.CLASSIFICATION,  # decided from the data (--label-threshold)
    batch_size=7,
    input_cache='memory',
    input_accessor=trainer_options.TFX_ACCESSOR,
    tabular_stats=trainer_options.TRANSFORM,
    image_height=5,
    image_width=6,
    xla=False,
    fine_tune_layers=3,
    date_order='mdy',
    min_eval_class_examples=cfg.PipelineConfig.min_eval_class_examples,  # for the Trainer's check
  )
  assert config.trainer == expected
  sent = dataclasses.replace(pipeline.trainer_options(config), code_fingerprint='')
  assert TrainerOptions.from_custom_config(sent.to_custom_config()) == expected


def test_the_trainer_s_kind_and_label_follow_the_data():
  text = cfg.PipelineConfig(data='/d', data_kind=cfg.TEXT, output='/o', label='sentiment')
  assert (text.trainer.data_kind, text.trainer.label_key) == (
    trainer_options.SEQUENCE,
    text_record.LABEL_KEY,  # the CSV's label column is stored under the record layout's key
  )
  images = dataclasses.replace(text, data_kind=cfg.IMAGES, label='y')
  assert (images.trainer.data_kind, images.trainer.label_key) == (trainer_options.IMAGE, 'y')


def test_images_take_neither_a_task_of_numbers_nor_a_threshold(tmp_path, digits_subset):
  for flags, said in (
    (['--task', 'regression'], '--task regression: image folders train classes only'),
    (['--label-threshold', '3'], '--label-threshold: image folders hold class labels'),
  ):
    args = cli_main.parser().parse_args(
      ['run', '--data', digits_subset, '--output', str(tmp_path / 'o'), *flags]
    )
    with pytest.raises(UserError, match=f'^{said}'):
      config_builder.build_config(args)


def test_tabular_stats_transform_is_for_the_project_s_models_on_tables(tmp_path, digits_subset):
  (tmp_path / 'rows.csv').write_text('x,y\n' + ''.join(f'{i},{i % 2}\n' for i in range(40)))
  (tmp_path / 'module.py').write_text('def run_fn(fn_args):\n  pass\n')
  for data, extra, said in (
    (digits_subset, [], 'only tabular data'),
    (
      str(tmp_path / 'rows.csv'),
      ['--module-file', str(tmp_path / 'module.py')],
      'preprocessing_fn',
    ),
  ):
    args = cli_main.parser().parse_args(
      ['run', '--data', data, '--label', 'y', '--output', str(tmp_path / 'o')]
      + ['--tabular-stats', 'transform', *extra]
    )
    with pytest.raises(UserError, match=f'^--tabular-stats transform: .*{said}'):
      config_builder.build_config(args)


def _damaged_tfrecords(folder) -> str:
  """A folder of one TFRecord file of 40 table rows, the 11th record's bytes damaged."""
  from tests.support import shards, tabular_rows

  folder.mkdir()
  path = tabular_rows.write(str(folder / 'rows.tfrecord'), tabular_rows.rows(40))
  with open(path, 'rb') as f:
    shards.damage(path, shards.record_offset(f.read(), shards.DAMAGED_INDEX) + 20)
  return str(folder)


def _csv(folder) -> str:
  folder.mkdir()
  (folder / 'rows.csv').write_text('x,label\n' + ''.join(f'{i},{i % 2}\n' for i in range(50)))
  return str(folder / 'rows.csv')


def _files(root) -> dict:
  return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob('*')}


@pytest.mark.parametrize(
  'data', [None, _csv, _damaged_tfrecords], ids=['default digits', 'csv', 'damaged tfrecords']
)
def test_build_config_only_reads_what_prepare_run_writes_it_leaves(tmp_path, monkeypatch, data):
  """No output folder, lock, digits, salvaged copy or data index from build_config alone; the
  same arguments through prepare_run write them, and the config reads where they were put."""
  from cli import output_lock, prepare_run
  from utils import data_index

  monkeypatch.setenv('HOME', str(tmp_path / 'home'))
  monkeypatch.setattr(data_index, 'RACY_NS', 0)  # the data were just written: indexed anyway
  (tmp_path / 'home').mkdir()
  given = ['--data', data(tmp_path / 'data'), '--label', 'label'] if data else []
  out = tmp_path / 'out'
  args = cli_main.parser().parse_args(['run', *given, '--output', str(out)])
  before = _files(tmp_path)
  built = config_builder.build_config(args)
  assert _files(tmp_path) == before and not out.exists()
  prepared = prepare_run.prepare_run(args)
  assert (out / output_lock.LOCK_FILE).is_file() and (out / data_index.INDEX_FILE).is_file()
  if data is _damaged_tfrecords:  # read from the intact copies
    assert prepared == dataclasses.replace(built, data=str(out / 'salvaged_input'))
    assert (out / 'salvaged_input' / 'rows.tfrecord').is_file()
  else:
    assert prepared == built
  if data is None:  # the digits as resolve_data finds them, now that they are there
    from cli.inputs import data_layout, default_data

    assert data_layout.resolve_data(built.data) == default_data.source(str(out))


def test_keep_reports_reaches_the_config_and_a_negative_one_is_one_line(tmp_path, capsys):
  (tmp_path / 'rows.csv').write_text('x,label\n' + ''.join(f'{i},{i % 2}\n' for i in range(50)))
  base = ['run', '--data', str(tmp_path / 'rows.csv'), '--label', 'label']
  args = cli_main.parser().parse_args(
    [*base, '--output', str(tmp_path / 'o'), '--keep-reports', '3']
  )
  assert config_builder.build_config(args).keep_reports == 3
  default = cli_main.parser().parse_args([*base, '--output', str(tmp_path / 'p')])
  assert config_builder.build_config(default).keep_reports == 0  # every report kept
  assert cli_main.main([*base, '--output', str(tmp_path / 'q'), '--keep-reports', '-1']) == 2
  assert capsys.readouterr().err == (
    "error: --keep-reports -1: must be 0 (the default: every run's report kept) or more\n"
  )
