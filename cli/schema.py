"""`pipeline.py schema`: ExampleGen, StatisticsGen and SchemaGen, and the inferred schema written
out for review (e.g. schema/NAME/schema.pbtxt)."""

import argparse
import dataclasses
import os

from cli import flag_groups, output_folder, prepare_run
import config as cfg
from contracts.errors import EXIT_OK
from utils import atomic

HELP = 'infer a schema from data, to review and commit'
DESCRIPTION = (
  'Run ExampleGen, StatisticsGen and SchemaGen and write the inferred schema for '
  'review (e.g. schema/NAME/schema.pbtxt).'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
  flag_groups.add(parser, *flag_groups.DATA, *flag_groups.OUTPUT, *flag_groups.BEAM)
  parser.add_argument('--out', required=True, help='where to write schema.pbtxt')
  output_folder.add_overwrite(parser, '--out')


def main(args: argparse.Namespace) -> int:
  output_folder.check_new_file('--out', args.out, args.overwrite)
  from cli import run

  config = dataclasses.replace(
    prepare_run.prepare_run(args), pipeline_name=cfg.PIPELINE_NAME + '-schema'
  )
  result = run.run_local(config, schema_only=True)
  code = run.finish(result)
  if code != EXIT_OK:
    return code
  from tfx.dsl.io import fileio

  with fileio.open(os.path.join(result.schema_uri, 'schema.pbtxt'), 'r') as f:
    atomic.write(args.out, f.read())
  print(f'schema written to {args.out}')
  return EXIT_OK
