"""TFX's StatisticsGen executor, with the statistics of small data computed in this process
(in_process.py) instead of a Beam pipeline: below `in_process_below_bytes` of tf.Example shards,
without a schema input or stats options (those runs, and larger data, are TFX's own, with live
progress: `StatisticsGen: D of T examples read for statistics, R/s`, counted after TFX's
TFXIORead step of each split, components/beam_progress.py).

The Beam pipeline's fixed cost is most of StatisticsGen's time on small data: on 2 cores,
200,000 CSV rows (37 MB of shards) take TFX's executor ~7 s and this path ~2 s
(bench.statistics_and_evaluation, docs/benchmarks.md). The artifact is TFX's: the same
FeatureStats.pb per split and the same properties.
"""

import logging
import os

from tfx.components.statistics_gen import executor as statistics_gen_executor
from tfx.components.util import examples_utils
from tfx.dsl.io import fileio
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import json_utils

from components import beam_progress
from components.statistics_gen import in_process
from contracts import artifacts
from utils import atomic

IN_PROCESS_BELOW_BYTES = 'in_process_below_bytes'


def split_files(examples, splits) -> dict:
  """{split: its shard files}."""
  return {
    split: sorted(fileio.glob(os.path.join(artifact_utils.get_split_uri([examples], split), '*')))
    for split in splits
  }


def _splits(examples, exec_properties: dict) -> list:
  """The splits StatisticsGen reads (those of the artifact less exclude_splits)."""
  excluded = (
    json_utils.loads(exec_properties.get(standard_component_specs.EXCLUDE_SPLITS_KEY) or 'null')
    or []
  )
  return [s for s in artifact_utils.decode_split_names(examples.split_names) if s not in excluded]


def in_process_splits(examples, exec_properties: dict, has_schema: bool) -> dict:
  """{split: files} when this run's statistics are computed in process, else {}."""
  limit = exec_properties.get(IN_PROCESS_BELOW_BYTES) or 0
  stock_only = (
    has_schema
    or exec_properties.get(standard_component_specs.STATS_OPTIONS_JSON_KEY)
    or exec_properties.get(standard_component_specs.SHARDED_STATS_OUTPUT_KEY)
    or json_utils.loads(
      exec_properties.get(standard_component_specs.SAMPLE_RATE_BY_SPLIT_KEY) or 'null'
    )
    or examples.has_custom_property(examples_utils.CUSTOM_SPLIT_PATTERN_PROPERTY_NAME)
    or examples_utils.get_payload_format(examples) != example_gen_pb2.FORMAT_TF_EXAMPLE
  )
  if not limit or stock_only:
    return {}
  splits = _splits(examples, exec_properties)
  files = split_files(examples, splits)
  size = sum(fileio.stat(path).length for paths in files.values() for path in paths)
  return files if splits and all(files.values()) and size < limit else {}


COMPUTED_BY = 'computed_by'  # the statistics artifact's property: IN_PROCESS or the Beam runner
IN_PROCESS = 'in process (no Beam)'


class Executor(beam_progress.CountedBeamExecutor, statistics_gen_executor.Executor):
  COUNTED_STEPS = ('TFXIORead',)  # TFX's step per split: Arrow record batches
  WEIGH = staticmethod(beam_progress.batch_rows)

  def Do(self, input_dict, output_dict, exec_properties):
    import tensorflow_data_validation as tfdv

    examples = artifact_utils.get_single_instance(input_dict[standard_component_specs.EXAMPLES_KEY])
    has_schema = bool(input_dict.get(standard_component_specs.SCHEMA_KEY))
    files = in_process_splits(examples, exec_properties, has_schema)
    statistics = artifact_utils.get_single_instance(
      output_dict[standard_component_specs.STATISTICS_KEY]
    )
    # Which engine computed them (ML Metadata, the run log): never silently another than asked.
    runner = beam_progress.runner_name(self) if not files else IN_PROCESS
    statistics.set_string_custom_property(COMPUTED_BY, runner)
    logging.info('StatisticsGen: statistics computed by %s', runner)
    if not files:
      return self._counted_beam_do(examples, input_dict, output_dict, exec_properties)
    statistics.split_names = artifact_utils.encode_split_names(list(files))
    statistics.span = examples.span
    statistics.set_string_custom_property(statistics_gen_executor.STATS_DASHBOARD_LINK, '')
    statistics.set_json_value_custom_property(
      statistics_gen_executor.SAMPLE_RATE_BY_SPLIT_PROPERTY_NAME,
      json_utils.dumps({split: 1.0 for split in files}),
    )
    for split, paths in files.items():
      output = artifact_utils.get_split_uri([statistics], split)
      fileio.makedirs(output)
      computed = in_process.split_statistics(paths, tfdv.StatsOptions())
      atomic.write(
        os.path.join(output, statistics_gen_executor.DEFAULT_FILE_NAME),
        computed.SerializeToString(),
      )

  def _counted_beam_do(self, examples, input_dict, output_dict, exec_properties) -> None:
    """TFX's own Do, the examples counted as they are read (a custom split pattern: no count)."""
    if examples.has_custom_property(examples_utils.CUSTOM_SPLIT_PATTERN_PROPERTY_NAME):
      return super().Do(input_dict, output_dict, exec_properties)
    files = split_files(examples, _splits(examples, exec_properties)).values()
    records = lambda: artifacts.record_count([path for paths in files for path in paths])
    with beam_progress.watch(
      self, 'StatisticsGen', records, 'examples read for statistics', outputs=output_dict
    ):
      super().Do(input_dict, output_dict, exec_properties)
