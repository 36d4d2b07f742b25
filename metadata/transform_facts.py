"""What a run's Transform (`run --module-file`: the user's `preprocessing_fn`) computed, for the
run report's Transform section: read from the transform graph artifact and the statistics
Transform wrote, as plain values. None for a run without a `Transform` node.

  features      the transformed features (transformed_metadata/schema.pbtxt): name, type, the
                domain the schema gives (a vocabulary's or bucket's ids), and the moments and
                range of their values (post_transform_stats, train first)
  vocabularies  the vocabulary files the analyzers wrote (transform_fn/assets): name, entries
  raw           the raw features Transform read (metadata/schema.pbtxt): name, type
"""

import os
from typing import Dict, List, NamedTuple, Optional

TRANSFORM_NODE = 'Transform'  # the node id of TFX's Transform in a module-file run's DAG
TRANSFORM_GRAPH = 'transform_graph'
TRANSFORMED_SCHEMA = os.path.join('transformed_metadata', 'schema.pbtxt')
RAW_SCHEMA = os.path.join('metadata', 'schema.pbtxt')
ASSETS = os.path.join('transform_fn', 'assets')
POST_STATISTICS = 'post_transform_stats'
MODULE_PATH, MODULE_FILE = 'module_path', 'module_file'  # TFX's execution properties


class TransformFacts(NamedTuple):
  state: str  # COMPLETE, CACHED, FAILED, …
  seconds: Optional[float]  # the execution's wall time (None for a cached one: no work done)
  graph_uri: str  # the transform graph artifact ('' when Transform wrote none)
  features: List[dict]  # {'name', 'type', 'domain', 'mean', 'std', 'min', 'max'}
  vocabularies: List[dict]  # {'name', 'size'}
  raw: List[dict]  # {'name', 'type'}
  module: str  # the user's module as the execution recorded it (module_of; '' if none)


def _schema(path: str):
  from tensorflow_metadata.proto.v0 import schema_pb2
  from tfx.dsl.io import fileio
  from tfx.utils import io_utils

  if not fileio.exists(path):
    return None
  return io_utils.parse_pbtxt_file(path, schema_pb2.Schema())


def _type(feature) -> str:
  from tensorflow_metadata.proto.v0 import schema_pb2

  return schema_pb2.FeatureType.Name(feature.type).lower()


def _domain(feature) -> str:
  kind = feature.WhichOneof('domain_info')
  if kind == 'int_domain':
    d = feature.int_domain
    return f'{d.min}..{d.max}' + (' (categorical)' if d.is_categorical else '')
  if kind == 'float_domain':
    d = feature.float_domain
    return f'{d.min:g}..{d.max:g}'
  return ''


def _moments(node) -> Dict[str, Dict[str, float]]:
  """Feature → {'mean', 'std', 'min', 'max'} of the transformed values (numeric only)."""
  import tensorflow_data_validation as tfdv
  from tfx.dsl.io import fileio

  statistics = node.outputs.get(POST_STATISTICS)
  if statistics is None:
    return {}
  paths = sorted(fileio.glob(os.path.join(statistics.uri, '**FeatureStats.pb')))
  paths = paths or sorted(fileio.glob(os.path.join(statistics.uri, '*', 'FeatureStats.pb')))
  if not paths:
    return {}
  paths.sort(key=lambda p: 'train' not in p)
  found = {}
  for feature in tfdv.load_stats_binary(paths[0]).datasets[0].features:
    if feature.HasField('num_stats'):
      n = feature.num_stats
      name = feature.path.step[0] if feature.path.step else feature.name
      found[name] = {'mean': n.mean, 'std': n.std_dev, 'min': n.min, 'max': n.max}
  return found


def _vocabularies(graph_uri: str) -> List[dict]:
  from tfx.dsl.io import fileio

  folder = os.path.join(graph_uri, ASSETS)
  if not fileio.exists(folder):
    return []
  found = []
  for name in sorted(fileio.listdir(folder)):
    with fileio.open(os.path.join(folder, name), 'rb') as f:
      found.append({'name': name, 'size': sum(1 for line in f if line.strip())})
  return found


def _seconds(execution) -> Optional[float]:
  if execution is None or not execution.last_update_time_since_epoch:
    return None
  return (execution.last_update_time_since_epoch - execution.create_time_since_epoch) / 1000


def gather(nodes) -> Optional[TransformFacts]:
  """The facts of the run's `Transform` node (run_reader.run_nodes); None when it has none."""
  node = nodes.get(TRANSFORM_NODE)
  if node is None:
    return None
  graph = node.outputs.get(TRANSFORM_GRAPH)
  uri = graph.uri if graph is not None else ''
  transformed = _schema(os.path.join(uri, TRANSFORMED_SCHEMA)) if uri else None
  raw = _schema(os.path.join(uri, RAW_SCHEMA)) if uri else None
  moments = _moments(node)
  features = [
    {'name': f.name, 'type': _type(f), 'domain': _domain(f), **moments.get(f.name, {})}
    for f in (transformed.feature if transformed is not None else ())
  ]
  execution = node.execution
  cached = node.state == 'CACHED'
  return TransformFacts(
    state=node.state,
    seconds=None if cached else _seconds(execution),
    graph_uri=uri,
    features=features,
    vocabularies=_vocabularies(uri) if uri else [],
    raw=[{'name': f.name, 'type': _type(f)} for f in (raw.feature if raw is not None else ())],
    module=module_of(execution),
  )


def module_of(execution) -> str:
  """The module file an execution of Transform, Trainer or Tuner ran: TFX records
  `module_path` 'MODULE@WHEEL' (the user code packed as a wheel whose version carries its
  content hash) or `module_file`: 'MODULE (code HASH)' or the file; '' when none."""
  from metadata.run_reader import property_value

  if execution is None:
    return ''
  path = str(property_value(execution, MODULE_PATH) or '')
  if '@' in path:
    module, wheel = path.split('@', 1)
    digest = os.path.basename(wheel).split('+', 1)[1][:12] if '+' in wheel else ''
    return f'{module} (code {digest})' if digest else module
  return path or str(property_value(execution, MODULE_FILE) or '')
