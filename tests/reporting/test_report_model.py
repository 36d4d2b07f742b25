"""The run report's training section from hand-made training.json and tuner_results.json (no
pipeline run): the model, its phases and the Tuner's trials; a regression run's sections from
facts gathered (metadata/report_facts.py) off hand-made artifacts."""

import json

from ml_metadata.proto import metadata_store_pb2

from contracts import artifacts
from metadata import artifact_reader, report_facts, run_reader
from metadata.run_result import Evaluation, RunResult
from reporting import report_model

HISTORY = {'loss': [1.2, 0.6], 'sparse_categorical_accuracy': [0.5, 0.8], 'val_loss': [1.0, 0.7]}
OLD_TRAINING = {
  'train_steps': 100,
  'batch_size': 32,
  'epochs': 2,
  'history': HISTORY,
  'input_check': None,
}
TRAINING = dict(
  OLD_TRAINING,
  model='mobilenet',
  hyperparameters={'learning_rate': 0.003, 'dropout': 0.25},
  tuned=True,
  weights='imagenet',
  xla=False,
  phases=[
    {
      'name': 'head',
      'steps': 100,
      'learning_rate': 0.003,
      'unfrozen_layers': None,
      'seconds': 12.5,
      'trainable_parameters': 12810,
    },
    {
      'name': 'fine_tune',
      'steps': 50,
      'learning_rate': 0.0003,
      'unfrozen_layers': 20,
      'seconds': 30.1,
      'trainable_parameters': 987654,
    },
  ],
)
TRIALS = [
  {'trial_id': '02', 'score': 0.9125, 'learning_rate': 0.003, 'dropout': 0.25},
  {'trial_id': '00', 'score': 0.8375, 'learning_rate': 0.01, 'dropout': 0.5},
  {'trial_id': '01', 'score': 0.6625, 'learning_rate': 0.0001, 'dropout': 0.1},
]


def _node(tmp_path, node_id: str, key: str, name: str, content) -> run_reader.NodeRun:
  folder = tmp_path / node_id
  folder.mkdir()
  (folder / name).write_text(json.dumps(content))
  artifact = metadata_store_pb2.Artifact(uri=str(folder))
  return run_reader.NodeRun(node_id, 'COMPLETE', {key: artifact})


def _section(training: dict, trials=None) -> str:
  return report_model.training_section(training, trials, '/out/Trainer/model_run/3')


def test_the_model_its_phases_and_every_tuning_trial_are_shown_best_first():
  page = _section(TRAINING, TRIALS)
  for shown in ('mobilenet', 'imagenet', 'learning_rate (tuned)', 'dropout (tuned)'):
    assert shown in page
  for phase in ('<td>head</td>', '<td>fine_tune</td>', '0.003', '0.0003', '12,810', '987,654'):
    assert phase in page
  positions = [page.index(f'<td>{t["trial_id"]}') for t in TRIALS]
  assert positions == sorted(positions)
  for trial in TRIALS:
    assert f'<td class="n">{trial["score"]:.4g}</td>' in page
  assert '<td>02 (best)</td>' in page
  assert page.count('(best)') == 1


def test_a_run_without_a_tuner_shows_no_trials_nor_tuned_values():
  page = _section(dict(TRAINING, tuned=False))
  assert 'Tuning' not in page
  assert '(tuned)' not in page
  assert '<td>learning_rate</td>' in page


def test_a_training_json_from_before_the_model_and_phases_were_recorded_still_renders():
  page = _section(OLD_TRAINING)
  assert '100 steps of batch 32 in 2 epochs.' in page
  assert 'phase' not in page
  assert 'TensorBoard' in page


def test_trees_show_their_rounds_not_steps_and_no_input_check():
  trees = {'rounds': 91, 'train_rows': 3197, 'seconds': 1.94}
  gbt = dict(TRAINING, model='gbt', phases=[], trees=trees, input_check=None)
  page = _section(gbt)
  assert 'Gradient-boosted trees: 91 boosting rounds on 3,197 train rows in 1.9 s' in page
  assert 'steps of batch' not in page
  assert 'read their splits into memory once' in report_model.input_section(gbt, None)
  assert 'distributed' in report_model.input_section(OLD_TRAINING, None)


def _with_input_check(rate: float, step_seconds: float, stall: float, recorded_bound: bool):
  check = {
    'input_examples_per_second': rate,
    'step_seconds': step_seconds,
    'stall_fraction': stall,
    'input_bound': recorded_bound,  # what an older Trainer decided from the stall alone
    'hint': 'store raw pixels (pipeline.py run --encoding raw)',
    'input_service': '',
  }
  return dict(TRAINING, batch_size=64, input_check=check)


def test_the_input_section_judges_the_default_runs_figures_not_input_bound():
  page = report_model.input_section(_with_input_check(310639.0, 64 / 8769, 0.083, True), None)
  assert 'input-bound' in page and 'Not input-bound' in page
  assert 'class="bad"' not in page and 'store raw pixels' not in page
  assert 'fixed cost of 0.66 ms per batch' in page  # 8.3 % of a 7.3 ms step, paced


def test_the_input_section_calls_an_input_slower_than_the_step_input_bound_with_its_hint():
  page = report_model.input_section(_with_input_check(180.0, 0.080, 0.02, False), None)
  assert 'class="bad"' in page and 'Training was input-bound' in page
  assert 'store raw pixels' in page


def test_the_input_section_shows_records_read_against_those_recorded():
  from records import damage
  from records.scan import ShardReport

  found = damage.totals(
    [ShardReport('/ex/Split-train/a', good=51, truncated_bytes=34)], {'train': 241}
  )
  page = report_model.input_section(_with_input_check(180.0, 0.080, 0.02, False), found)
  assert 'records read of those recorded' in page and 'train 51 of 241 (190 missing)' in page
  whole = damage.totals([ShardReport('/ex/Split-train/a', good=241)], {'train': 241})
  page = report_model.input_section(_with_input_check(180.0, 0.080, 0.02, False), whole)
  assert 'records read of those recorded' not in page


def test_the_seed_is_shown_where_training_json_has_one():
  assert '<td>seed</td><td>7 (deterministic ops)</td>' in _section(dict(TRAINING, seed=7))
  assert '<td>seed</td><td>none</td>' in _section(dict(TRAINING, seed=None))
  assert '<td>seed</td>' not in _section(TRAINING)  # written before --seed


def test_the_columns_read_as_dates_are_shown_where_training_json_has_them():
  said = "'d' (ISO, 2024-03-05 … 2024-03-09) read as dates → year"
  assert '<td>dates</td><td>' in _section(dict(TRAINING, dates=said))
  assert '<td>dates</td>' not in _section(TRAINING)


REGRESSION_TRAINING = dict(
  OLD_TRAINING,
  label='fare',
  model='mlp',
  hyperparameters={'learning_rate': 0.001},
  task='regression',
  loss='huber',
  label_mean=11.5,
  label_std=9.25,
  single_feature_scores={'distance': 0.83},
  history={
    'loss': [0.6, 0.3],
    'mean_absolute_error': [4.1, 2.2],
    'val_loss': [0.5, 0.35],
    'val_mean_absolute_error': [3.9, 2.4],
  },
)


def _regression_page(tmp_path) -> tuple:
  """(the training and evaluation sections of a regression run as one page, its RunResult): a
  tiny SavedModel (tests/support/regression_model.py) on 40 eval rows, TFMA's files by hand."""
  from contracts import evaluation as names
  from metadata import blessing_reasons
  from reporting import html
  from tests.support import evaluations, regression_model

  rows = [(float(x), 2.0 * x + (x % 5 - 2) * 0.5) for x in range(40)]
  records = [regression_model.record(fare=x, tips=y) for x, y in rows]
  examples = evaluations.eval_split(str(tmp_path / 'examples'), records)
  regression_model.save(str(tmp_path / 'model' / 'Format-Serving'))
  figures = {
    (names.CANDIDATE, names.MAE_KEY, False): 0.6,
    (names.CANDIDATE, names.RMSE_KEY, False): 0.71,
    (names.CANDIDATE, names.R2_KEY, False): 0.998,
    (names.CANDIDATE, names.BASELINE_MAE_KEY, False): 20.0,
    (names.CANDIDATE, 'example_count', False): 40.0,
  }
  slices = {
    ('zone', 'north'): {names.MAE_KEY: 0.5, names.RMSE_KEY: 0.6, names.R2_KEY: 0.99},
    ('zone', 'south'): {names.MAE_KEY: 0.7, names.RMSE_KEY: 0.8, names.R2_KEY: 0.97},
  }
  evaluation = evaluations.write_metrics(str(tmp_path / 'evaluation'), figures, slices)
  artifact = lambda uri: metadata_store_pb2.Artifact(uri=uri)
  nodes = {
    'Trainer': _node(
      tmp_path, 'Trainer', 'model_run', artifacts.TRAINING_FILE, REGRESSION_TRAINING
    ),
    'Evaluator': run_reader.NodeRun('Evaluator', 'COMPLETE', {'evaluation': artifact(evaluation)}),
    'Trainer.model': run_reader.NodeRun(
      'Trainer.model', 'COMPLETE', {'model': artifact(str(tmp_path / 'model'))}
    ),
  }
  result = RunResult(
    wall_seconds=1.0,
    examples_uri=examples,
    training={'label': 'fare', 'task': 'regression'},
    evaluation=Evaluation(
      figures=artifact_reader.regression_figures(artifact(evaluation))[names.CANDIDATE]
    ),
    blessed=True,
  )
  result.blessing = blessing_reasons.regression_reason(None, True, result.regression, {})
  facts = report_facts.gather(nodes, result, str(tmp_path / 'metadata.sqlite'), 'tips')
  body = (
    '<section id="training"><h2>Training</h2>'
    + report_model.training_section(facts.training, facts.tuner_trials, facts.model_run_uri)
    + '</section><section id="evaluation"><h2>Evaluation</h2>'
    + report_model.evaluation_section(facts, '', (), 'tips')
    + '</section>'
  )
  return html.page('regression run', body), result


def test_a_regression_run_shows_its_predictions_errors_and_slices_in_label_units(tmp_path):
  page, _ = _regression_page(tmp_path)
  assert 'aria-label="predictions against the label"' in page
  assert 'Predicting the train median for every row: MAE 20; this model&#x27;s is 97% lower' in page
  assert '<th>slice</th><th>examples</th><th>MAE</th><th>RMSE</th><th>R²</th>' in page
  assert '<td>zone = north</td>' in page and 'accuracy' not in page.split('Per slice')[1]
  assert 'MAE (label units)' in page and 'loss (standardized label)' in page
  assert '<td>task</td><td>regression, loss huber</td>' in page
  assert '<td>train label mean</td><td class="n">11.5</td>' in page
  assert 'eval R² on the label ranks alone' in page and 'eval accuracy' not in page
  assert 'Per class' not in page and 'Confusion matrix' not in page


PAGE_FACTS = """({
  charts: [...document.querySelectorAll('svg.chart')].map(c => ({
      alt: c.getAttribute('aria-label'), width: c.getBoundingClientRect().width,
      height: c.getBoundingClientRect().height, section: c.closest('section').id,
      texts: [...c.querySelectorAll('text')].map(t => t.textContent)})),
  text: document.querySelector('#evaluation').innerText,
})"""


def test_the_regression_sections_render_in_chromium_with_their_charts_text_as_text(tmp_path):
  import os

  import pytest

  from tests.support import browser

  chromium, why_not = browser.chromium_path()
  if chromium is None:
    pytest.skip(why_not)
  page, result = _regression_page(tmp_path)
  path = tmp_path / 'report.html'
  path.write_text(page, encoding='utf-8')
  with browser.Page(chromium) as shown:
    shown.open('file://' + os.path.abspath(path))
    facts = shown.evaluate(PAGE_FACTS)
  charts = {c['alt']: c for c in facts['charts']}
  assert set(charts) == {'training curves', 'predictions against the label'}
  for chart in charts.values():
    assert chart['width'] > 600 and chart['height'] > 150, chart
  drawn = ' '.join(charts['predictions against the label']['texts'])
  for said in ('actual tips', 'predicted tips', 'residual (actual − predicted)', 'eval rows'):
    assert said in drawn, said
  assert 'MAE (label units)' in ' '.join(charts['training curves']['texts'])
  assert f'Blessed ({result.blessing})' in facts['text']
  assert (
    'zone = north\t30' not in facts['text'] and 'zone = north\t0\t0.5\t0.6\t0.99' in facts['text']
  )
