"""The shared flags in the groups the commands declare together (DATA, OUTPUT, BEAM, TRAINING, …),
in their --help order, and their declaration on a parser from flags.OPTIONS, with a command's own
changes."""

import argparse

from cli.flags import OPTIONS
import config as cfg

INFER = ('--infer-data',)
DATA = (
  '--data',
  '--label',
  '--text-column',
  '--tokens-key',
  '--label-threshold',
  '--task',
  '--label-default',
  '--date-order',
  '--eval-percent',
  '--duplicates',
  '--id-column',
  '--encoding',
  '--compression',
  '--csv-reader',
  '--shard-size-mb',
  '--max-image-side',
  '--span',
  '--data-rev',
)
OUTPUT = ('--output', '--local-dir', '--wait')
BEAM = (
  '--beam-runner',
  '--flink-master',
  '--spark-master',
  '--beam-parallelism',
  '--beam-arg',
  '--beam-mode',
  '--beam-workers',
)
TRAINING = (
  '--schema',
  '--model',
  '--module-file',
  '--weights',
  '--fine-tune-steps',
  '--fine-tune-layers',
  '--tune-trials',
  '--tune-steps',
  '--train-steps',
  '--eval-steps',
  '--batch-size',
  '--learning-rate',
  '--loss',
  '--mixed-precision',
  '--xla',
  '--tpu',
  '--seed',
  '--augment',
  '--input-cache',
  '--input-accessor',
  '--tabular-stats',
  '--image-size',
  '--image-channels',
  '--min-accuracy',
  '--max-accuracy-drop',
  '--min-class-recall',
  '--allow-missed-classes',
  '--min-eval-examples',
  '--min-eval-class-examples',
  '--min-improvement',
  '--max-mae',
  '--max-rmse',
  '--max-error-increase',
  '--allow-feature',
  '--slice-feature',
  '--max-damaged-percent',
  '--no-cache',
  '--input-service',
)


def add(parser: argparse.ArgumentParser, *flags: str, **changes: dict) -> None:
  """Declares `flags` on `parser`; changes['no_cache'] = {...} adjusts one flag's keywords."""
  for flag in flags:
    parser.add_argument(flag, **{**OPTIONS[flag], **changes.get(flag[2:].replace('-', '_'), {})})


def add_engine_flags(parser: argparse.ArgumentParser, what: str) -> None:
  """--beam-runner (the DirectRunner or a cluster), --flink-master, --spark-master and
  --beam-parallelism for a command whose own Beam pipeline runs `what`."""
  add(
    parser,
    '--beam-runner',
    '--flink-master',
    '--spark-master',
    '--beam-parallelism',
    beam_runner=dict(
      choices=(cfg.DIRECT_RUNNER, cfg.FLINK_RUNNER, cfg.SPARK_RUNNER),
      help=f'where {what} runs (default: %(default)s; a cluster: no progress line while it runs)',
    ),
  )
