"""`pipeline.py monitor`: serving data (PredictionLog TFRecords, tf.Example TFRecords or CSV)
against the serving model's own training data, found through ML Metadata (monitoring/)."""

import argparse
import os
import sys

from cli import beam_runner, config_builder, flag_groups, flags, output_folder
import config as cfg
from contracts.errors import EXIT_FAILED, EXIT_OK, UserError

HELP = "skew and drift of serving data against the serving model's training data"
DESCRIPTION = (
  'Compute TFDV statistics of --serving-data with the training schema (SERVING environment: '
  'the label may be absent) and compare them with the statistics of the data that trained the '
  'newest pushed model of --output (found in its ML Metadata): Jensen-Shannon divergence for '
  'numeric features, L-infinity for categorical ones, and drift against the previous '
  'monitoring run of the same model; for a regression model also the label (when served) and '
  "the model's prediction ('model prediction'), Jensen-Shannon; rows that carry the label: "
  "the model's error on them against its eval figures ('model error'). Writes "
  '<output>/monitoring/<time>/ (statistics, anomalies, '
  'monitoring.json), records the run in ML Metadata, prints a line per flagged feature. Exit 1 '
  'when anything is flagged, 0 when not. docs/monitoring.md.'
)


def _threshold(text: str):
  name, _, value = text.rpartition('=')
  try:
    number = float(value)
  except ValueError:
    raise argparse.ArgumentTypeError(f'{text!r}: expected X or FEATURE=X') from None
  if not 0 <= number <= 1:
    raise argparse.ArgumentTypeError(f'{text!r}: a threshold is between 0 and 1')
  return name or '*', number


def add_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument(
    '--serving-data',
    required=True,
    metavar='PATH',
    help='PredictionLog TFRecords (predict --log), tf.Example TFRecords or a CSV file/folder',
  )
  parser.add_argument(
    '--output', default=output_folder.DEFAULT_OUTPUT, help='the run folder (default: %(default)s)'
  )
  parser.add_argument(
    '--skew-threshold',
    type=_threshold,
    action='append',
    default=[],
    metavar='[FEATURE=]X',
    help='threshold of every feature (X) or of one (FEATURE=X), repeatable; default: the '
    "schema's comparator, else 0.3 (Jensen-Shannon) / 0.1 (L-infinity)",
  )
  parser.add_argument(
    '--id-column',
    action='append',
    default=[],
    metavar='COLUMN',
    help='compare serving rows with the training rows of the same id (repeat for a compound '
    'id): per-feature mismatch counts (TFDV feature skew)',
  )
  judged = "on them is more than {} its eval {} and beyond twice the window's standard error"
  for flag, metavar, who, how in (
    (
      '--max-accuracy-drop',
      'X',
      'a classifier is flagged when its accuracy',
      ('X below', 'accuracy'),
    ),
    (
      '--max-error-increase',
      'SHARE',
      'a regression model is flagged when its MAE',
      ('this share above', 'MAE'),
    ),
  ):
    dest = flag[2:].replace('-', '_')
    parser.add_argument(
      flag,
      type=float,
      default=getattr(flags.DEFAULTS, dest),
      metavar=metavar,
      help=f'served rows that carry the label: {who} {judged.format(*how)} '
      "(default: %(default)s, as run's blessing)",
    )
  flag_groups.add_engine_flags(parser, 'the --id-column feature skew (a Beam pipeline)')


def main(args: argparse.Namespace) -> int:
  config_builder.check_numbers(args)
  store_path = os.path.join(args.output, cfg.METADATA_FILE)
  if not os.path.isfile(store_path):
    raise UserError(f'{args.output}: no metadata.sqlite (run the pipeline there first)')
  if not os.path.exists(args.serving_data):
    raise UserError(f'--serving-data {args.serving_data}: no such file or folder')
  engine = beam_runner.command_engine_args(args, [])
  from cli import progress

  os.makedirs(os.path.join(args.output, 'logs'), exist_ok=True)
  log = os.path.join(args.output, 'logs', 'monitor.log')
  import logging

  logging.getLogger('tensorflow').setLevel(logging.ERROR)
  with progress.stderr_to(log):
    from monitoring import run

    summary = run.monitor(
      store_path,
      args.serving_data,
      dict(args.skew_threshold),
      id_columns=args.id_column,
      beam_args=engine,
      limits={
        'max_accuracy_drop': args.max_accuracy_drop,
        'max_error_increase': args.max_error_increase,
        'min_rows': flags.DEFAULTS.min_eval_examples,
      },
    )
  for line in run.lines(summary):
    print(line)
  sys.stdout.flush()
  return EXIT_FAILED if summary['flagged'] else EXIT_OK
