"""TFRecord pipeline: images, CSV or TFRecords → validated, sharded TFRecords → a trained,
evaluated and pushed model, locally or compiled for Kubeflow Pipelines / Vertex AI.

  .venv/bin/python pipeline.py run [--data PATH] [--output DIR] [--train-steps N] ...
  .venv/bin/python pipeline.py schema --data PATH --out schema/NAME/schema.pbtxt
  .venv/bin/python pipeline.py verify PATH... [--repair OUT_DIR]
  .venv/bin/python pipeline.py lineage [--output DIR] [--model output/serving/VERSION]
  .venv/bin/python pipeline.py compare [RUN_A [RUN_B]] [--output DIR] [--json FILE] [--html FILE]
  .venv/bin/python pipeline.py runs [--output DIR] [--json FILE] [--html]
  .venv/bin/python pipeline.py models [--output DIR] [--json FILE]
  .venv/bin/python pipeline.py rollback VERSION [--output DIR] [--reason TEXT]
  .venv/bin/python pipeline.py predict --data PATH [--output DIR] [--model DIR] [--out FILE] [--log DIR]
  .venv/bin/python pipeline.py monitor --serving-data PATH [--output DIR] [--skew-threshold [FEATURE=]X]
  .venv/bin/python pipeline.py compile --pipeline-root gs://B/root --data gs://B/images [--image IMG]
  .venv/bin/python pipeline.py submit --target vertex --project P --region R [--dry-run]
  .venv/bin/python pipeline.py submit --target kubeflow --host http://HOST:PORT [--dry-run]

Without --data, `run` uses the embedded default: scikit-learn's 1,797 8×8 digits written out
as a class-per-folder PNG tree under <output>/default_data/digits.

One sub-command per module of cli/, each owning its flags and its code. Command modules import TensorFlow and TFX only when they run, so that `--help` and bad-input
errors answer at once.
"""

import argparse
import logging
import os
import sys
from typing import List, Optional
import warnings

from cli import (
  compare,
  lineage,
  models,
  monitor,
  predict,
  rollback,
  run,
  runs,
  schema,
  submit,
  verify,
)
from cli import compile as compile_command
from contracts.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, INTERRUPTED, UserError

COMMANDS = {
  'run': run,
  'schema': schema,
  'verify': verify,
  'lineage': lineage,
  'compare': compare,
  'runs': runs,
  'models': models,
  'rollback': rollback,
  'predict': predict,
  'monitor': monitor,
  'compile': compile_command,
  'submit': submit,
}


def parser(command: Optional[str] = None) -> argparse.ArgumentParser:
  """The command line's parser; given the `command` about to be parsed, only that command's
  flags are declared (the others' names and one-line help are all `--help` needs)."""
  top = argparse.ArgumentParser(
    prog='pipeline.py',
    description=__doc__.split('\n\nOne sub-command')[0],
    formatter_class=argparse.RawDescriptionHelpFormatter,
  )
  commands = top.add_subparsers(dest='command', required=True, metavar='COMMAND')
  for name, module in COMMANDS.items():
    sub = commands.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
    if command not in COMMANDS or name == command:
      module.add_arguments(sub)
  return top


def quiet_start_up() -> None:
  """Library chatter while data and options are checked, before the run log exists (cli/run.py
  sends the rest to the log): TensorFlow's C++ start-up lines (CUDA probes, also in Beam's
  worker processes, which inherit the setting), Google client FutureWarnings."""
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
  warnings.filterwarnings('ignore', category=FutureWarning)
  warnings.filterwarnings('ignore', category=DeprecationWarning)


def main(argv: Optional[List[str]] = None) -> int:
  argv = sys.argv[1:] if argv is None else argv
  args = parser(argv[0] if argv else None).parse_args(argv)
  quiet_start_up()
  try:
    return COMMANDS[args.command].main(args)
  except UserError as e:
    print(f'error: {e}', file=sys.stderr)
    return EXIT_BAD_INPUT
  except KeyboardInterrupt:  # other commands; `run` after its pipeline (cli/run.py: till then)
    print(INTERRUPTED, file=sys.stderr)
    return EXIT_INTERRUPTED


def exit_with(code: int) -> None:
  """Exits with `code`; after TensorFlow I/O's S3 client was used, without the interpreter's
  teardown, which that client aborts ("pure virtual method called")."""
  if 'tensorflow_io' in sys.modules:
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
  sys.exit(code)
