"""run --module-file with TFX's own taxi module file, unmodified, on a few hundred taxi rows:
Transform, run_fn, the Evaluator as TFX's template configures it, ServingCheck and the Pusher;
then an edit of run_fn alone trains again on Transform's cached output. TFX's penguin Keras file
on its own tf.Examples: Transform to predict."""

import csv
import os
import shutil

import pytest

from cli import main as cli_main
from contracts import evaluation
from tests.conftest import run_pipeline
from tests.support.tfx_data import (
  PENGUIN_DIR,
  PENGUIN_MODULES,
  TAXI_CSV,
  TAXI_MODULE,
  penguin_split,
)

ROWS = 400
FEW = ('--train-steps', '20', '--eval-steps', '5', '--min-accuracy', '0')


@pytest.fixture(scope='module')
def taxi_module_run(tmp_path_factory):
  """(exit code, last_run.json, output, module file, data) of the first run."""
  folder = tmp_path_factory.mktemp('module_file')
  data = folder / 'taxi.csv'
  with open(TAXI_CSV) as src:
    data.write_text(''.join(line for _, line in zip(range(ROWS + 1), src)))
  (folder / 'user').mkdir()
  module = folder / 'user' / 'taxi_utils.py'
  shutil.copy(TAXI_MODULE, module)
  output = str(folder / 'out')
  extra = ('--label', 'tips', '--module-file', str(module), *FEW, '--allow-missed-classes')
  code, result = run_pipeline(str(data), output, *extra)
  return code, result, output, module, str(data), extra


@pytest.mark.slow
def test_transform_run_fn_evaluation_and_push(taxi_module_run):
  code, result, output, _, _, _ = taxi_module_run
  assert code == 0, result.get('error')
  assert 'Transform' in result['executed'] and 'Trainer' in result['executed']
  assert result['predicts'].startswith('2 classes (classification), scored against tips_xf')
  assert result['predicts'].endswith(
    "its output read as class 1's probability (above 0.5: class 1)"
  )
  assert result['serving_check']['serves'], result['serving_check']
  assert result['blessed'] and os.listdir(os.path.join(output, 'serving'))
  model_dir = os.path.join(output, 'serving', os.listdir(os.path.join(output, 'serving'))[0])
  assert 'saved_model.pb' in os.listdir(model_dir)  # TFX's SavedModel, pushed as written


@pytest.mark.slow
def test_monitor_measures_the_module_file_s_model_on_served_labelled_rows(
  taxi_module_run, tmp_path, capsys
):
  """The raw eval split served with `tips` (labels joined back): the model's accuracy on it is
  the Evaluator's, through its serving_default and transform_features (metadata/model_answers)."""
  import glob
  import json

  from cli import main as cli_main

  _, result, output, _, _, _ = taxi_module_run
  copy = tmp_path / 'out'  # monitor records its run in the store: a copy of it
  shutil.copytree(output, copy)
  (served,) = glob.glob(
    str(copy / 'pipeline_root' / 'CsvExampleGen' / 'examples' / '*' / 'Split-eval')
  )
  code = cli_main.main(['monitor', '--output', str(copy), '--serving-data', served])
  printed = capsys.readouterr().out
  assert code in (0, 1), printed
  (summary,) = glob.glob(str(copy / 'monitoring' / '*' / 'monitoring.json'))
  with open(summary) as f:
    performance = json.load(f)['performance']
  assert performance['task'] == 'classification' and not performance['flagged'], performance
  accuracy = performance['figures'][evaluation.ACCURACY_KEY]
  assert accuracy == pytest.approx(result['eval_accuracy'], abs=1e-6)


@pytest.mark.slow
def test_run_fn_edit_trains_again_on_cached_transform(taxi_module_run):
  _, _, output, module, data, extra = taxi_module_run
  text = module.read_text()
  module.write_text(text.replace('first_dnn_layer_size = 100', 'first_dnn_layer_size = 60'))
  # 20 steps: the retrained model may fall below the serving one; blessing is not this test's
  code, result = run_pipeline(data, output, *extra, '--max-accuracy-drop', '1')
  assert code == 0, result.get('error') or result.get('blessing')
  assert 'Transform' in result['cached'] and 'Trainer' in result['executed']
  assert str(module) in result['why_executed']['Trainer']
  # the Evaluator ran for the new model; --max-accuracy-drop changed its eval_config alone
  # (issue 67: eval_config and regression_eval_config were read as one, in ML Metadata's
  # order: 'options changed (metrics_specs, model_specs)')
  evaluator = result['why_executed']['Evaluator']
  assert evaluator.startswith('options changed (eval_config.metrics_specs); new inputs'), evaluator


@pytest.fixture(scope='module')
def penguin_module_run(tmp_path_factory):
  """TFX's penguin Keras module file and the base module beside it, copied out unmodified, on
  the penguin tf.Examples TFX's tests use (Split-train, Split-eval), without --eval-steps:
  (exit code, last_run.json, output, folder)."""
  folder = tmp_path_factory.mktemp('penguin')
  for split in ('train', 'eval'):
    (folder / 'data' / f'Split-{split}').mkdir(parents=True)
    shutil.copy(penguin_split(split), folder / 'data' / f'Split-{split}')
  for name in PENGUIN_MODULES:
    shutil.copy(os.path.join(PENGUIN_DIR, name), folder / name)
  output = str(folder / 'out')
  module = str(folder / PENGUIN_MODULES[0])
  extra = ('--label', 'species', '--module-file', module, '--allow-missed-classes')
  code, result = run_pipeline(str(folder / 'data'), output, *extra)
  return code, result, output, folder, extra


def _unlabelled(source: str, destination: str) -> list:
  """The split's tf.Examples without species, written to `destination`: their labels."""
  import tensorflow as tf

  labels = []
  with tf.io.TFRecordWriter(destination) as writer:
    for record in tf.data.TFRecordDataset(source, 'GZIP'):
      example = tf.train.Example.FromString(record.numpy())
      labels.append(example.features.feature.pop('species').int64_list.value[0])
      writer.write(example.SerializeToString())
  return labels


@pytest.mark.slow
def test_penguin_keras_file_runs_unmodified_and_predicts_classes(penguin_module_run, capsys):
  """Transform, run_fn (its eval one pass: no --eval-steps), the Evaluator on its 3-wide logits,
  the Pusher; predict gives the Evaluator's top classes; the same command again runs nothing."""
  code, result, output, folder, extra = penguin_module_run
  assert code == 0, result.get('error')
  assert {'Transform', 'Trainer', 'Evaluator', 'Pusher'} <= set(result['executed'])
  assert result['predicts'].startswith('3 classes (classification), scored against species_xf')
  assert result['blessed'] and result['pushed_to']
  with open(result['log']) as f:
    assert 'eval_steps: 10, one pass over 100 eval records' in f.read()  # its eval batch is 10

  labels = _unlabelled(penguin_split('eval'), str(folder / 'unlabelled.tfrecord'))
  out = str(folder / 'predictions.csv')
  assert (
    cli_main.main(
      ['predict', '--data', str(folder / 'unlabelled.tfrecord'), '--output', output, '--out', out]
    )
    == 0
  )
  with open(out, newline='') as f:
    rows = list(csv.DictReader(f))
  assert len(rows) == len(labels) == result['examples_per_split']['eval']
  probabilities = [float(row['probability']) for row in rows]
  assert all(1 / 3 <= p <= 1 for p in probabilities)  # the top class's softmax, not a logit
  right = sum(int(row['class']) == label for row, label in zip(rows, labels))
  assert right / len(rows) == pytest.approx(result['eval_accuracy'])

  capsys.readouterr()
  code, again = run_pipeline(str(folder / 'data'), output, *extra)
  assert code == 0 and again['run_id'] == result['run_id']  # answered with the first run's
  assert 'components: none run: ' in capsys.readouterr().out


@pytest.mark.slow
def test_preprocessing_fn_edit_runs_transform_with_the_last_analyzer_cache(taxi_module_run):
  """One more z-scored feature: Transform executes again and reads the analyzers it computed
  before from the last run's TransformCache (no input of the node: the re-runs above were cached)."""
  _, _, output, module, data, extra = taxi_module_run
  text = module.read_text()
  edited = text.replace(
    "['trip_miles', 'fare', 'trip_seconds']",
    "['trip_miles', 'fare', 'trip_seconds', 'trip_start_timestamp']",
  )
  assert edited != text
  module.write_text(edited)
  code, result = run_pipeline(data, output, *extra, '--max-accuracy-drop', '1')
  assert code == 0, result.get('error') or result.get('blessing')
  assert 'Transform' in result['executed']
  cache = result['transform_cache']
  assert cache['from'] and cache['from_cache'] >= 9 and cache['computed'] >= 1, cache
