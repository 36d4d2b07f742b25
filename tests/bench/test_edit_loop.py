"""`bench.edit_loop --quick`: the figures are complete and consistent (no speed test)."""

import pytest

from bench import edit_loop
from tests.support import bench_runs

pytestmark = pytest.mark.slow  # nine whole pipeline runs (two in one --watch) and the plain script (make test-fast leaves them out)


@pytest.fixture(scope='module')
def figures(tmp_path_factory):
  return bench_runs.figures(edit_loop.main, tmp_path_factory.mktemp('bench'), '--quick')


def test_every_run_has_its_seconds(figures):
  assert figures['rounds'] == 1 and figures['train_steps'] == edit_loop.QUICK_STEPS
  assert figures['images'] == 1797
  kinds = [k for k, _ in edit_loop.TIMED] + list(edit_loop.UNTIMED)
  assert set(figures['seconds']) == set(kinds) | set(edit_loop.FLOORS)
  assert set(kinds) == set(figures['runs'])
  edit = figures['runs']['model_edit'][0]['component_seconds']
  importing = figures['seconds']['import_tensorflow']
  assert figures['seconds']['floor'] == pytest.approx(importing + edit['Trainer'])
  assert figures['seconds']['model_edit_components'] == pytest.approx(
    importing + sum(edit.values())
  )
  for kind in kinds:
    assert figures['seconds'][kind] > 0, kind
    assert figures['seconds_rounds'][kind] == [figures['seconds'][kind]], kind
    assert [r['seconds'] for r in figures['runs'][kind]] == [figures['seconds'][kind]], kind
  script = figures['runs']['plain'][0]['script']
  assert script['steps'] == edit_loop.QUICK_STEPS and script['batch_size'] == 64
  assert script['seconds'] < figures['seconds']['plain']  # its own clock starts later


def test_ratios_follow_from_the_seconds_and_targets_from_the_ratios(figures):
  seconds, ratios = figures['seconds'], figures['ratios']
  assert set(ratios) == set(edit_loop.RATIOS)
  for name, figure in edit_loop.RATIOS.items():
    assert ratios[name] == pytest.approx(seconds[figure] / seconds['plain']), name
    assert figures['ratios_rounds'][name] == pytest.approx([ratios[name]] * 2), name
  assert set(figures['targets']) == {
    'nothing_changed_over_plain',
    'first_rerun_after_push_over_plain',
    'model_edit_over_plain',
    'cold_over_plain',
    'watch_model_edit_over_plain',
    'watch_data_change_over_plain',
  }
  for name, target in figures['targets'].items():
    assert target['target'] == edit_loop.TARGETS[name]
    assert target['met'] == (ratios[name] <= target['target']), name


def test_each_pipeline_run_reran_what_its_change_touches(figures):
  runs = {kind: figures['runs'][kind][0] for kind in figures['runs']}
  for kind in ('cold', 'model_edit', 'data_change'):
    run = runs[kind]
    assert run['exit_code'] in edit_loop.PIPELINE_OK, kind
    assert set(run['component_seconds']) == set(run['components']), kind  # printed = summary
    assert run['outside_summary_seconds'] == pytest.approx(run['seconds'] - run['wall_seconds'])
  for kind in ('first_rerun_after_push', 'nothing_changed'):  # answered by cli/unchanged.py
    assert runs[kind]['unchanged'] and runs[kind]['component_seconds'] == {}, kind
    assert runs[kind]['exit_code'] == runs['cold']['exit_code'], kind
  assert runs['cold']['cached'] == [] and 'Trainer' in runs['cold']['executed']
  assert runs['nothing_changed']['executed'] == []
  assert 'Trainer' in runs['model_edit']['executed']
  assert 'ImageExampleGen' in runs['model_edit']['cached']
  assert 'ImageExampleGen' in runs['data_change']['executed']
  # --watch answered each save in its warm process, with what the save touches
  assert 'Trainer' in runs['watch_model_edit']['executed']
  assert 'ImageExampleGen' not in runs['watch_model_edit']['executed']
  assert {'ImageExampleGen', 'Trainer'} <= set(runs['watch_data_change']['executed'])


def test_the_cold_run_is_broken_down_by_phase(figures):
  cold, breakdown = figures['runs']['cold'][0], figures['cold_breakdown']
  assert breakdown['process_seconds'] == figures['seconds']['cold']
  assert breakdown['component_seconds'] == cold['component_seconds']
  assert breakdown['wall_seconds'] == cold['wall_seconds']
  assert breakdown['outside_summary_seconds'] == pytest.approx(
    breakdown['process_seconds'] - breakdown['wall_seconds']
  )
  before, after = (
    breakdown['before_first_component_seconds'],
    breakdown['after_last_component_seconds'],
  )
  assert 0 < before and 0 < after and before + after < breakdown['process_seconds']
  assert 0 < breakdown['train_seconds'] < breakdown['component_seconds']['Trainer']
