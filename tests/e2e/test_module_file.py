"""run --module-file with TFX's own taxi module file, unmodified, on a few hundred taxi rows:
Transform, run_fn, the Evaluator as TFX's template configures it, ServingCheck and the Pusher;
then an edit of run_fn alone trains again on Transform's cached output."""

import os
import shutil

import pytest

from tests.conftest import run_pipeline
from tests.support.tfx_data import TAXI_CSV, TAXI_MODULE

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
  assert result['serving_check']['serves'], result['serving_check']
  assert result['blessed'] and os.listdir(os.path.join(output, 'serving'))
  model_dir = os.path.join(output, 'serving', os.listdir(os.path.join(output, 'serving'))[0])
  assert 'saved_model.pb' in os.listdir(model_dir)  # TFX's SavedModel, pushed as written


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
