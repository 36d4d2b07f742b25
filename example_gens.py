"""Which ExampleGen reads the data, as pipeline.py's DAG starts: the project's ImageExampleGen /
TextExampleGen, or TFX's CSV / Import ones (the Arrow CSV reader by default), with their cache
keys (cache_keys.data_fingerprint: the local data by content)."""

import dataclasses
import functools

from tfx.proto import example_gen_pb2

import cache_keys
from components import file_based
from components.csv_example_gen.component import ArrowCsvExampleGen, StockCsvExampleGen
from components.image_example_gen.component import ImageExampleGen
from components.import_example_gen.component import ImportExampleGen
from components.text_example_gen.component import TextExampleGen
import config as cfg
from contracts import splits


def example_gen_for(config: cfg.PipelineConfig, data=None, unlabeled: bool = False):
  """Data in: the project's ImageExampleGen / TextExampleGen, or TFX's CSV / Import ones.
  data: where from (a pipeline parameter when compiled); default config.data. unlabeled:
  --infer-data's (config.infer_data, .infer_pattern), in one split, splits.INFER."""
  data = config.data if data is None else data
  if unlabeled:
    config = dataclasses.replace(
      config,
      data_pattern=config.infer_pattern,
      data_splits=((splits.INFER, config.infer_pattern),),
      span=0,
    )
  with_data = functools.partial(cache_keys.data_fingerprint, config, data)
  project_own = dict(  # what the project's own ExampleGens (text, images) take alike
    input_base=data,
    pattern=config.data_pattern,
    span=config.span,
    eval_percent=config.eval_percent,
    shard_size_mb=config.shard_size_mb,
    duplicates=config.duplicates,
  )
  if config.data_kind == cfg.TEXT:
    return TextExampleGen(
      **project_own,
      label_column=config.label,
      text_column=config.text_column,
      code_fingerprint=with_data('components.text_example_gen.executor'),
    )
  if config.data_kind == cfg.IMAGES:
    return ImageExampleGen(
      **project_own,
      encoding=config.encoding,
      compression=config.compression,
      max_image_side=config.max_image_side,
      unlabeled_split=splits.INFER if unlabeled else '',
      code_fingerprint=with_data('components.image_example_gen.executor'),
    )
  if config.data_splits:  # already split (Split-<name> folders): kept as they are
    input_config = example_gen_pb2.Input(
      splits=[
        example_gen_pb2.Input.Split(name=name, pattern=pattern)
        for name, pattern in config.data_splits
      ]
    )
    output_config = example_gen_pb2.Output()
  else:
    input_config = example_gen_pb2.Input(
      splits=[example_gen_pb2.Input.Split(name='single_split', pattern=config.data_pattern)]
    )
    output_config = file_based.output_config(config.eval_percent)
  files = dict(
    input_base=data,
    input_config=input_config,
    output_config=output_config,
    range_config=file_based.span_range(config.span),
  )
  grouping = dict(  # unlabeled data: no label to check (components/label_gaps.py)
    label_key='' if unlabeled else config.label,
    label_default=config.trainer.label_default,
    id_columns=config.id_columns,
    duplicates=config.duplicates,
  )
  if config.data_kind == cfg.CSV and config.csv_reader == cfg.ARROW_CSV:
    arrow = ArrowCsvExampleGen(
      **files,
      **grouping,
      compression=config.compression,
      code_fingerprint=with_data('components.csv_example_gen.executor'),
    ).with_id('CsvExampleGen')  # the stock one's id: paths, reports and caches stay
    if config.csv_direct_running_mode and config.beam_runner == cfg.DIRECT_RUNNER:
      mode = config.csv_direct_running_mode
      workers = cfg.direct_num_workers(mode, config.beam_direct_num_workers)
      arrow.with_beam_pipeline_args(
        [f'--direct_running_mode={mode}', f'--direct_num_workers={workers}']
      )
    return arrow
  if config.data_kind == cfg.CSV:
    return StockCsvExampleGen(
      **files,
      **grouping,
      code_fingerprint=with_data('components.csv_example_gen.stock_executor'),
    ).with_id('CsvExampleGen')
  return ImportExampleGen(
    **files,
    **grouping,
    payload_format=(
      example_gen_pb2.FORMAT_TF_SEQUENCE_EXAMPLE
      if config.data_kind == cfg.SEQUENCES
      else example_gen_pb2.FORMAT_TF_EXAMPLE
    ),
    code_fingerprint=with_data('components.import_example_gen.executor'),
  )
