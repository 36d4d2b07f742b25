"""--infer-data checked against --data: data of the same kind, scored by the BulkInferrer."""

import argparse

from cli.inputs import csv_input, data_layout, image_folders
import config as cfg
from contracts.errors import UserError

# What --infer-data can be (BulkInferrer in the DAG): not text or sequences yet.
INFERRED_KINDS = (cfg.IMAGES, cfg.CSV, cfg.TFRECORDS)


def check_infer_kind(kind: str) -> None:
  if kind not in INFERRED_KINDS:
    raise UserError(
      f'--infer-data: only images, CSV and TFRecord (tf.Example) data are scored in the DAG, '
      f'not {kind} data; score it after the push with pipeline.py predict'
    )


def infer_source(args: argparse.Namespace, kind: str, training):
  """--infer-data checked against --data (`training`, its DataSource): the same kind, and for
  CSV no column --data lacks. (input base, pattern), or None without it."""
  path = getattr(args, 'infer_data', '')
  if not path:
    return None
  check_infer_kind(kind)
  if kind == cfg.IMAGES:
    return image_folders.unlabeled_images(path, '--infer-data'), image_folders.UNLABELED_IMAGES
  try:
    source = data_layout.resolve_data(path)
  except UserError as e:
    raise UserError(str(e).replace('--data', '--infer-data', 1)) from None
  if source.kind != kind:
    raise UserError(f'--infer-data {path}: {source.kind} data, but --data is {kind} data')
  if source.spans or source.splits:
    raise UserError(
      f'--infer-data {path}: one file or a folder of files, not span-<N> or Split-<name> folders'
    )
  sample = data_layout.sample_file(source)  # a folder without files of its kind: one line now
  if kind == cfg.CSV and not cfg.is_remote(sample) and not cfg.is_remote(training.root):
    known = csv_input.csv_header(data_layout.sample_file(training))
    unknown = [column for column in csv_input.csv_header(sample) if column not in known]
    if unknown:
      raise UserError(
        f'--infer-data {sample}: column(s) {", ".join(unknown)} not in --data '
        f'(columns: {", ".join(known)})'
      )
  return source.root, source.pattern
