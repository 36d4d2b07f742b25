"""The one builder from parsed options to a PipelineConfig, with the checks that make bad input
one line (exit 2) before anything runs."""

import argparse
import dataclasses
import os

from cli import beam_runner, flags, model_options, output_folder
from cli.inputs import csv_input, data_layout, default_data, infer_data, tfrecord_probe
import config as cfg
from contracts import labels, limits, task_defaults, trainer_options
from contracts.errors import UserError
from contracts.trainer_options import TrainerOptions


def check_numbers(args: argparse.Namespace) -> None:
  """Numbers out of range: one line each, before anything runs (`run` and `compile` alike; the
  same table, contracts/limits.py, checks `submit --param`)."""
  for name in limits.RULES:
    value = getattr(args, name, None)
    wrong = value is not None and limits.problem(name, value)
    if wrong:
      raise UserError(f'--{name.replace("_", "-")} {_shown(value)}: {wrong}')


def _shown(value) -> str:
  """A number as typed: 0.5, 100, or the two of --image-size."""
  if isinstance(value, (list, tuple)):
    return ' '.join(map(str, value))
  return f'{value:g}' if isinstance(value, float) else str(value)


def check_input_service(args: argparse.Namespace, reachable: bool = False) -> None:
  """--input-service: '' or grpc://HOST:PORT; with `reachable`, a dispatcher must answer."""
  address = getattr(args, 'input_service', '')
  if not address:
    return
  from trainer import input_service

  try:
    input_service.parse_address(address)
    if reachable:
      input_service.check(address)
  except ValueError as e:
    raise UserError(f'--input-service: {e}') from None


def _check_buckets(args: argparse.Namespace) -> None:
  for flag, path in (('--data', args.data), ('--output', args.output)):
    if cfg.is_remote(path):
      from utils import object_storage

      try:
        object_storage.check_bucket(path)
      except ValueError as e:
        raise UserError(f'{flag} {path}: {e}') from None


def data_kind_and_task(source, args: argparse.Namespace):
  """(data kind, text column, task, why the task): CSV with a free-text column is TEXT,
  TFRecords of SequenceExamples are SEQUENCES (both become sequence models, of classes); a
  table's task is decided once here, from the label's first values (labels.decide_task)."""
  if args.text_column and (source is None or source.kind != cfg.CSV):
    raise UserError('--text-column: only CSV data has columns')
  asked = getattr(args, 'task', trainer_options.AUTO)
  threshold = getattr(args, 'label_threshold', None)
  if source is None:
    return None, '', trainer_options.CLASSIFICATION, ''
  if source.kind == cfg.CSV:
    sample = data_layout.sample_file(source)
    columns = csv_input.csv_header(sample)
    for flag, column in _named_columns(args):
      if column not in columns:
        raise UserError(
          f'{flag} {column}: no such column in {sample} (columns: {", ".join(columns)})'
        )
    if getattr(args, 'csv_reader', cfg.ARROW_CSV) == cfg.STOCK_CSV:
      csv_input.refuse_tfx_dialect(sample)
      csv_input.refuse_numbers_as_text(sample)
    not_inputs = [args.label, *getattr(args, 'id_columns', [])]  # never read as dates
    csv_input.refuse_ambiguous_dates(sample, getattr(args, 'date_order', ''), not_inputs)
    task, why = csv_input.label_task(sample, args.label, threshold, asked)
    classes = task == trainer_options.CLASSIFICATION and threshold is None
    text_column = csv_input.text_column(
      sample, args.label, args.text_column, args.label_default, classes
    )
    if text_column and task == trainer_options.REGRESSION:
      raise UserError(
        f'--label {args.label}: a number to regress ({why}) beside free text '
        f'({text_column!r}): the text route trains classes only; give --label-threshold T '
        'for two classes'
      )
    return (cfg.TEXT if text_column else cfg.CSV), text_column, task, why
  if source.kind == cfg.TFRECORDS and tfrecord_probe.holds_sequence_examples(
    data_layout.sample_file(source)
  ):
    _classes_only(asked, 'SequenceExample TFRecords', threshold)
    return cfg.SEQUENCES, '', trainer_options.CLASSIFICATION, ''
  if source.kind == cfg.TFRECORDS:
    sample = data_layout.sample_file(source)
    found = tfrecord_probe.first_values(sample)
    for flag, column in _named_columns(args):
      if column not in found:
        raise UserError(
          f'{flag} {column}: no such feature in the first {tfrecord_probe.FIRST_RECORDS} records of '
          f'{sample} (features: {", ".join(sorted(found))})'
        )
    values = found.get(args.label, [])
    try:
      task, why = labels.decide_task(
        args.label, values, f'the first {len(values)} records of {sample}', threshold, asked
      )
    except ValueError as e:
      raise UserError(str(e)) from None
    return source.kind, '', task, why
  _classes_only(asked, 'image folders', threshold)
  return source.kind, '', trainer_options.CLASSIFICATION, ''


def _named_columns(args: argparse.Namespace) -> list:
  """(flag, column) of the flags that name a table's columns besides --label and --text-column."""
  named = [('--id-column', c) for c in getattr(args, 'id_columns', [])]
  named += [('--allow-feature', c) for c in getattr(args, 'allowed_features', [])]
  return named + [('--slice-feature', c) for c in getattr(args, 'slice_features', [])]


def _classes_only(asked: str, what: str, threshold=None) -> None:
  """Images and sequences: their labels are classes, neither regressed nor thresholded."""
  if asked == trainer_options.REGRESSION:
    raise UserError(f'--task regression: {what} train classes only; regression needs a table')
  if threshold is not None:
    raise UserError(f'--label-threshold: {what} hold class labels, not numbers to threshold')


def build_config(args: argparse.Namespace) -> cfg.PipelineConfig:
  """Checks --data, --output and the numbers (raising UserError) and builds the config. It only
  reads: what a run writes, locks or stages before its pipeline is built is cli/prepare_run.py's
  (--data-rev's copy, which it passes here as --data; the embedded digits of a run without
  --data, which the config names; a damaged TFRecord input's intact copies)."""
  check_numbers(args)
  beam_runner.check_needed_args(args)
  resolved_engine_args = beam_runner.engine_args(args)
  check_input_service(args, reachable=True)
  schema = getattr(args, 'schema', None)
  if schema and not os.path.isfile(schema):
    raise UserError(f'--schema {schema}: no such file')
  _check_buckets(args)
  resplit = getattr(args, 'eval_percent', None)
  source = data_layout.resolve_data(args.data, resplit is not None) if args.data else None
  kind, text_column, task, task_reason = data_kind_and_task(source, args)
  if getattr(args, 'max_image_side', 0) and kind not in (None, cfg.IMAGES):
    raise UserError('--max-image-side: only image folders are stored by the project')
  for flag, dest in (
    ('--slice-feature', 'slice_features'),
    ('--allow-feature', 'allowed_features'),
  ):
    if getattr(args, dest, None) and kind not in (cfg.CSV, cfg.TFRECORDS):
      raise UserError(f'{flag}: only tabular data (CSV or TFRecord columns) has features')
  if getattr(args, 'tabular_stats', '') == trainer_options.TRANSFORM:
    if kind not in (cfg.CSV, cfg.TFRECORDS):
      raise UserError('--tabular-stats transform: only tabular data (CSV or TFRecord columns)')
    if getattr(args, 'module_file', ''):
      raise UserError(
        "--tabular-stats transform: the project's models' statistics; a --module-file's "
        'preprocessing_fn makes its own'
      )
  chosen_model = model_options.model_options(args, kind or cfg.IMAGES)
  model_options.check_imagenet(args)
  if source is not None:
    output_folder.check_outside_data(args.data, source.kind, '--output', args.output)
  infer = infer_data.infer_source(args, kind or cfg.IMAGES, source)
  output = output_folder.absolute(args.output)
  local_dir = output
  if cfg.is_remote(output):
    local_dir = args.local_dir or output_folder.local_state_dir(output)
    if source is not None:
      output_folder.check_outside_data(args.data, source.kind, '--local-dir', local_dir)
    local_dir = output_folder.absolute(local_dir)
  if source is None:
    source = default_data.source(local_dir)
    kind, schema = cfg.IMAGES, schema or cfg.DIGITS_SCHEMA
  if kind == cfg.TEXT:
    schema = schema or cfg.TEXT_SCHEMA
  if args.span and args.span not in source.spans:
    raise UserError(
      f'--span {args.span}: '
      + (
        f'no span-{args.span} folder (spans: {", ".join(map(str, source.spans))})'
        if source.spans
        else 'the data has no span-<N> folders'
      )
    )
  data_bytes = data_layout.data_bytes(source)
  return config_from(
    args,
    data=source.root,
    data_kind=kind,
    output=output,
    local_dir=local_dir,
    # Already split TFRecords keep their splits, unless --eval-percent asks to re-split them.
    data_splits=source.splits if resplit is None else (),
    data_pattern=source.pattern if resplit is None or not source.splits else 'Split-*/*',
    text_column=text_column,
    task=task,
    task_reason=task_reason,
    label_warning=csv_input.shifted_label_columns(data_layout.sample_file(source), args.label)
    if kind == cfg.CSV
    else '',
    # Numbers: rows of the same features and other numbers are the label's spread, not
    # conflicting labels: kept, together in one split.
    duplicates=task_defaults.duplicates(
      task, getattr(args, 'duplicates', cfg.PipelineConfig.duplicates)
    ),
    **(dict(infer_data=infer[0], infer_pattern=infer[1]) if infer else {}),
    schema=os.path.abspath(schema) if schema else None,
    beam_direct_running_mode=cfg.direct_running_mode(
      args.beam_direct_running_mode, source.images, args.beam_direct_num_workers, data_bytes
    ),
    csv_direct_running_mode=cfg.arrow_csv_running_mode(
      args.beam_direct_running_mode, args.beam_direct_num_workers, data_bytes
    )
    if kind == cfg.CSV
    else '',
    beam_engine_args=resolved_engine_args,
    **chosen_model,
  )


def config_from(args: argparse.Namespace, schema_default=None, **decided) -> cfg.PipelineConfig:
  """PipelineConfig from the parsed options (each flag's dest is a field of it or of its
  TrainerOptions), then `decided`."""
  given = dict(vars(args))
  if given.get('eval_percent', 0) is None:
    given['eval_percent'] = flags.DEFAULTS.eval_percent
  if hasattr(args, 'image_size'):
    given.update(image_height=args.image_size[0], image_width=args.image_size[1])
  if hasattr(args, 'xla'):
    given['xla'] = trainer_options.XLA[args.xla]
  if hasattr(args, 'no_cache'):
    given['enable_cache'] = not args.no_cache
  given['statistics_in_process_below_bytes'] = cfg.statistics_in_process_below(  # the executor
    getattr(args, 'beam_direct_running_mode', flags.DEFAULTS.beam_direct_running_mode),  # measures
    getattr(args, 'beam_direct_num_workers', flags.DEFAULTS.beam_direct_num_workers),  # the shards
  )
  given.update(decided)
  if not given.get('schema') and schema_default:
    given['schema'] = schema_default
  fields = {f.name for f in dataclasses.fields(cfg.PipelineConfig)}
  options = {f.name for f in dataclasses.fields(TrainerOptions)} - fields  # data_kind: the config's
  trainer = TrainerOptions(**{name: value for name, value in given.items() if name in options})
  return cfg.PipelineConfig(
    **{name: value for name, value in given.items() if name in fields}, trainer=trainer
  )
