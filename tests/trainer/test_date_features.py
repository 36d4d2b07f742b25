"""trainer/date_features: dates read in the graph as contracts/dates reads them, learned from (the
issue's case: a date and a timestamp drive the label), and served alike from a raw tf.Example."""

import csv
import dataclasses
import datetime
import types

import numpy as np
import pytest
import tensorflow as tf

from cli import main as cli_main
from contracts import dates, predictions, serving
from contracts.errors import EXIT_OK, UnusableData
from contracts.trainer_options import REGRESSION
from tests.support import built_models, tabular_rows
from trainer import date_features, signatures, tabular_input, trees
from trainer.data_spec import TabularSpec


def _cells(count: int, seed: int = 0) -> list:
  """Dates from 1900 to 2100 in every form, with times, fractions and zones."""
  rng = np.random.default_rng(seed)
  found = []
  for i in range(count):
    day = datetime.date(1900, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 73000)))
    clock = f'{rng.integers(0, 24):02d}:{rng.integers(0, 60):02d}'
    zone = ['', 'Z', '+05:30', '-0800'][i % 4]
    found += [
      f'{day.isoformat()}T{clock}:{rng.integers(0, 60):02d}.{rng.integers(0, 999):03d}{zone}',
      f'{day.isoformat()} {clock}',
      day.strftime('%d/%m/%Y') + (f' {clock}' if i % 2 else ''),
      day.strftime('%d.%m.%Y'),
    ]
  return found


@pytest.mark.parametrize(
  'form, order', [(dates.ISO, dates.YMD), (dates.SLASH, dates.DMY), (dates.DOTTED, dates.DMY)]
)
def test_the_graph_reads_every_cell_as_the_python_rule(form, order):
  extra = ['2024-02-29', '29/02/2024', '29.02.2024', '2023-02-29', '31/04/2024', 'soon', '']
  cells = _cells(200) + extra
  got = date_features.features(tf.constant(cells), f'{form} {order}')
  for i, cell in enumerate(cells):
    expected = dates.parse(cell, form, order)
    if expected is None:
      assert all(np.isnan(got[key][i].numpy()) for key in dates.FEATURES), cell
      continue
    for key in dates.FEATURES:
      tolerance = 1e-3 if key == 'days' else 0  # float32: ~2 minutes in 2100
      assert got[key][i].numpy() == pytest.approx(expected[key], abs=tolerance, rel=1e-6), (
        cell,
        key,
      )
  leap = date_features.features(tf.constant(['2024-02-29T06:00:00']), 'iso ymd')
  assert leap['day_of_year'].numpy()[0] == 60 and leap['day_of_week'].numpy()[0] == 3  # Thu


def test_an_order_no_cell_decides_stops_in_one_line_naming_the_column_and_the_flag():
  sample = {'when': ['05/03/2024', '01/02/2024'], 'store': ['a', 'b']}
  with pytest.raises(UnusableData, match=r"column 'when'.*--date-order dmy") as caught:
    date_features.decided(sample, '', 'the first 2 train rows')
  assert '\n' not in str(caught.value)
  assert date_features.decided(sample, dates.DMY, 'x')['when'].order == dates.DMY


def _issue_rows(count: int, seed: int) -> list:
  """(date, timestamp, y): y from the date's day of year and the timestamp's time of day."""
  rng = np.random.default_rng(seed)
  found = []
  for _ in range(count):
    day = datetime.date(2024, 3, 5) + datetime.timedelta(days=int(rng.integers(0, 665)))
    stamp = datetime.datetime(2024, 1, 1) + datetime.timedelta(
      seconds=int(rng.integers(0, 700 * 86400))
    )
    of_day = stamp.hour * 3600 + stamp.minute * 60 + stamp.second
    y = 10 * np.sin(2 * np.pi * day.timetuple().tm_yday / 365) + 8 * np.cos(
      2 * np.pi * of_day / 86400
    )
    found.append((day.isoformat(), stamp.isoformat(), float(y + rng.normal(0, 0.3))))
  return found


def _example(date: str, stamp: str, y=None) -> bytes:
  text = lambda v: tf.train.Feature(bytes_list=tf.train.BytesList(value=[v.encode()]))  # noqa: E731
  feature = {'date': text(date), 'timestamp': text(stamp)}
  if y is not None:
    feature['y'] = tf.train.Feature(float_list=tf.train.FloatList(value=[y]))
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _write(path: str, rows) -> str:
  return tabular_rows.write(path, rows, _example)


def _specs(rows, train: str):
  """(the spec that hashes both columns as categories, the spec that reads them as dates, as
  the Trainer's setup does: the sample's means and variances, the summary's line)."""
  labels = np.array([row[2] for row in rows])
  hashed = TabularSpec(
    'y', None, 1, [], ['date', 'timestamp'], task=REGRESSION, label_mean=labels.mean()
  )
  hashed = dataclasses.replace(hashed, label_std=float(labels.std()))
  batch = next(iter(tf.data.TFRecordDataset(train).batch(4096)))
  present = tf.io.parse_example(batch, hashed.parse_spec())
  spec, present, line = date_features.read_sample(hashed, present, '', 'the sample')
  values = {key: present[key].flat_values.numpy() for key in spec.numeric}
  spec = dataclasses.replace(
    spec,
    numeric_mean={key: float(np.nanmean(v)) for key, v in values.items()},
    numeric_variance={key: float(np.nanvar(v)) for key, v in values.items()},
  )
  return hashed, spec, line


def test_a_date_and_a_timestamp_that_drive_the_label_are_learned(tmp_path):
  rows = _issue_rows(1500, 1)
  train = _write(str(tmp_path / 'train'), rows)
  evaluation = _write(str(tmp_path / 'eval'), _issue_rows(400, 2))
  hashed, spec, line = _specs(rows, train)
  assert line.startswith("'date' (ISO, 2024-03-05 … 2025-12-2")
  assert 'timestamp' in spec.dates and 'date.day_of_year' in spec.numeric
  assert 'date.hour' not in spec.numeric  # a date alone has no time of day
  assert spec.categorical == []
  fn_args = types.SimpleNamespace(
    train_files=[train], eval_files=[evaluation], hyperparameters=None, working_dir=str(tmp_path)
  )
  read = trees.grow(fn_args, spec, None, seed=1, loss='mse').history['val_mean_absolute_error']
  categories = trees.grow(fn_args, hashed, None, seed=1, loss='mse')
  assert read[0] < 1.5  # the label's deviation is ~9: learned
  assert read[0] < 0.3 * categories.history['val_mean_absolute_error'][0]


def test_serving_default_on_a_raw_example_predicts_what_the_model_did_in_training(tmp_path):
  rows = _issue_rows(300, 3)
  train = _write(str(tmp_path / 'train'), rows)
  _, spec, _ = _specs(rows, train)
  built = built_models.built_in('mlp', spec)
  data = tabular_input.tabular_dataset(train, spec, 64, False)
  built.fit(data, epochs=1, verbose=0)
  path = str(tmp_path / 'out' / 'serving' / '1')
  signatures.attach_assets(built, [], [], str(tmp_path), regression=True)  # as the Trainer saves
  signatures.attach_columns(built, spec, str(tmp_path))
  tf.saved_model.save(built, path, signatures=signatures.tabular_signatures(built, spec))
  loaded = tf.saved_model.load(path)
  asked = [(d, t) for d, t, _ in rows[:5]] + [('soon', '2024-02-29T23:00:00+01:00')]
  raw = tf.constant([_example(d, t) for d, t in asked])
  in_training = built(tabular_input.parse_tabular(raw, spec, with_label=False), training=False)
  expected = in_training.numpy()[:, 0] * spec.label_std + spec.label_mean
  served = loaded.signatures[serving.SERVING_DEFAULT](examples=raw)[serving.PREDICTION]
  np.testing.assert_allclose(served.numpy(), expected, rtol=1e-5, atol=1e-4)
  by_column = loaded.signatures[serving.COLUMNS](
    date=tf.constant([d for d, _ in asked]), timestamp=tf.constant([t for _, t in asked])
  )[serving.PREDICTION]
  np.testing.assert_allclose(by_column.numpy(), expected, rtol=1e-5, atol=1e-4)
  # `predict` on a CSV of the columns (no label) sends the strings as written: the same numbers
  data = tmp_path / 'new.csv'
  data.write_text('date,timestamp\n' + ''.join(f'{d},{t}\n' for d, t in asked))
  out = tmp_path / 'predictions.csv'
  argv = ['predict', '--data', str(data), '--output', str(tmp_path / 'out'), '--out', str(out)]
  assert cli_main.main(argv) == EXIT_OK
  with open(out, newline='') as f:
    predicted = [float(row[predictions.PREDICTION]) for row in csv.DictReader(f)]
  np.testing.assert_allclose(predicted, expected, rtol=1e-5, atol=1e-4)
