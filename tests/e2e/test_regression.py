"""A number to predict, end to end (issue 58): one real run on the taxi CSV's fares, then
`predict` and `monitor` on it, as a user would."""

import csv
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from cli import main as cli_main
from contracts import evaluation, predictions, serving
from contracts.errors import EXIT_OK
from tests.conftest import run_pipeline
from tests.support.tfx_data import TAXI_CSV

pytestmark = pytest.mark.slow  # a whole pipeline run (make test-fast leaves it out)

ROWS, UNLABELED = 2000, 40


def _taxi_fares(folder, first: int, rows: int, labelled: bool) -> str:
  """`rows` taxi trips from row `first`, without `tips` (paid after the fare) and, unless
  `labelled`, without `fare`."""
  path = os.path.join(folder, f'fares-{first}.csv')
  with open(TAXI_CSV, newline='') as source, open(path, 'w', newline='') as out:
    reader = csv.DictReader(source)
    dropped = {'tips'} | (set() if labelled else {'fare'})
    writer = csv.DictWriter(out, [c for c in reader.fieldnames if c not in dropped])
    writer.writeheader()
    for number, row in enumerate(reader):
      if first <= number < first + rows:
        writer.writerow({k: v for k, v in row.items() if k not in dropped})
  return path


@pytest.fixture(scope='module')
def fare_run(tmp_path_factory):
  folder = tmp_path_factory.mktemp('fare_run')
  data = _taxi_fares(folder, 0, ROWS, labelled=True)
  unlabeled = _taxi_fares(folder, ROWS, UNLABELED, labelled=False)
  output = str(folder / 'out')
  code, result = run_pipeline(
    data, output, '--label', 'fare', '--slice-feature', 'payment_type', '--infer-data', unlabeled
  )
  return code, result, output, data, unlabeled


def test_a_float_label_trains_a_regression_model_blessed_against_the_median_predictor(fare_run):
  code, result, _, _, _ = fare_run
  assert code == EXIT_OK, result.get('error')
  assert result['training']['label'].startswith('fare as a number (regression')
  figures = result['regression']
  assert figures[evaluation.MAE_KEY] < 0.9 * figures[evaluation.BASELINE_MAE_KEY]
  assert 0 < figures[evaluation.R2_KEY] <= 1  # R² above 0: a rule of the blessing (issue 68)
  assert figures[evaluation.RMSE_KEY] < figures[evaluation.BASELINE_RMSE_KEY]
  assert 0 <= figures[evaluation.OTHER_SIGN_KEY] <= figures[evaluation.OUT_OF_RANGE_KEY]
  assert 'label_tail' not in result['training']  # fares: no heavy tail, standardized as before
  assert figures[evaluation.RMSE_KEY] >= figures[evaluation.MAE_KEY]
  assert result['blessed'] and result['serving_check']['serves'] and result['pushed_to']
  assert result['eval_accuracy'] is None  # no accuracy of a number
  assert serving.task(result['pushed_to']) == 'regression'


def test_the_bulk_inferrer_and_predict_write_the_same_numbers_as_serving_default(
  fare_run, tmp_path, capsys
):
  code, result, output, _, unlabeled = fare_run
  assert code == EXIT_OK
  with open(result['inferred']['csv'], newline='', encoding='utf-8') as f:
    inferred = list(csv.DictReader(f))
  assert len(inferred) == UNLABELED
  assert set(inferred[0]) == {predictions.ID, predictions.PREDICTION}
  out = str(tmp_path / 'fares.csv')
  argv = ['predict', '--data', unlabeled, '--output', output, '--out', out]
  assert cli_main.main(argv) == EXIT_OK
  assert 'predicted numbers: lowest ' in capsys.readouterr().out
  with open(out, newline='', encoding='utf-8') as f:
    predicted = [float(r[predictions.PREDICTION]) for r in csv.DictReader(f)]
  assert len(predicted) == UNLABELED and all(np.isfinite(predicted))
  bulk = sorted(float(r[predictions.PREDICTION]) for r in inferred)
  np.testing.assert_allclose(sorted(predicted), bulk, rtol=1e-4, atol=1e-3)
  served = tf.saved_model.load(result['pushed_to']).signatures[serving.COLUMNS]
  assert set(served.structured_outputs) == {serving.PREDICTION}


def test_monitor_compares_the_label_and_the_prediction_of_serving_data(fare_run, capsys):
  code, _, output, data, _ = fare_run
  assert code == EXIT_OK
  argv = ['monitor', '--output', output, '--serving-data', data]
  assert cli_main.main(argv) == EXIT_OK
  error, shown = capsys.readouterr().out.strip().splitlines()
  assert shown.startswith(f'monitor: {ROWS} serving examples') and '0 flagged' in shown
  with open(shown.rsplit(' ', 1)[-1], encoding='utf-8') as f:
    found = json.load(f)
  assert found['task'] == 'regression'
  assert {'model prediction', 'fare'} <= set(found['features'])
  # the data carries the label: the model's error on it beside its eval MAE, not flagged
  performance = found['performance']
  assert error == f'model error: {performance["why"]}' and not performance['flagged']
  assert performance['rows'] == ROWS and set(performance['figures']) == {
    evaluation.MAE_KEY,
    evaluation.RMSE_KEY,
  }


REPORT_FACTS = """({
  charts: [...document.querySelectorAll('svg.chart')].map(c => ({
      alt: c.getAttribute('aria-label'), section: c.closest('section').id,
      width: c.getBoundingClientRect().width, height: c.getBoundingClientRect().height,
      texts: [...c.querySelectorAll('text')].map(t => t.textContent)})),
  text: Object.fromEntries([...document.querySelectorAll('section')].map(s => [s.id, s.innerText])),
})"""


def test_the_summary_and_the_report_show_the_errors_and_the_pictures_of_a_number(fare_run):
  from contracts.evaluation import figure_text
  from metadata.run_result import RunResult
  from reporting import report, summary_text
  from tests.support import browser

  code, result, output, _, _ = fare_run
  assert code == EXIT_OK
  lines = summary_text.render(RunResult.from_json(result))
  mae = figure_text(result['regression'][evaluation.MAE_KEY])
  assert any(line.startswith(f'eval:       MAE {mae}, RMSE ') for line in lines), lines
  assert any(line.startswith('baseline:   predicting the train median') for line in lines)
  assert not any(line.startswith('eval accuracy') for line in lines)
  chromium, why_not = browser.chromium_path()
  if chromium is None:
    pytest.skip(why_not)
  with browser.Page(chromium) as page:
    page.open('file://' + os.path.join(os.path.abspath(output), report.REPORT_FILE))
    facts = page.evaluate(REPORT_FACTS)
  charts = {c['alt']: c for c in facts['charts']}
  assert {'label distribution (fare)', 'training curves', 'predictions against the label'} <= set(
    charts
  )
  assert 'recall per class' not in charts and 'confusion matrix' not in charts
  for chart in charts.values():
    assert chart['width'] > 200 and chart['height'] > 100, chart
  drawn = ' '.join(charts['predictions against the label']['texts'])
  assert 'actual fare' in drawn and 'residual (actual − predicted)' in drawn
  assert 'MAE (label units)' in charts['training curves']['texts']
  evaluated = facts['text']['evaluation']
  assert 'Predicting the train median for every row: MAE' in evaluated
  assert 'slice\texamples\tMAE\tRMSE\tR²' in evaluated and 'payment_type = ' in evaluated
