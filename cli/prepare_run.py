"""What a local run does before its pipeline is built, in one step: `run` (every run of `run
--watch` too) and `schema` take their config from here. cli/config_builder.build_config only
reads; what stages, writes or locks is here, in this order:

1. --data-rev: the data at that revision staged below the output (the config is built from it);
2. the config built (config_builder.build_config);
3. the output folders made and proven writable;
4. the output's lock taken (one run per output), then its ML Metadata store checked;
5. the embedded digits written (no --data), or a damaged TFRecord input's intact records copied
   below the output and read from there;
6. the data's index (utils/data_index.py) brought up to date, so that building the DAG, which puts
   the data's content in the ExampleGens' cache keys (cache_keys.py), only reads it.

`compile` has nothing of this to do: its config (cli/compile.compile_config) reads only, and the
data and outputs are the cluster's.
"""

import argparse
import dataclasses
import os

from cli import config_builder, output_folder, output_lock
from cli.inputs import data_layout, default_data, tfrecord_salvage
import config as cfg
from contracts.errors import UserError
from utils import data_index


def prepare_run(args: argparse.Namespace) -> cfg.PipelineConfig:
  """The config of a local run, with everything done that it needs before its pipeline is
  built (raising UserError, one line, for bad input)."""
  revision = {}
  if getattr(args, 'data_rev', ''):
    args, revision = _staged_revision(args)
  config = config_builder.build_config(args)
  if revision:
    config = dataclasses.replace(config, **revision)
  output_folder.check_output(args.output)
  if cfg.is_remote(config.output):
    output_folder.check_output(getattr(args, 'local_dir', '') or config.local_dir)
  output_lock.hold(config.local_dir, f'--output {config.output}', wait=getattr(args, 'wait', False))
  output_folder.check_metadata(config.metadata_path)
  if not args.data:
    default_data.write_digits(config.data)
  elif config.data_kind in (cfg.TFRECORDS, cfg.SEQUENCES):  # damaged records: intact copies
    source = data_layout.DataSource(
      cfg.TFRECORDS, config.data, config.data_pattern, splits=config.data_splits
    )
    salvaged, _ = tfrecord_salvage.salvage_tfrecords(
      source, os.path.join(config.local_dir, tfrecord_salvage.SALVAGED_INPUT)
    )
    config = dataclasses.replace(config, data=salvaged.root)
  _index(config)
  return config


def _staged_revision(args: argparse.Namespace):
  """--data-rev: (args reading the staged copy, the config fields that say where it is from)."""
  from data_revisions import revision

  if not args.data:
    raise UserError('--data-rev needs --data: a path inside a git repository under DVC')
  remote = cfg.is_remote(args.output)
  local = (
    (getattr(args, 'local_dir', '') or output_folder.local_state_dir(args.output))
    if remote
    else args.output
  )
  staged, _ = revision.stage(
    args.data, args.data_rev, revision.staging_folder(os.path.abspath(local))
  )
  source = dict(data_rev=args.data_rev, data_source=os.path.abspath(args.data))
  return argparse.Namespace(**dict(vars(args), data=staged)), source


def _index(config: cfg.PipelineConfig) -> None:
  """The index of the local data and --infer-data, as the DAG's cache keys will read it."""
  index = os.path.join(config.local_dir, data_index.INDEX_FILE)
  for path, patterns in (
    (config.data, config.read_patterns()),
    (config.infer_data, config.read_patterns(unlabeled=True)),
  ):
    if path and not cfg.is_remote(path):
      data_index.digest(path, index, patterns)
