"""`pipeline.py predict --data PATH`: batch prediction with a pushed model through its raw-input
signatures, on Beam (inference/predict.py): one row per input in a predictions CSV
(contracts/predictions.py), unreadable inputs skipped and listed, and with --log DIR the requests
as TensorFlow Serving PredictionLog TFRecords (contracts/request_log.py)."""

import argparse
import contextlib
import os
import sys
import threading
import time
from typing import Dict, List

from cli import beam_runner, flag_groups, output_folder
from contracts import csv_dialect, predictions, record_features
from contracts.errors import EXIT_BAD_INPUT, EXIT_OK, UserError
from contracts.image_files import NOT_AN_IMAGE

HELP = 'predict with a pushed model: images, CSV, text CSV or TFRecords → a predictions CSV'
DESCRIPTION = (
  'Send every input of --data to the pushed model (default: the newest version under '
  '<output>/serving) through the signature a serving client uses for it: image files (a folder '
  'of any depth, or one file) to predict_image_bytes, CSV rows to predict_columns (or '
  'predict_text), TFRecords to serving_default; write id, class, probability and the top '
  'classes per input to a CSV (a regression model: id and the predicted number). A model a TFX '
  'module file saved (run --module-file) gets CSV rows as the tf.Examples its serving_default '
  'parses. Inputs that cannot be read are skipped and listed. '
  'docs/serving.md: Batch prediction.'
)
PROGRESS_SECONDS = 3.0
SHOWN_SKIPPED = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument(
    '--data',
    required=True,
    metavar='PATH',
    help='an image folder (any depth) or file, a CSV file or folder of CSV files, or TFRecord '
    'file(s)',
  )
  parser.add_argument(
    '--output',
    default=output_folder.DEFAULT_OUTPUT,
    help='the run folder whose serving/ holds the pushed model (default: %(default)s)',
  )
  parser.add_argument(
    '--model',
    default='',
    metavar='DIR',
    help='a SavedModel folder (e.g. output/serving/<version>) or a folder of versions '
    '(default: the newest version under <output>/serving)',
  )
  parser.add_argument(
    '--out',
    default='',
    metavar='FILE',
    help=f'the predictions CSV (default: <output>/{predictions.FILE_NAME})',
  )
  parser.add_argument(
    '--top-k',
    type=int,
    default=predictions.DEFAULT_TOP_K,
    metavar='K',
    help='classes listed per input in top_k (default: %(default)s; a regression model has none)',
  )
  parser.add_argument(
    '--text-column',
    default='',
    metavar='COLUMN',
    help='text models: the CSV column holding the text (default: the only column, or the only '
    'one of free text)',
  )
  parser.add_argument(
    '--log',
    default='',
    metavar='DIR',
    help='also write every request as TensorFlow Serving PredictionLog TFRecords into DIR '
    '(added beside earlier ones; `pipeline.py monitor` reads them)',
  )
  parser.add_argument(
    record_features.ALLOW_FLAG,
    action='store_true',
    help="TFRecords: predict even when some of a tabular model's columns are in none of a "
    "file's first records (sparse columns), as missing values, said in the output "
    '(default: refused in one line)',
  )
  parser.add_argument(
    '--beam-arg',
    dest='beam_args',
    action='append',
    default=[],
    metavar='ARG',
    help='passed to Beam as is (default: the DirectRunner in memory, with a progress line)',
  )
  parser.add_argument(
    '--overwrite',
    action='store_true',
    help='replace --out even when it is not a predictions file written before',
  )
  flag_groups.add_engine_flags(parser, 'the prediction pipeline')


@contextlib.contextmanager
def _progress_line(total_files: int, kind: str):
  """A line every PROGRESS_SECONDS while the pipeline runs: inputs predicted and skipped."""
  from inference import predict

  stop = threading.Event()
  started = time.monotonic()

  def report():
    while not stop.wait(PROGRESS_SECONDS):
      done = predict.progress()
      of = f' of {total_files}' if kind == 'images' else ''
      print(
        f'  {done["predicted"] + done["skipped"]}{of} inputs done ({done["skipped"]} skipped), '
        f'{time.monotonic() - started:.0f} s',
        flush=True,
      )

  thread = threading.Thread(target=report, daemon=True)
  thread.start()
  try:
    yield
  finally:
    stop.set()
    thread.join()


def _wrote_by_predict(path: str) -> bool:
  """Whether `path` starts with the predictions header (a file this command wrote before)."""
  try:
    with open(path, encoding='utf-8', errors='replace') as f:
      return predictions.is_header(f.readline())
  except OSError:
    return False


def _check_out(out: str, data, overwrite: bool) -> None:
  """--out never replaces an input, nor without --overwrite a file this command did not write."""
  target = os.path.realpath(out)
  inputs = {os.path.realpath(os.path.join(data.root, name)) for name in data.files}
  if target in inputs:
    raise UserError(f'--out {out}: is one of the --data inputs; give another file name')
  output_folder.check_new_file('--out', out, overwrite, _wrote_by_predict, 'a predictions file')


def main(args: argparse.Namespace) -> int:
  from inference import inputs, model

  if args.top_k < 1:
    raise UserError(f'--top-k {args.top_k}: must be 1 or more')
  engine = beam_runner.command_engine_args(args, args.beam_args)
  try:
    data = inputs.find(args.data)
    model_path = model.find(args.model, args.output)
  except (inputs.Problem, model.Problem) as e:
    raise UserError(str(e)) from None
  out = args.out or os.path.join(args.output, predictions.FILE_NAME)
  if os.path.isdir(out):
    raise UserError(f'--out {out}: is a folder (give a file name, e.g. {predictions.FILE_NAME})')
  if not data.files:
    raise UserError(f'--data {args.data}: no image, CSV or TFRecord files there')
  _check_out(out, data, args.overwrite)
  from cli import progress

  started = time.monotonic()
  with _log_file(out) as log_path, progress.stderr_to(log_path), _library_logging(log_path):
    try:
      _, served = model.load(model_path, data.kind)
      layouts = {}
      if data.kind == inputs.CSV:
        wanted = list(served.kinds)
        for relpath in data.files:
          path = os.path.join(data.root, relpath)
          layouts[relpath] = (
            inputs.module_csv_layout(path, served.module.kinds, served.module.required)
            if served.module
            else inputs.csv_layout(path, wanted, args.text_column, served.id_columns)
          )
      absent = _absent_columns(data, served, args.allow_missing_columns)
    except (inputs.Problem, model.Problem) as e:
      raise UserError(str(e)) from None
    others = f'; {len(data.others)} of them skipped: {NOT_AN_IMAGE}' if data.others else ''
    print(
      f'predicting {len(data.files) + len(data.others)} file(s) ({data.kind}) under {data.root} '
      f'with {served.path} ({served.signature}){others}',
      flush=True,
    )
    from inference import predict

    if engine:
      print(f'  on {args.beam_runner}: the count comes when the job ends', flush=True)
    with _progress_line(len(data.files), data.kind) if not engine else contextlib.nullcontext():
      result = predict.run(
        served,
        data,
        out,
        layouts=layouts,
        top_k=args.top_k,
        log_dir=args.log,
        beam_args=engine + args.beam_args,
      )
  seconds = time.monotonic() - started
  print(
    f'predicted {result.predicted} input(s) in {seconds:.1f} s '
    f'({result.predicted / max(seconds, 1e-9):.0f}/s): {result.out}'
  )
  if result.numbers:
    low, mean, high = result.numbers
    print(f'predicted numbers: lowest {low:.6g}, mean {mean:.6g}, highest {high:.6g}')
  unread = _unread_features(served, layouts)
  if unread:
    print(f'columns the model reads that the CSV lacks, sent as absent features: {unread}')
  if absent:
    shown = '; '.join(f'{", ".join(columns)} in {where}' for where, columns in absent.items())
    print(
      f'missing columns: {shown}: predicted with them missing (a number at its training mean; '
      f'{record_features.ALLOW_FLAG})'
    )
  if data.kind == inputs.IMAGES and result.turned_upright:
    print(
      f'turned upright: {result.turned_upright} image(s) by their EXIF orientation (sent as PNG)'
    )
  if result.scaled_up:
    height, width = served.image_size
    shown = ', '.join(f'{i} ({size})' for i, size in result.scaled_up[:SHOWN_SKIPPED])
    more = len(result.scaled_up) - SHOWN_SKIPPED
    print(
      f"scaled up: {len(result.scaled_up)} image(s) smaller than a tenth of the model's "
      f'{width}x{height} input, their predictions rest on few pixels: {shown}'
      + (f'; and {more} more' if more > 0 else '')
    )
  if result.missing_rows:
    columns = ', '.join(f'{column} {rows}' for column, rows in result.missing.items())
    print(
      f'missing numbers: {result.missing_rows} row(s) predicted with empty, NA, inf or nan cells '
      f'as missing (0, as in training): {columns}'
    )
  read = csv_dialect.Counts(result.repeated_headers, result.non_finite_cells).line()
  if read:
    print(f'CSV rows: {read}')
  if result.skipped:
    shown = '; '.join(f'{i}: {reason}' for i, reason in result.skipped[:SHOWN_SKIPPED])
    more = len(result.skipped) - SHOWN_SKIPPED
    print(
      f'skipped {len(result.skipped)} input(s) ({result.skipped_out}): {shown}'
      + (f'; and {more} more' if more > 0 else '')
    )
  if args.log:
    print(f'requests logged: {", ".join(result.log_files) or "none"}')
  print(f'log: {log_path}')
  sys.stdout.flush()
  if not result.predicted and result.skipped:  # nothing a user could use: not a success
    os.remove(result.out)
    print(
      f'error: none of the {len(result.skipped)} input(s) could be predicted (the first: '
      f'{result.skipped[0][1]}); the reasons are in {result.skipped_out}',
      file=sys.stderr,
    )
    return EXIT_BAD_INPUT
  return EXIT_OK


def _absent_columns(data, served, allowed: bool) -> Dict[str, List[str]]:
  """TFRecords for a tabular model: {'none of the first N records of FILE': the model's columns
  absent from them} (contracts/record_features.py: UserError for none held, or for some absent
  unless `allowed`)."""
  from cli.inputs import tfrecord_probe
  from inference import inputs

  found = {}
  for relpath in data.files if data.kind == inputs.TFRECORDS and served.features else ():
    path = os.path.join(data.root, relpath)
    held = record_features.held(tfrecord_probe.first_records(path, record_features.FIRST_RECORDS))
    absent = record_features.absent(served.features, held, f'--data {path}', allowed)
    if absent:
      found[f'none of the first {held.records:,} records of {relpath}'] = absent
  return found


def _unread_features(served, layouts) -> str:
  """A module file's model: its optional features no CSV file has ('' when none)."""
  if not served.module or not layouts:
    return ''
  had = {name for layout in layouts.values() for name in layout.columns}
  return ', '.join(name for name in served.module.kinds if name not in had)


@contextlib.contextmanager
def _log_file(out: str):
  """logs/predict-<time>.log beside `out`; removed on a UserError, with the folders made for it
  (nothing was predicted: the error line says why)."""
  folder = os.path.join(os.path.dirname(os.path.abspath(out)), 'logs')
  made, missing = [], folder
  while not os.path.exists(missing):
    made.append(missing)
    missing = os.path.dirname(missing)
  os.makedirs(folder, exist_ok=True)
  path = os.path.join(folder, time.strftime('predict-%Y%m%d-%H%M%S.log'))
  try:
    yield path
  except UserError:
    with contextlib.suppress(OSError):
      os.remove(path)
      for made_folder in made:
        os.rmdir(made_folder)
    raise


@contextlib.contextmanager
def _library_logging(log_path: str):
  """Python logging (Beam, TensorFlow, absl) to the log file, not the terminal."""
  import logging

  root = logging.getLogger()
  saved = list(root.handlers), root.level
  handler = logging.FileHandler(log_path)
  handler.setFormatter(logging.Formatter('%(asctime)s %(levelname)s %(name)s: %(message)s'))
  for h in saved[0]:
    root.removeHandler(h)
  root.addHandler(handler)
  root.setLevel(logging.INFO)
  tf_logger = logging.getLogger('tensorflow')
  tf_handlers = list(tf_logger.handlers)
  for h in tf_handlers:
    tf_logger.removeHandler(h)
  try:
    yield
  finally:
    root.removeHandler(handler)
    handler.close()
    for h in saved[0]:
      root.addHandler(h)
    root.setLevel(saved[1])
    for h in tf_handlers:
      tf_logger.addHandler(h)
