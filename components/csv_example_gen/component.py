"""ArrowCsvExampleGen: TFX's CsvExampleGen's tf.Examples, written with Arrow (csv_ranges.py,
type_inference.py, example_encoding.py); StockCsvExampleGen: TFX's CsvExampleGen itself
(`--csv-reader tfx`), with live progress (stock_executor.py).

FileBasedExampleGens like the stock one: the same input_config / output_config / range_config,
TFX's FileBasedDriver (fingerprint of the files, {SPAN}/{VERSION}) and a standard Examples
artifact (split names, payload and file format), so every downstream component stays stock.
"""

import json
from typing import Optional, Sequence

from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.proto import example_gen_pb2, range_config_pb2

from components import file_based
from components.csv_example_gen import executor, stock_executor


class ArrowCsvExampleGenSpec(file_based.ExampleGenSpec):
  """FileBasedExampleGen's parameters plus the shard compression."""

  PARAMETERS = file_based.spec_parameters(
    compression=str, label_key=str, label_default=str, id_columns=str, duplicates=str
  )


class ArrowCsvExampleGen(FileBasedExampleGen):
  """CSV files → `Split-<name>/data-NNNNN-of-NNNNN[.gz]` tf.Example shards."""

  SPEC_CLASS = ArrowCsvExampleGenSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

  def __init__(
    self,
    input_base: str,
    input_config: example_gen_pb2.Input,
    output_config: example_gen_pb2.Output,
    range_config: Optional[range_config_pb2.RangeConfig] = None,
    compression: str = 'none',
    label_key: str = '',
    id_columns: Sequence[str] = (),
    duplicates: str = 'group',
    code_fingerprint: str = '',
    label_default: str = '',
  ):
    """Args:
    input_base, input_config, output_config, range_config: as for TFX's CsvExampleGen (one
      input split and a hash split in output_config, or one input split per output split).
    compression: 'none' or 'gzip' shards.
    label_key, id_columns: columns left out of a row's content (components/duplicates.py);
    label_default: what a row without a label takes ('': such rows stop the run,
      components/label_gaps.py);
    duplicates: duplicates.MODES.
    code_fingerprint: the executor's code (utils/fingerprint.py), for the cache key.
    """
    spec = ArrowCsvExampleGenSpec(
      compression=compression,
      label_key=label_key,
      label_default=label_default,
      id_columns=json.dumps(list(id_columns)),
      duplicates=duplicates,
      code_fingerprint=code_fingerprint,
      **file_based.given_arguments(
        input_base, input_config, output_config, range_config, compression == 'gzip'
      ),
    )
    # FileBasedExampleGen.__init__ would build the stock spec; ours carries the compression.
    base_beam_component.BaseBeamComponent.__init__(self, spec=spec)


class StockCsvExampleGen(file_based.StockExampleGen):
  """TFX's CsvExampleGen, with live progress."""

  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(stock_executor.Executor)
