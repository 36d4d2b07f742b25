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
  from engines import common, flink_args, spark_args

  resolve = {cfg.FLINK_RUNNER: flink_args.flink_args, cfg.SPARK_RUNNER: spark_args.spark_args}
  try:
    resolved = resolve[args.beam_runner](master, args.beam_parallelism)
    cluster = flink_args.local_cluster(master) if args.beam_runner == cfg.FLINK_RUNNER else {}
  except common.EngineError as e:
    raise UserError(f'{flag} {master}: {e}') from None
  if cluster.get('containers'):
    _check_cluster_sees(args, master)
  return resolved


# What a command names that the Beam workers read or write: (its flag, its argparse dest).
WORKER_PATHS = (('--data', 'data'), ('--output', 'output'), ('--serving-data', 'serving_data'))


def _check_cluster_sees(args: argparse.Namespace, master: str) -> None:
  """The containerised cluster's workers see object storage only: a local path they would read
  or write is refused here, before anything runs (rather than Examples silently lost)."""
  if args.command in ('predict', 'monitor'):
    raise UserError(
      f'{args.command} on the containerised Flink cluster at {master} is not supported yet (its '
      'workers cannot see the files it lists here): run it on the DirectRunner or on `make flink-up`'
    )
  if not getattr(args, 'data', ''):
    raise UserError(
      f'--flink-master {master}: the containerised cluster cannot see the default data on this '
      'machine; give --data on s3:// (`python -m engines.flink_containers put DATA` uploads it)'
    )
  for flag, dest in WORKER_PATHS:
    path = getattr(args, dest, '') or ''
    if path and not cfg.is_remote(path):
      raise UserError(
        f'{flag} {path}: the Flink cluster at {master} runs in containers that cannot see this '
        f"machine's files; put it on s3:// (`python -m engines.flink_containers put {path}` "
        "uploads data to the cluster's S3 server; --output s3://runs/NAME)"
      )


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
