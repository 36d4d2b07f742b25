"""Live progress inside Beam executors that have no hook for it (TFX's CsvExampleGen,
ImportExampleGen, StatisticsGen's Beam path and BulkInferrer; the project's TextExampleGen): their
pipeline counts the elements that come out of the steps they label, in whichever process runs
them, and watch() shows the sum of every process's count (utils.progress.CountsProgress).

An executor mixes in CountedBeamExecutor and names the top-level steps to count after
(`COUNTED_STEPS`: 'RunInference' counts after 'RunInference' and 'RunInference[<split>]') and
what one element weighs (`WEIGH`: 1 per element, or the rows of an Arrow record batch). Its
pipeline (CountingPipeline) then applies a counting step after each: the step passes every
element on unchanged and adds its weight to this process's count, written at the end of every
bundle, so the last line is the exact sum. The labels are TFX 1.16's: the tests of each
executor check that its progress line reaches the total.
"""

import contextlib
import logging
from typing import Callable, Dict, Tuple
import uuid

import apache_beam as beam

from contracts import artifacts
from utils import progress


def node_id(executor, default: str) -> str:
  """The component's id in the running pipeline (`default` outside one: a test's executor)."""
  context = getattr(executor, '_context', None)
  node = context and context.pipeline_node
  return node.node_info.id if node else default


@contextlib.contextmanager
def watch(
  executor,
  default_node: str,
  count: Callable[[], int],
  what: str,
  exact: bool = True,
  *,
  outputs: Dict[str, list],
):
  """While the executor's work runs: `node: D of T <what>, R/s`, T from count(). Where the total
  cannot be counted (a file system tf.data cannot read, a CSV pyarrow refuses) nothing is shown
  and the step goes on: TFX's own reading then says what is wrong, if anything is. On Flink the
  job is also guarded against silent waits (engines.job_guard). When the work succeeds, the
  Beam file sinks' temporary folders a recovered job left in the `outputs` artifacts (the
  executor's output_dict) are removed (artifacts.remove_beam_temp)."""
  node = node_id(executor, default_node)
  with job_guard(executor, node), _progress(executor, node, count, what, exact):
    yield
  removed = artifacts.remove_beam_temp(a.uri for items in outputs.values() for a in items)
  if removed:
    logging.info('%s: removed the Beam temporary folders left behind: %s', node, removed)


def _progress(executor, node: str, count: Callable[[], int], what: str, exact: bool):
  try:
    total = count()
  except Exception as e:  # noqa: BLE001 (progress must never be what fails a step)
    logging.warning('%s: no progress shown, its total could not be counted: %s', node, e)
    total = 0
  if not total:
    return contextlib.nullcontext()
  runner, reported = runner_counts(executor, node)
  return progress.CountsProgress(
    node,
    total,
    lambda done, total, rate: f'{done:,} of {total:,} {what}, {rate:,.0f}/s',
    exact=exact,
    reported=reported,
    runner=runner,
  )


def _arg(args, name: str) -> str:
  values = [arg.split('=', 1)[1] for arg in args if arg.startswith(f'--{name}=')]
  return values[-1] if values else ''


def runner_name(executor) -> str:
  """The Beam runner the executor's pipelines run on ('DirectRunner' unless named)."""
  return _arg(getattr(executor, '_beam_pipeline_args', None) or [], 'runner') or 'DirectRunner'


def flink_job_name(executor, node: str) -> str:
  """The name of the executor's Flink job (`--job_name`, given or added here: how the job is
  found in the cluster's REST API); '' when its pipelines do not run on Flink."""
  args = getattr(executor, '_beam_pipeline_args', None)
  if args is None or _arg(args, 'runner') != 'FlinkRunner':
    return ''
  if not _arg(args, 'job_name'):
    args.append(f'--job_name=tfrp-{node.lower()}-{uuid.uuid4().hex[:8]}')
  return _arg(args, 'job_name')


def job_guard(executor, node: str):
  """engines.job_guard.JobGuard around the executor's Flink job (nothing on other runners)."""
  job_name = flink_job_name(executor, node)
  if not job_name:
    return contextlib.nullcontext()
  from engines import job_guard

  return job_guard.JobGuard(rest_master(executor._beam_pipeline_args), job_name)


def rest_master(args) -> str:
  """The Flink REST address this process reaches: `--flink_master`, or for the containerised
  cluster (whose --flink_master is the JobManager's name on its network) its published one."""
  from engines import flink_containers

  return flink_containers.rest_address(_arg(args, 'flink_master'))


def runner_counts(executor, node: str):
  """(runner, reader of its live count) for a runner whose workers cannot see the run's counts
  folder: ('', None) on the DirectRunner (its processes write there); on Flink the job's
  counter is read from the cluster's REST API; (runner, None) for any other runner."""
  args = getattr(executor, '_beam_pipeline_args', None)
  if args is None:
    return '', None
  runner = _arg(args, 'runner')
  if runner in ('', 'DirectRunner'):
    return '', None
  if runner != 'FlinkRunner':
    return runner, None
  from engines import flink_rest

  job_name, master = flink_job_name(executor, node), rest_master(args)
  return runner, lambda: flink_rest.job_counter(master, job_name, *progress.BEAM_COUNTER)


def one(_element) -> int:
  return 1


def batch_rows(batch) -> int:
  """An Arrow record batch's rows (TFXIO's BeamSource yields batches)."""
  return batch.num_rows


class _Count(beam.DoFn):
  def __init__(self, weigh: Callable[[object], int]):
    self._weigh = weigh

  def process(self, element):
    progress.count(self._weigh(element))
    yield element

  def finish_bundle(self):
    progress.flush()


def _counted(label: str, steps: Tuple[str, ...]) -> bool:
  return any(label == step or label.startswith(step + '[') for step in steps)


class CountingPipeline(beam.Pipeline):
  """A Beam pipeline that counts the output of its top-level steps labelled one of `steps`."""

  def __init__(self, steps: Tuple[str, ...], weigh: Callable[[object], int], **options):
    super().__init__(**options)
    self._steps, self._weigh = steps, weigh

  def apply(self, transform, pvalueish=None, label=None):
    output = super().apply(transform, pvalueish, label)
    top_level = self._current_transform() is self._root_transform()
    if label and top_level and _counted(label, self._steps):
      output = super().apply(beam.ParDo(_Count(self._weigh)), output, f'Count{label}')
    return output


class CountedBeamExecutor:
  """Mixed in before a TFX Beam executor class: its pipeline is a CountingPipeline."""

  COUNTED_STEPS: Tuple[str, ...] = ()
  WEIGH: Callable[[object], int] = staticmethod(one)

  def _make_beam_pipeline(self):
    return CountingPipeline(self.COUNTED_STEPS, self.WEIGH, argv=self._beam_pipeline_args)
