"""ImportExampleGen: TFX's (TFRecord input), with live progress (executor.py); TFX's parameters
(payload_format: tf.Example or SequenceExample records) plus the code fingerprint."""

from tfx.dsl.components.base import executor_spec

from components import file_based
from components.import_example_gen import executor


class ImportExampleGen(file_based.StockExampleGen):
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)
