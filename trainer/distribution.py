"""Which tf.distribute strategy the Trainer uses, decided from its environment, and what follows
from it: the global batch, this worker's shards, mixed precision and XLA.

  TPU configured (--tpu or $TPU_NAME)                   → TPUStrategy, mixed_bfloat16, XLA
  TF_CONFIG lists more than one worker (chief included) → MultiWorkerMirroredStrategy
  one or more GPUs                                      → MirroredStrategy, mixed_float16, XLA
  otherwise                                             → the default strategy (float32, no XLA)

The global batch is the per-replica batch × replicas in sync. With several workers each one reads
a disjoint subset of the training shards (the seed's `filenames.shard(num_workers, index)`), so
tf.data's own auto-sharding is turned off for training; a worker with no shard of its own is an
error, fewer shards than workers a warning (the shard count is ExampleGen's --shard-size-mb).
"""

import dataclasses
import json
import logging
import os
from typing import List

import tensorflow as tf

from contracts.trainer_options import AUTO, TrainerOptions


@dataclasses.dataclass
class Plan:
  strategy: tf.distribute.Strategy
  reason: str
  num_workers: int = 1
  worker_index: int = 0
  mixed_precision: str = 'float32'  # Keras dtype policy name
  jit_compile: bool = False

  @property
  def is_chief(self) -> bool:
    return self.worker_index == 0

  def global_batch(self, per_replica_batch: int) -> int:
    return per_replica_batch * self.strategy.num_replicas_in_sync

  def worker_shards(self, files: List[str]) -> List[str]:
    """This worker's share of `files`: every num_workers-th, starting at its index."""
    if self.num_workers == 1:
      return list(files)
    if len(files) < self.num_workers:
      logging.warning(
        '%d training shards for %d workers: some workers read nothing. Write more '
        'shards (pipeline.py run --shard-size-mb smaller)',
        len(files),
        self.num_workers,
      )
    mine = list(files)[self.worker_index :: self.num_workers]
    if not mine:
      raise ValueError(
        f'worker {self.worker_index} of {self.num_workers} has no training shard '
        f'({len(files)} shards)'
      )
    logging.info(
      'worker %d of %d reads %d of %d training shards: %s',
      self.worker_index,
      self.num_workers,
      len(mine),
      len(files),
      ', '.join(mine),
    )
    return mine


def _cluster():
  """(number of workers, this worker's index) from TF_CONFIG (chief first, then workers)."""
  tf_config = json.loads(os.environ.get('TF_CONFIG') or '{}')
  cluster, task = tf_config.get('cluster', {}), tf_config.get('task', {})
  members = [('chief', i) for i in range(len(cluster.get('chief', [])))] + [
    ('worker', i) for i in range(len(cluster.get('worker', [])))
  ]
  me = (task.get('type'), task.get('index', 0))
  return len(members), (members.index(me) if me in members else 0)


def _setting(value, automatic):
  return automatic if value in (AUTO, None, '') else value


def plan(options: TrainerOptions) -> Plan:
  """Chooses the strategy and logs which one and why."""
  tpu = options.tpu or os.environ.get('TPU_NAME')
  workers, index = _cluster()
  gpus = tf.config.list_physical_devices('GPU')
  if tpu:
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    chosen = Plan(
      tf.distribute.TPUStrategy(resolver),
      f'TPU {tpu!r} configured',
      mixed_precision=_setting(options.mixed_precision, 'mixed_bfloat16'),
      jit_compile=_setting(options.xla, True),
    )
  elif workers > 1:
    chosen = Plan(
      tf.distribute.MultiWorkerMirroredStrategy(),
      f'TF_CONFIG lists {workers} workers; this is worker {index}',
      workers,
      index,
      mixed_precision=_setting(options.mixed_precision, 'mixed_float16' if gpus else 'float32'),
      jit_compile=_setting(options.xla, bool(gpus)),
    )
  elif gpus:
    chosen = Plan(
      tf.distribute.MirroredStrategy(),
      f'{len(gpus)} GPU(s) visible',
      mixed_precision=_setting(options.mixed_precision, 'mixed_float16'),
      jit_compile=_setting(options.xla, True),
    )
  else:
    chosen = Plan(
      tf.distribute.get_strategy(),
      'no TPU, no GPU, no multi-worker TF_CONFIG',
      mixed_precision=_setting(options.mixed_precision, 'float32'),
      jit_compile=_setting(options.xla, False),
    )
  logging.info(
    'distribution: %s (%s); %d replica(s) in sync; mixed precision %s; XLA %s',
    strategy_name(chosen.strategy),
    chosen.reason,
    chosen.strategy.num_replicas_in_sync,
    chosen.mixed_precision,
    'on' if chosen.jit_compile else 'off',
  )
  return chosen


def strategy_name(strategy: tf.distribute.Strategy) -> str:
  """The name users know (MultiWorkerMirroredStrategy's class is CollectiveAllReduceStrategy)."""
  name = type(strategy).__name__
  return {
    'CollectiveAllReduceStrategy': 'MultiWorkerMirroredStrategy',
    '_DefaultDistributionStrategy': 'default strategy',
  }.get(name, name)


def without_auto_shard(dataset: tf.data.Dataset) -> tf.data.Dataset:
  """Training data is already sharded by file (Plan.worker_shards)."""
  options = tf.data.Options()
  options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
  return dataset.with_options(options)


def chief_or_scratch(path: str, chosen: Plan, scratch: str) -> str:
  """Where this worker writes: `path` on the chief, a throw-away folder on the others (every
  worker must save, because saving reads the mirrored variables collectively)."""
  return path if chosen.is_chief else os.path.join(scratch, f'worker-{chosen.worker_index}')
