"""--beam-runner's needs: the Beam arguments a runner must be given, and FlinkRunner's or
SparkRunner's arguments resolved against their cluster."""

import argparse

import config as cfg
from contracts.errors import UserError

ENGINE_MASTERS = {  # runner → (its flag, dest, the Beam flag that may name it instead, example)
  cfg.FLINK_RUNNER: ('--flink-master', 'flink_master', '--flink_master', 'localhost:8081'),
  cfg.SPARK_RUNNER: (
    '--spark-master',
    'spark_master',
    '--spark_master_url',
    'spark://localhost:7077',
  ),
}


def engine_args(args: argparse.Namespace) -> list:
  """FlinkRunner's or SparkRunner's arguments, resolved against the cluster (which must answer:
  one line, exit 2, within seconds when it does not); [] for the other runners."""
  for runner, (flag, dest, _, _) in ENGINE_MASTERS.items():
    if getattr(args, dest, '') and args.beam_runner != runner:
      raise UserError(f'{flag} goes with --beam-runner {runner}')
  if args.beam_runner not in ENGINE_MASTERS:
    return []
  flag, dest, beam_flag, example = ENGINE_MASTERS[args.beam_runner]
  extra = getattr(args, 'beam_extra_args', [])
  given = [a.split('=', 1)[1] for a in extra if a.startswith(beam_flag + '=')]
  master = getattr(args, dest, '') or (given[-1] if given else '')
  if not master:
    raise UserError(
      f'--beam-runner {args.beam_runner} needs {flag} (the local cluster of '
      f'`make {args.beam_runner[:-6].lower()}-up`: {example})'
    )
  from engines import beam_args, common

  try:
    return beam_args.engine_args(args.beam_runner, master, args.beam_parallelism)
  except common.EngineError as e:
    raise UserError(f'{flag} {master}: {e}') from None


def command_engine_args(args: argparse.Namespace, beam_extra_args: list) -> list:
  """engine_args for a command with its own Beam flags (predict, monitor)."""
  return engine_args(argparse.Namespace(**dict(vars(args), beam_extra_args=beam_extra_args)))


def check_needed_args(args: argparse.Namespace) -> None:
  """Runners that need Beam flags of their own (cfg.RUNNER_NEEDS) have them in --beam-arg."""
  missing = [
    flag
    for flag in cfg.RUNNER_NEEDS.get(args.beam_runner, ())
    if not any(arg.startswith(flag + '=') for arg in args.beam_extra_args)
  ]
  if missing:
    raise UserError(
      f'--beam-runner {args.beam_runner} needs '
      + ' '.join(f'--beam-arg={flag}=…' for flag in missing)
    )
