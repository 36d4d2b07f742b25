"""`pipeline.py monitor` with the serving model of a real run (tabular_run: taxi CSV, label
tips): serving data drawn from its eval split (label removed) as a spreadsheet's CSV, as
tf.Example TFRecords and as PredictionLogs; one numeric column shifted, one categorical column
partly moved; drift against the previous window; the run in ML Metadata and in `lineage`."""

import collections
import csv
import glob
import json
import os
import random
import shutil

import numpy as np
import pytest

from cli import main as cli_main
from contracts import evaluation, request_log, serving
from contracts.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from tests.support import request_logs, shards

pytestmark = pytest.mark.slow

LABEL = 'tips'


def _eval_records(output):
  files = glob.glob(
    os.path.join(output, 'pipeline_root', 'CsvExampleGen', 'examples', '*', 'Split-eval', '*')
  )
  return [record for path in sorted(files) for record in shards.read_all(path)]


def _rows(records):
  """Eval examples as CSV cells (label removed; no values: an empty cell)."""
  import tensorflow as tf

  rows = []
  for record in records:
    features = tf.train.Example.FromString(record).features.feature
    row = {}
    for name, feature in features.items():
      kind = feature.WhichOneof('kind')
      values = list(getattr(feature, kind).value) if kind else []
      if name != LABEL:
        row[name] = (
          '' if not values else (values[0].decode() if kind == 'bytes_list' else repr(values[0]))
        )
    rows.append(row)
  return rows


def _write_csv(path, rows, delimiter=','):
  columns = sorted({c for row in rows for c in row})
  with open(path, 'w', newline='', encoding='utf-8-sig') as f:  # as a spreadsheet exports it
    writer = csv.writer(f, delimiter=delimiter)
    writer.writerow(columns)
    writer.writerows([row.get(c, '') for c in columns] for row in rows)
  return str(path)


@pytest.fixture(scope='module')
def eval_split(tabular_run):
  """tabular_run's output folder, its eval records and their rows."""
  code, _, output, _ = tabular_run
  assert code == EXIT_OK
  records = _eval_records(output)
  return output, records, _rows(records)


@pytest.fixture
def monitored(eval_split, tmp_path):
  """eval_split with a copy of the output folder of its own (monitoring runs are recorded in its
  ML Metadata and are each other's previous window)."""
  output, records, rows = eval_split
  copy = str(tmp_path / 'out')
  shutil.copytree(output, copy)
  return copy, records, rows


def _monitor(output, data, capsys, *extra):
  capsys.readouterr()
  code = cli_main.main(['monitor', '--output', output, '--serving-data', data, *extra])
  out = capsys.readouterr()
  summary_path = out.out.strip().splitlines()[-1].rsplit('; ', 1)[-1]
  with open(summary_path) as f:
    return code, json.load(f), out


def test_eval_rows_as_serving_data_flag_nothing(monitored, tmp_path, capsys):
  output, _, rows = monitored
  code, summary, out = _monitor(output, _write_csv(tmp_path / 'eval.csv', rows), capsys)
  assert code == EXIT_OK, out.out
  assert summary['flagged'] == [] and summary['anomalies'] == {}  # no label: SERVING environment
  assert summary['serving_examples'] == len(rows)
  features = summary['features']
  assert LABEL not in features and {'fare', 'trip_miles', 'payment_type', 'company'} <= set(
    features
  )
  assert features['fare']['measure'] == 'jensen_shannon_divergence'
  assert features['payment_type']['measure'] == 'infinity_norm'
  assert all(0 <= f['value'] <= f['threshold'] for f in features.values())
  assert out.err == '' and 'flagged' not in out.out.replace('0 flagged', '')


def test_a_numeric_column_shifted_by_three_sd_is_flagged(monitored, tmp_path, capsys):
  output, _, rows = monitored
  sd = np.std([float(r['fare']) for r in rows if r['fare']])
  # a European spreadsheet: `;` between cells, decimal commas
  shifted = [
    dict(r, fare=f'{float(r["fare"]) + 3 * sd:.2f}'.replace('.', ',')) if r['fare'] else r
    for r in rows
  ]
  code, summary, out = _monitor(output, _write_csv(tmp_path / 'shifted.csv', shifted, ';'), capsys)
  assert code == EXIT_FAILED
  assert summary['flagged'] == ['fare']
  fare = summary['features']['fare']
  assert fare['measure'] == 'jensen_shannon_divergence' and fare['flagged']
  assert fare['value'] > 2 * fare['threshold']
  with open(summary['html'], encoding='utf-8') as f:
    page = f.read()
  assert '<section id="monitoring">' in page  # the flagged feature's overlay, only that one
  assert page.count('<svg class="chart"') == 1 and 'aria-label="fare: training and serving"' in page
  assert [line for line in out.out.splitlines() if line.startswith('flagged')] == [
    f'flagged fare: skew: Jensen-Shannon divergence {fare["value"]:.3f} > {fare["threshold"]:g}'
  ]


def test_a_categorical_column_partly_moved_is_flagged(monitored, tmp_path, capsys):
  output, _, rows = monitored
  (common, _), (other, _) = collections.Counter(r['payment_type'] for r in rows).most_common(2)
  moved = [dict(r) for r in rows]
  chosen = random.Random(0).sample(
    [i for i, r in enumerate(moved) if r['payment_type'] == common], len(moved) // 5
  )
  for i in chosen:
    moved[i]['payment_type'] = other
  code, summary, _ = _monitor(output, _write_csv(tmp_path / 'moved.csv', moved), capsys)
  assert code == EXIT_FAILED
  assert summary['flagged'] == ['payment_type']
  entry = summary['features']['payment_type']
  assert entry['measure'] == 'infinity_norm' and entry['flagged']


def test_prediction_logs_and_tf_examples_are_accepted(monitored, tmp_path, capsys):
  """What `predict --log` logged (predict_columns requests), serving_default requests and plain
  tf.Example TFRecords give the CSV's statistics."""
  import tensorflow as tf

  output, records, rows = monitored
  eval_csv = _write_csv(tmp_path / 'eval.csv', rows)
  code, by_csv, _ = _monitor(output, eval_csv, capsys)
  folder = tmp_path / 'log'
  predicted = ['predict', '--data', eval_csv, '--output', output, '--log', str(folder)]
  assert cli_main.main(predicted + ['--out', str(tmp_path / 'p.csv')]) == EXIT_OK
  capsys.readouterr()
  examples = [
    request_log.predict_log(
      serving.SERVING_DEFAULT, {serving.EXAMPLES_INPUT: np.array(records[:10], dtype=object)}
    )
  ]
  request_log.write(str(folder / request_logs.file_name(0, 1)), examples)
  code, by_log, out = _monitor(output, str(folder), capsys)
  assert code == EXIT_OK, out.out
  assert by_log['serving_examples'] == len(rows) + 10
  with tf.io.TFRecordWriter(str(tmp_path / 'eval.tfrecord')) as writer:
    for record in records:
      writer.write(record)
  code, by_records, out = _monitor(output, str(tmp_path / 'eval.tfrecord'), capsys)
  assert code == EXIT_OK, out.out  # the label is there: allowed in SERVING too
  # ... and the model's error on them is its eval accuracy: the same rows, the same model
  performance = by_records['performance']
  accuracy = performance['eval_figures'][evaluation.ACCURACY_KEY]
  assert performance['rows'] == len(records) and not performance['flagged']
  assert performance['figures'][evaluation.ACCURACY_KEY] == pytest.approx(accuracy, abs=1e-6)
  assert f'model error: accuracy {accuracy:.4f} on {len(records)} served rows' in out.out
  assert by_csv['performance'] is None  # no label served
  # the log's ten serving_default requests are eval records: labelled, too few to judge
  assert by_log['performance']['rows'] == 10 and not by_log['performance']['flagged']
  assert by_log['performance']['why'].endswith('fewer than 30 rows, not judged')
  values = lambda s: {n: round(f['value'], 3) for n, f in s['features'].items()}
  assert values(by_records) == values(by_csv)
  assert set(values(by_log)) == set(values(by_csv))


def test_served_rows_whose_labels_went_wrong_flag_the_model_error(monitored, tmp_path, capsys):
  """The eval rows with their label, every third tip turned to the other answer of "tipped?"
  (tips > 0): the features did not move, the model's accuracy on them did."""
  import tensorflow as tf

  output, records, _ = monitored
  flipped = []
  for i, record in enumerate(records):
    example = tf.train.Example.FromString(record)
    tips = example.features.feature[LABEL].float_list.value
    if i % 3 == 0 and len(tips):
      tips[0] = 0.0 if tips[0] > 0 else 2.5
    flipped.append(example.SerializeToString())
  with tf.io.TFRecordWriter(str(tmp_path / 'flipped.tfrecord')) as writer:
    for record in flipped:
      writer.write(record)
  code, summary, out = _monitor(output, str(tmp_path / 'flipped.tfrecord'), capsys)
  assert code == EXIT_FAILED and summary['flagged'] == ['model error']
  performance = summary['performance']
  drop = (
    performance['eval_figures'][evaluation.ACCURACY_KEY]
    - performance['figures'][evaluation.ACCURACY_KEY]
  )
  assert drop > 0.2 and performance['flagged']
  assert [line for line in out.out.splitlines() if line.startswith('flagged')] == [
    f'flagged model error: {performance["why"]}'
  ]
  with open(summary['html'], encoding='utf-8') as f:
    assert "The model's error on labelled rows" in f.read()


def test_drift_against_the_previous_window_and_lineage(monitored, tmp_path, capsys):
  output, _, rows = monitored
  first = _write_csv(tmp_path / 'eval.csv', rows)
  assert _monitor(output, first, capsys)[0] == EXIT_OK
  sd = np.std([float(r['trip_seconds']) for r in rows if r['trip_seconds']])
  late = [
    dict(r, trip_seconds=str(int(float(r['trip_seconds']) + 3 * sd))) if r['trip_seconds'] else r
    for r in rows
  ]
  code, summary, _ = _monitor(output, _write_csv(tmp_path / 'late.csv', late), capsys)
  assert code == EXIT_FAILED and 'trip_seconds' in summary['flagged']
  drift = summary['features']['trip_seconds']['drift']
  assert drift['flagged'] and summary['previous_window']
  assert (
    summary['features']['fare']['drift'] is not None
    and not summary['features']['fare']['drift']['flagged']
  )
  capsys.readouterr()
  answer = tmp_path / 'lineage.json'
  assert cli_main.main(['lineage', '--output', output, '--json', str(answer)]) == EXIT_OK
  printed = capsys.readouterr().out
  runs = json.loads(answer.read_text())['monitoring']
  assert runs[-1]['execution_id'] == summary['execution_id']
  assert (
    runs[-1]['model_id'] == summary['model']['model_id']
    and runs[-1]['flagged'] == summary['flagged']
  )
  assert f'monitor #{summary["execution_id"]}' in printed and 'late.csv' in printed


def test_bad_input_is_one_line(monitored, tmp_path, capsys):
  output, _, rows = monitored
  cases = [
    (['--output', output, '--serving-data', str(tmp_path / 'nothing.csv')], 'no such file'),
    (['--output', str(tmp_path), '--serving-data', output], 'no metadata.sqlite'),
  ]
  extra = [dict(r, colour='red', speed='1') for r in rows[:5]]
  cases.append(
    (
      ['--output', output, '--serving-data', _write_csv(tmp_path / 'extra.csv', extra)],
      'colour, speed',
    )
  )
  bad = [dict(r, fare='cheap') for r in rows[:5]]
  cases.append(
    (
      ['--output', output, '--serving-data', _write_csv(tmp_path / 'bad.csv', bad)],
      "column fare: 'cheap' is not a number",
    )
  )
  for args, words in cases:
    capsys.readouterr()
    assert cli_main.main(['monitor', *args]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith('error: ') and words in err and len(err.strip().splitlines()) == 1, err


def _copy_images(source, dest, change=None):
  import PIL.Image

  count = 0
  for path in sorted(glob.glob(os.path.join(source, '*', '*.png'))):
    folder = os.path.join(dest, os.path.basename(os.path.dirname(path)))
    os.makedirs(folder, exist_ok=True)
    with PIL.Image.open(path) as image:
      pixels = np.asarray(image)
    pixels = change(pixels) if change else pixels
    PIL.Image.fromarray(pixels).save(os.path.join(folder, os.path.basename(path)))
    count += 1
  return str(dest), count


def test_brightened_images_are_flagged(first_run, images_with_junk, tmp_path, capsys):
  """Images are compared by their size, channels, brightness and contrast, measured the same way
  on the training records (raw pixels here) and on the serving files."""
  code, _, output, _ = first_run
  assert code == EXIT_OK
  copy = str(tmp_path / 'out')
  shutil.copytree(output, copy)
  same, count = _copy_images(images_with_junk, tmp_path / 'same')
  code, summary, out = _monitor(copy, same, capsys)
  assert code == EXIT_OK, out.out
  assert summary['serving_examples'] == count
  assert set(summary['features']) == {'height', 'width', 'channels', 'brightness', 'contrast'}
  brighter = lambda pixels: np.clip(pixels.astype(int) + 60, 0, 255).astype(np.uint8)
  bright, _ = _copy_images(images_with_junk, tmp_path / 'bright', brighter)
  code, summary, out = _monitor(copy, bright, capsys)
  assert code == EXIT_FAILED and 'brightness' in summary['flagged']
  assert summary['features']['brightness']['flagged']
  assert not {'height', 'width', 'channels'} & set(summary['flagged'])
  assert 'flagged brightness: skew: Jensen-Shannon divergence' in out.out


def test_id_columns_count_the_rows_that_differ_from_training(monitored, tmp_path, capsys):
  """Rows found again by id (taxi has no id column: a compound one, unique once the repeated
  rows are left out): the
  changed feature's mismatch count is the number of rows changed, the other features have none."""
  output, _, rows = monitored
  ids = ['trip_start_timestamp', 'pickup_latitude', 'trip_seconds']
  # tabular_run repeats some rows (copies share a split): only ids found once are unique.
  found = collections.Counter(tuple(r[c] for c in ids) for r in rows)
  rows = [r for r in rows if found[tuple(r[c] for c in ids)] == 1]
  changed = [dict(r) for r in rows]
  k = 7
  for row in changed[:k]:
    row['fare'] = str(float(row['fare']) + 1)
  path = _write_csv(tmp_path / 'ids.csv', changed)
  code, summary, out = _monitor(output, path, capsys, *[a for c in ids for a in ('--id-column', c)])
  assert code == EXIT_FAILED and summary['flagged'] == ['fare'], out.out
  skew = summary['feature_skew']
  assert int(skew['match_stats']['matchingPairsCount']) == len(rows)
  assert int(skew['features']['fare']['mismatchCount']) == k
  assert {n for n, f in skew['features'].items() if int(f.get('mismatchCount', 0))} == {'fare'}
  assert 'tips' not in skew['features'] and len(skew['sample_pairs']) == 5
  assert f'flagged fare: {k} serving rows differ' in out.out
