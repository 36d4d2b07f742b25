"""Your model, not ours (docs/models.md), through whole pipeline runs on the digits subset: a
user's model file trains, is blessed, pushed and served; editing it re-runs the Trainer and what
follows only; --tune-trials runs TFX's Tuner, whose best values the Trainer trains with, and a
second identical run takes the Tuner from the cache; a backbone trains on 8×8 digits resized
inside the model; a model file that does not fit stops the run with one line, exit 2."""

import glob
import json
import os
import textwrap

import pytest

from contracts import artifacts
from contracts.errors import EXIT_BAD_INPUT
from tests.conftest import run_pipeline

pytestmark = pytest.mark.slow

MODEL_FILE = textwrap.dedent('''
  """A user's model: one hidden layer with a name of its own."""
  import keras

  UNITS = 64


  def search_space(hp):
    hp.Choice('units', [16, UNITS], default=UNITS)


  def build_model(spec, hp):
    inputs = keras.Input((spec.height, spec.width, spec.channels), dtype='uint8')
    x = keras.layers.Flatten()(keras.layers.Rescaling(1 / 255)(inputs))
    x = keras.layers.Dense(hp.get('units'), activation='relu', name='user_distinctive_dense')(x)
    return keras.Model(inputs, keras.layers.Dense(spec.num_classes, activation='softmax')(x))
''')
TUNE = ['--tune-trials', '3', '--tune-steps', '20']


def _training(output: str) -> dict:
  """The newest Trainer run's training.json (model_run/<execution id>/)."""
  runs = glob.glob(f'{output}/pipeline_root/Trainer/model_run/*/{artifacts.TRAINING_FILE}')
  with open(max(runs, key=lambda path: int(path.split(os.sep)[-2]))) as f:
    return json.load(f)


@pytest.fixture(scope='module')
def user_model(digits_subset, tmp_path_factory):
  """Four runs on one output: the model file; it edited; it tuned; that again. {name: (exit
  code, summary, training.json)}, the output folder and the model file."""
  folder = tmp_path_factory.mktemp('user_model')
  model_file, output = folder / 'my_model.py', str(folder / 'output')
  model_file.write_text(MODEL_FILE)
  runs = {}
  for name, extra in (('first', []), ('edited', []), ('tuned', TUNE), ('tuned again', TUNE)):
    if name == 'edited':
      model_file.write_text(MODEL_FILE.replace('UNITS = 64', 'UNITS = 48'))
    if name == 'tuned again':  # through TFX's cache, not cli/unchanged.py's answer
      os.utime(os.path.join(output, 'metadata.sqlite'))
    code, summary = run_pipeline(digits_subset, output, '--model', str(model_file), *extra)
    runs[name] = (code, summary, _training(output))
  return runs, output, str(model_file)


def test_a_model_file_trains_is_blessed_pushed_and_served(user_model):
  runs, output, model_file = user_model
  code, summary, training = runs['first']
  assert code == 0, summary.get('error')
  assert summary['blessed'] and summary['serving_check']['problems'] == []
  assert training['model'] == model_file and training['hyperparameters']['units'] == 64
  with open(os.path.join(summary['pushed_to'], 'saved_model.pb'), 'rb') as f:
    assert b'user_distinctive_dense' in f.read()


def test_editing_the_model_file_reruns_the_trainer_and_what_follows_only(user_model):
  runs, _, model_file = user_model
  _, summary, training = runs['edited']
  assert sorted(summary['executed']) == ['Evaluator', 'Pusher', 'ServingCheck', 'Trainer']
  assert model_file in summary['why_executed']['Trainer']
  assert training['hyperparameters']['units'] == 48


def test_the_tuner_picks_the_values_the_trainer_trains_with_and_is_cached_next_time(user_model):
  runs, output, _ = user_model
  _, tuned, training = runs['tuned']
  assert 'Tuner' in tuned['executed']
  trials = tuned['tuning']
  assert 1 <= len(trials) <= 3 and trials[0]['score'] == max(t['score'] for t in trials)
  best = {k: v for k, v in trials[0].items() if k not in ('trial_id', 'score')}
  assert training['tuned'] and {k: training['hyperparameters'][k] for k in best} == best
  _, again, _ = runs['tuned again']
  assert again['components']['Tuner'] == again['components']['Trainer'] == 'CACHED'
  # A pushed model is the next run's baseline: evaluated once more, alone (tests/e2e/test_blessing.py).
  assert again['executed'] == (
    ['Evaluator', 'Pusher', 'ServingCheck'] if tuned['pushed_to'] else []
  )


@pytest.mark.parametrize(
  'edit',
  [
    ('Dense(spec.num_classes', 'Dense(3'),
    ('import keras', 'import keras\nimport no_such_package'),
  ],
  ids=['output-width', 'import'],
)
def test_a_model_file_that_does_not_fit_stops_the_run_with_one_line(
  user_model, digits_subset, tmp_path, capsys, edit
):
  _, output, _ = user_model
  bad = tmp_path / 'bad_model.py'
  bad.write_text(MODEL_FILE.replace(*edit))
  capsys.readouterr()
  code, summary = run_pipeline(digits_subset, output, '--model', str(bad))
  errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith('error:')]
  assert code == EXIT_BAD_INPUT and 'Trainer' not in summary['executed']
  assert len(errors) == 1 and errors[0].startswith(f'error: --model {bad}: '), errors


def test_a_backbone_trains_on_the_digits_resized_inside_the_model(user_model, digits_subset):
  _, output, _ = user_model  # the data components come from the cache
  code, summary = run_pipeline(
    digits_subset,
    output,
    *['--model', 'mobilenet_v3_small', '--weights', 'none', '--train-steps', '40'],
    *['--min-accuracy', '0', '--allow-missed-classes', '--max-accuracy-drop', '1'],
  )
  assert code == 0, summary.get('error')
  training = summary['training']
  assert training['model'] == 'mobilenet_v3_small' and training['weights'] == 'none'
  assert [p['name'] for p in training['phases']] == ['train']
  assert summary['serving_check']['problems'] == []
  with open(os.path.join(summary['pushed_to'], 'saved_model.pb'), 'rb') as f:
    assert b'to_backbone_minimum' in f.read()
