"""TextExampleGen: CSV files with a label and a free-text column → SequenceExample TFRecords.

A FileBasedExampleGen like ImageExampleGen (TFX's driver fingerprints the files and resolves
{SPAN}/{VERSION}); the executor tokenizes, builds the vocabulary on the train split and writes
one SequenceExample per row (text.py).
"""

from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.proto import example_gen_pb2

from components import file_based
from components.text_example_gen import executor

MAX_VOCABULARY = 20_000
MIN_COUNT = 2  # a word seen once in the train split is out of vocabulary


class TextExampleGenSpec(file_based.ExampleGenSpec):
  """FileBasedExampleGen's parameters plus the text options."""

  PARAMETERS = file_based.spec_parameters(
    label_column=str,
    text_column=str,
    eval_percent=int,
    shard_size_mb=float,
    max_vocabulary=int,
    min_count=int,
    duplicates=str,
  )


class TextExampleGen(FileBasedExampleGen):
  """Text CSV → `Split-{train,eval}/data-NNNNN-of-NNNNN` SequenceExample shards + vocabulary."""

  SPEC_CLASS = TextExampleGenSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

  def __init__(
    self,
    input_base: str,
    pattern: str,
    label_column: str,
    text_column: str,
    eval_percent: int = 20,
    shard_size_mb: float = 256.0,
    max_vocabulary: int = MAX_VOCABULARY,
    min_count: int = MIN_COUNT,
    span: int = 0,
    duplicates: str = 'group',
    code_fingerprint: str = '',
  ):
    """Args:
    input_base: folder of the CSV files.
    pattern: the files under input_base ('*.csv', 'reviews.csv', 'span-{SPAN}/*.csv').
    label_column, text_column: CSV header names.
    eval_percent: share of rows (by a hash of their words) in the eval split.
    shard_size_mb: target size of one shard; small data gives one shard per split.
    max_vocabulary, min_count: the vocabulary keeps the most frequent train-split words.
    span: with {SPAN} in the pattern, read span N; 0 = the latest.
    duplicates: components/duplicates.py MODES: the same words under two labels are left out
      ('group'), kept ('keep-conflicts'), or rows split by file and line ('off').
    code_fingerprint: the executor's code (utils/fingerprint.py), for the cache key.
    """
    spec = TextExampleGenSpec(
      **file_based.spec_arguments(
        input_base,
        'rows',
        pattern,
        span,
        example_gen_pb2.FORMAT_TF_SEQUENCE_EXAMPLE,
        eval_percent,
        gzip=False,  # executor.py writes plain TFRecords
      ),
      label_column=label_column,
      text_column=text_column,
      eval_percent=eval_percent,
      shard_size_mb=float(shard_size_mb),
      max_vocabulary=max_vocabulary,
      min_count=min_count,
      duplicates=duplicates,
      code_fingerprint=code_fingerprint,
    )
    # FileBasedExampleGen.__init__ would build the stock spec; ours carries the text options.
    base_beam_component.BaseBeamComponent.__init__(self, spec=spec)
