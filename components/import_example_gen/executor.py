"""TFX's ImportExampleGen executor (TFRecord input) with live progress: `ImportExampleGen: D of T
records imported, R/s`, counted after TFX's InputToRecord step (components/beam_progress.py) of
the records tf.data counts in the input files first (GZIP by their .gz name, as TFX reads them)."""

from tfx.components.example_gen.import_example_gen import executor as import_executor

from components import beam_progress, file_based, grouped_split, label_gaps
from contracts import artifacts


class Executor(
  label_gaps.LabelGapsExecutor,
  grouped_split.GroupedSplitExecutor,
  beam_progress.CountedBeamExecutor,
  import_executor.Executor,
):
  COUNTED_STEPS = ('InputToRecord',)  # TFX's step (per input split): one record each

  def Do(self, input_dict, output_dict, exec_properties):
    records = lambda: artifacts.record_count(file_based.input_files(exec_properties))
    with beam_progress.watch(
      self, 'ImportExampleGen', records, 'records imported', outputs=output_dict
    ):
      super().Do(input_dict, output_dict, exec_properties)
