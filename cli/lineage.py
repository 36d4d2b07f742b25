"""`pipeline.py lineage`: data versions and models in an output folder's ML Metadata, and which
data trained which model (metadata/lineage.py reads them)."""

import argparse
import json
import logging
import os

from cli import output_folder
import config as cfg
from contracts.errors import EXIT_OK, UserError
from utils import atomic

HELP = 'data versions and models in ML Metadata, and which data trained which model'
DESCRIPTION = (
  'Read <output>/metadata.sqlite and list every data version (Examples artifact: '
  'span, version, fingerprint, counts) and every model (trained on, evaluated on, '
  'accuracy, blessed, pushed to). With --model PATH: which data trained the model '
  'pushed to PATH.'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument(
    '--output', default=output_folder.DEFAULT_OUTPUT, help='the run folder (default: %(default)s)'
  )
  parser.add_argument(
    '--model',
    default='',
    metavar='PATH',
    help='a pushed model folder (e.g. output/serving/<version>)',
  )
  parser.add_argument('--json', default='', metavar='OUT', help='also write the answer as JSON')
  output_folder.add_overwrite(parser, '--json')


def main(args: argparse.Namespace) -> int:
  output, model_path, json_path = args.output, args.model, args.json
  logging.getLogger('tensorflow').setLevel(logging.ERROR)  # TFMA's deprecation notes
  output_folder.check_new_file('--json', json_path, args.overwrite)
  store_path = os.path.join(output, cfg.METADATA_FILE)
  if not os.path.isfile(store_path):
    raise UserError(f'{output}: no metadata.sqlite (run the pipeline there first)')
  from metadata import lineage
  from reporting import lineage_text

  report = lineage.trace(store_path)
  if model_path:
    answer = lineage.which_data(report, model_path)
    data = answer['trained_on'] or {}
    print(
      f'model #{answer["model"]["model_id"]} ({answer["model"]["uri"]}) was trained on '
      f'examples #{data.get("examples_id")} ({data.get("uri")}), made by '
      f'{data.get("producer")} from {data.get("source")} (span {data.get("span")}, '
      f'fingerprint {str(data.get("fingerprint"))[:80]})'
      + lineage_text.render_transform(answer['model'])
    )
    report = dict(report, answer=answer)
  else:
    print('\n'.join(lineage_text.render(report)))
  if json_path:
    atomic.write(json_path, json.dumps(report, indent=2))
  return EXIT_OK
