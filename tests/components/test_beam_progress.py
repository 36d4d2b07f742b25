"""Live progress counted in Beam pipelines (components/beam_progress.py, utils/progress.py):
the counted steps are found by label, elements pass unchanged, every process's count adds up."""

import logging
import os
import sys
import types

import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to
import pyarrow as pa
import pytest

from components import beam_progress
from utils import atomic, progress


def _lines(caplog):
  return [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]


def _run(mode: str, steps, weigh=beam_progress.one, total: int = 1) -> list:
  """Runs a small pipeline on a CountingPipeline counting after `steps`; the last progress line."""
  describe = lambda done, total, rate: f'{done} of {total}'
  with progress.CountsProgress('Node', total, describe, exact=True) as watch:
    options = [f'--direct_running_mode={mode}', '--direct_num_workers=2']
    with beam_progress.CountingPipeline(steps, weigh, argv=options) as pipeline:
      numbers = pipeline | 'Read' >> beam.Create(range(10))
      more = pipeline | 'Read[more]' >> beam.Create(range(3))
      other = pipeline | 'ReadAgain' >> beam.Create(range(5))  # not 'Read' or 'Read[…]'
      nested = pipeline | 'Nested' >> _Nested()  # a 'Read' inside a composite: not top level
      doubled = (
        (numbers, more, other, nested) | beam.Flatten() | 'Double' >> beam.Map(lambda x: 2 * x)
      )
      expected = [2 * x for x in list(range(10)) + list(range(3)) + list(range(5)) + [7]]
      assert_that(doubled, equal_to(expected))  # elements pass the counting step unchanged
    return watch.done()  # the pipeline has run: every bundle's count is written


class _Nested(beam.PTransform):
  def expand(self, pipeline):
    return pipeline | 'Read' >> beam.Create([7])


def test_top_level_steps_with_the_label_or_a_bracketed_one_are_counted(caplog):
  caplog.set_level(logging.INFO, logger=progress.LOGGER)
  assert _run('in_memory', ('Read',), total=13) == 10 + 3
  assert _lines(caplog)[-1] == 'Node: 13 of 13'  # exact: the sum of the flushed counts


@pytest.mark.slow  # Beam's worker processes start in a few seconds
def test_beam_worker_processes_count_into_the_same_total(caplog):
  caplog.set_level(logging.INFO, logger=progress.LOGGER)
  assert _run('multi_processing', ('Read', 'ReadAgain'), total=18) == 18
  assert _lines(caplog)[-1] == 'Node: 18 of 18'


def test_a_record_batch_weighs_its_rows():
  assert beam_progress.batch_rows(pa.record_batch([pa.array([1, 2, 3])], names=['a'])) == 3


def test_counts_of_every_process_add_up_and_leave_nothing_behind(caplog):
  caplog.set_level(logging.INFO, logger=progress.LOGGER)
  with progress.CountsProgress('Node', 100, lambda d, t, r: f'{d} of {t}') as watch:
    folder = os.environ[progress.COUNTS_ENV]
    progress.count(3)
    progress.flush()
    atomic.write(os.path.join(folder, '4242'), '4')  # a Beam worker process's count
    atomic.write(os.path.join(folder, '.4243.tmp'), '50')  # one being written: not yet
    assert watch.done() == 3 + 4
  assert progress.COUNTS_ENV not in os.environ and not os.path.exists(folder)
  assert _lines(caplog)[-1] == 'Node: 100 of 100'  # not exact: the total once it is done
  progress.count()  # nothing running: nothing to write to, no error


def test_a_total_that_cannot_be_counted_shows_nothing_and_fails_nothing(caplog):
  def unreadable():
    raise OSError('s3://bucket/data.tfrecord: no such file system here')

  with beam_progress.watch(None, 'ImportExampleGen', unreadable, 'records imported', outputs={}):
    assert progress.COUNTS_ENV not in os.environ  # nothing counts
  assert 'ImportExampleGen: no progress shown' in caplog.text and not _lines(caplog)
  # Nothing to do: no line either.
  with beam_progress.watch(None, 'Node', lambda: 0, 'rows', outputs={}):
    pass
  assert not _lines(caplog)


def test_a_recovered_jobs_beam_temp_folders_go_once_the_work_succeeded(tmp_path):
  artifact = types.SimpleNamespace(uri=str(tmp_path / 'evaluation'))
  left = tmp_path / 'evaluation' / 'beam-temp-metrics-1f2e'
  left.mkdir(parents=True)
  with pytest.raises(RuntimeError):
    with beam_progress.watch(None, 'Evaluator', lambda: 0, 'rows', outputs={'x': [artifact]}):
      raise RuntimeError('the job failed')
  assert left.is_dir()  # a failed component's artifact is left as it is
  with beam_progress.watch(None, 'Evaluator', lambda: 0, 'rows', outputs={'x': [artifact]}):
    pass
  assert not left.exists() and (tmp_path / 'evaluation').is_dir()


def test_threads_of_one_process_count_and_flush_without_losing_a_count():
  """Beam runs a process's bundles in several threads: each ends with a flush of the sum."""
  import threading

  def bundles():
    for _ in range(300):
      progress.count()
      progress.flush()

  switch = sys.getswitchinterval()
  sys.setswitchinterval(1e-6)  # threads switch often, as a busy Beam process's do
  try:
    with progress.CountsProgress('Node', 1, lambda *_: '') as watch:
      threads = [threading.Thread(target=bundles) for _ in range(6)]
      for thread in threads:
        thread.start()
      for thread in threads:
        thread.join()
      assert watch.done() == 6 * 300
  finally:
    sys.setswitchinterval(switch)


def test_the_containerised_clusters_jobmanager_is_reached_on_its_published_port():
  from engines import flink_containers

  in_cluster = f'{flink_containers.JOB_MANAGER}:8081'
  assert beam_progress.rest_master([f'--flink_master={in_cluster}']) == 'localhost:8081'
  assert beam_progress.rest_master(['--flink_master=flink.example:8081']) == 'flink.example:8081'
