"""`pipeline.py models`: every model version under <output>/serving/: when pushed, by which run
(or rollback), trained on which data, its figures, serving now or not."""

import argparse
import json

from cli import output_folder, runs
from contracts.errors import EXIT_OK
from utils import atomic

HELP = 'every model version under serving/: pushed when and by which run, its data and figures'
DESCRIPTION = (
  'List every version under <output>/serving/, oldest first, joined with ML Metadata: when it '
  'was pushed and by which run (or by `pipeline.py rollback`, with its reason), the model and '
  'the data it was trained on, its headline figure, and which version serves now (the highest '
  'number, as TensorFlow Serving picks).'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
  runs.add_output(parser)
  runs.add_json(parser, 'the versions')


def main(args: argparse.Namespace) -> int:
  output_folder.check_new_file('--json', args.json, args.overwrite)
  facts = runs.gathered(args.output)
  from reporting import runs_text

  print('\n'.join(runs_text.render_models(facts)))
  if args.json:
    atomic.write(args.json, json.dumps(facts['versions'], indent=2, default=str))
  return EXIT_OK
