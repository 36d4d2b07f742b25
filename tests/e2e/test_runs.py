"""Runs across time on one output folder: three quick runs (pushed, refused, pushed), then
`runs`, the runs page in headless Chromium, `models`, `rollback` to the first version and a
fourth run that compares with it (cli/runs.py, cli/models.py, cli/rollback.py, metadata/runs.py,
metadata/rollback_record.py, reporting/runs_page.py).

A full-page screenshot of the runs page is written for humans to test-artifacts/runs.png.
"""

import json
import os
import urllib.parse

import pytest

from cli import main as cli_main
from metadata import runs as history
from reporting import runs_page
from tests.conftest import run_pipeline
from tests.support import browser

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)

HERE = os.path.dirname(os.path.abspath(__file__))
ARTIFACTS = os.environ.get('TEST_ARTIFACTS', os.path.join(HERE, '..', '..', 'test-artifacts'))
PUSH_ANYWAY = ('--max-accuracy-drop', '1')  # the third run is pushed whatever its accuracy


@pytest.fixture(scope='module')
def three_runs(digits_subset, tmp_path_factory):
  """A pushed run, a refused one (a high --min-accuracy) and a pushed one into one output:
  (output, [last_run.json of each], [exit codes])."""
  output = str(tmp_path_factory.mktemp('runs') / 'out')
  steps = [
    (),
    ('--train-steps', '20', '--min-accuracy', '0.999'),
    ('--train-steps', '300', *PUSH_ANYWAY),
  ]
  codes, results = [], []
  for extra in steps:
    code, result = run_pipeline(digits_subset, output, *extra)
    codes.append(code)
    results.append(result)
  return output, results, codes


def _runs_json(output: str, path: str) -> dict:
  assert cli_main.main(['runs', '--output', output, '--json', path]) == 0
  with open(path) as f:
    return json.load(f)


def test_runs_lists_the_three_runs_newest_first_with_their_figures_and_outcomes(
  three_runs, tmp_path, capsys
):
  output, results, codes = three_runs
  assert codes == [0, 3, 0]
  facts = _runs_json(output, str(tmp_path / 'runs.json'))
  runs = facts['runs']
  assert [r['run_id'] for r in runs] == [r['run_id'] for r in results][::-1]
  assert [r['exit_code'] for r in runs] == [0, 3, 0]
  assert [r['blessed'] for r in runs] == [True, False, True]
  assert [r['accuracy'] for r in runs] == pytest.approx([r['eval_accuracy'] for r in results][::-1])
  pushed = [os.path.basename(r['pushed_to']) if r['pushed_to'] else None for r in results]
  assert [r['version'] for r in runs] == pushed[::-1] and pushed[1] is None
  assert runs[1]['blessing'] == results[1]['blessing']
  assert runs[1]['why_executed']['Trainer'].startswith('options changed (train_steps')
  assert runs[0]['data']['rows'] == sum(results[0]['examples_per_split'].values())
  printed = capsys.readouterr().out
  assert printed.startswith(f'3 run(s) in {os.path.abspath(output)}, newest first:')
  assert f'pushed {pushed[2]} (serving)' in printed and 'refused: ' in printed
  # --json refuses to replace a file, as the other commands' do
  assert cli_main.main(['runs', '--output', output, '--json', str(tmp_path / 'runs.json')]) == 2
  assert 'already exists' in capsys.readouterr().err


def test_every_run_keeps_its_report_and_names_the_runs_page(three_runs):
  output, results, _ = three_runs
  for result in results:
    kept = os.path.join(output, history.report_file(result['run_id']))
    assert os.path.isfile(kept)
    assert result['runs_page'] == os.path.join(output, runs_page.RUNS_PAGE)
  with open(os.path.join(output, 'report.html')) as latest, open(kept) as last:
    assert latest.read() == last.read()


def test_the_runs_page_opens_offline_with_a_point_per_run_and_working_report_links(three_runs):
  chromium, why_not = browser.chromium_path()
  if chromium is None:
    pytest.skip(why_not)
  output, results, _ = three_runs
  os.makedirs(ARTIFACTS, exist_ok=True)
  with browser.Page(chromium) as page:
    page.open('file://' + os.path.join(os.path.abspath(output), runs_page.RUNS_PAGE))
    points = page.evaluate('[...document.querySelectorAll(\'svg.chart g[id^="run-"]\')].length')
    links = page.evaluate("[...document.querySelectorAll('table.runs a')].map(a => a.href)")
    requested = page.requested_urls()
    page.screenshot(os.path.join(ARTIFACTS, 'runs.png'))
  assert points == 3
  assert len(links) == 3
  for link in links:
    assert link.startswith('file://') and os.path.isfile(urllib.parse.unquote(link[7:])), link
  assert all(url.startswith(('file:', 'data:')) for url in requested), requested


def test_models_then_rollback_to_the_first_version_then_a_run_compares_with_it(
  three_runs, digits_subset, tmp_path, capsys
):
  output, results, _ = three_runs
  first, third = (os.path.basename(results[i]['pushed_to']) for i in (0, 2))
  capsys.readouterr()
  assert cli_main.main(['models', '--output', output]) == 0
  lines = capsys.readouterr().out.splitlines()
  assert [line.split()[0] for line in lines] == [first, third]
  assert 'SERVING' in lines[1] and 'SERVING' not in lines[0]
  # not there, and not a pushed model: one error line, exit 2
  assert cli_main.main(['rollback', '12', '--output', output]) == 2
  assert capsys.readouterr().err.startswith('error: version 12: not under ')
  stray = os.path.join(output, 'serving', str(int(third) + 1))
  os.makedirs(stray)
  assert cli_main.main(['rollback', os.path.basename(stray), '--output', output]) == 2
  assert 'not a model this output pushed' in capsys.readouterr().err
  os.rmdir(stray)
  assert cli_main.main(['rollback', first, '--output', output, '--reason', 'v3 misbehaves']) == 0
  said = capsys.readouterr().out
  assert said.startswith(f'rolled back: version {first} (model #')
  versions = sorted(os.listdir(os.path.join(output, 'serving')), key=int)
  assert len(versions) == 3 and versions[-1] not in (first, third)
  assert sorted(os.listdir(os.path.join(output, 'serving', versions[-1]))) == sorted(
    os.listdir(os.path.join(output, 'serving', first))
  )
  assert cli_main.main(['models', '--output', output]) == 0
  last = capsys.readouterr().out.splitlines()[-1]
  assert 'SERVING' in last and f'rollback of version {first}' in last and 'v3 misbehaves' in last
  assert cli_main.main(['lineage', '--output', output]) == 0
  assert f'version {first} (model #' in capsys.readouterr().out
  # the next run: its Evaluator compares with the rolled-back model (the Resolver's baseline)
  code, fourth = run_pipeline(digits_subset, output, '--train-steps', '300', *PUSH_ANYWAY)
  assert code == 0, fourth.get('error')
  assert 'Evaluator' in fourth['executed']
  assert fourth['serving_accuracy'] == pytest.approx(results[0]['eval_accuracy'])
  facts = _runs_json(output, str(tmp_path / 'after.json'))
  [rollback] = facts['rollbacks']
  assert facts['runs'][0]['baseline_model_id'] == rollback['copy_id']
  assert rollback['reason'] == 'v3 misbehaves' and rollback['from_version'] == first
  # the fourth run pushed the third run's (cached) model again: it is the baseline again
  assert facts['runs'][0]['model_id'] == facts['runs'][1]['model_id']
  assert facts['runs'][0]['version'] == facts['serving']
  assert _resolved_baseline(output) == facts['runs'][0]['model_id']


def _resolved_baseline(output: str) -> int:
  """The model LatestBlessedModelStrategy resolves now (the blessed Model of highest id), named
  by the model whose files it holds."""
  from metadata import rollback_record, run_reader

  store = run_reader.open_store(os.path.join(output, 'metadata.sqlite'))
  blessed = [
    run_reader.property_value(b, 'current_model_id')
    for b in store.get_artifacts_by_type('ModelBlessing')
    if run_reader.property_value(b, 'blessed')
  ]
  [model] = store.get_artifacts_by_id([max(blessed)])
  return run_reader.property_value(model, rollback_record.COPY_OF) or model.id
