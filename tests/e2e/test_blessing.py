"""Only a model at least as good as the serving one, that serves, is pushed, an identical run
re-runs nothing, and a serving model with other classes is not compared: real runs on one output."""

import json
import os
import re
import shutil

import numpy as np
import pytest
import tensorflow as tf

from cli import main as cli_main
from contracts import serving as signature_names
from contracts.errors import EXIT_BAD_INPUT, EXIT_NOT_BLESSED, EXIT_NOT_SERVABLE, EXIT_OK
from metadata import run_reader
from tests.conftest import run_pipeline
from trainer import image_input, signatures


def _store(output):
  return run_reader.open_store(os.path.join(output, 'metadata.sqlite'))


pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)


def _inverting_image_bytes(image_signatures):
  """image_signatures whose predict_image_bytes inverts the pixels that serving_default does
  not: the training/serving skew a raw-input signature can have."""

  def broken(model, spec):
    served = image_signatures(model, spec)
    image_bytes = tf.TensorSpec([None], tf.string, name=signature_names.IMAGE_BYTES_INPUT)

    @tf.function(input_signature=[image_bytes])
    def inverted(image_bytes):
      images = 255 - image_input.decode_encoded(image_bytes, spec)
      return {signature_names.PROBABILITIES: model(images, training=False)}

    served[signature_names.IMAGE_BYTES] = inverted
    return served

  return broken


def test_a_worse_model_is_not_pushed_and_the_serving_one_stays(
  digits_subset, tmp_path, capsys, monkeypatch
):
  output = str(tmp_path / 'out')
  serving = os.path.join(output, 'serving')

  code, first = run_pipeline(digits_subset, output)
  assert code == EXIT_OK and first['blessed'] and first['pushed_to']
  assert first['blessing'] == (
    f'accuracy {first["eval_accuracy"]:.3f}, every class predicted; no serving model to compare with'
  )
  checked = first['serving_check']  # in a process of its own, every signature
  assert checked['serves'] and checked['problems'] == [] and checked['pid'] != os.getpid()
  assert set(checked['signatures']) == {
    signature_names.SERVING_DEFAULT,
    signature_names.IMAGE_BYTES,
    signature_names.TRANSFORM,
    signature_names.BULK_INFERENCE,
  }
  assert all(0 < t['p50_ms'] <= t['p99_ms'] for t in checked['signatures'].values())
  pushed = sorted(os.listdir(serving))

  capsys.readouterr()
  code, weak = run_pipeline(digits_subset, output, '--train-steps', '1')
  assert code == EXIT_NOT_BLESSED
  assert weak['blessed'] is False and weak['pushed_to'] is None
  assert weak['serving_accuracy'] == pytest.approx(first['eval_accuracy'])
  assert weak['blessing'] == (
    f'accuracy {weak["eval_accuracy"]:.3f}, serving model {first["eval_accuracy"]:.3f}: '
    'more than 0.01 below'
  )
  out = capsys.readouterr().out
  assert f'blessed:    no ({weak["blessing"]})' in out.splitlines()
  assert 'serving_check' not in weak and 'serving:' not in out  # not blessed: not loaded
  assert sorted(os.listdir(serving)) == pushed  # the serving folder as it was

  # The same weak model with the accuracy thresholds off: a class it misses blocks it alone.
  code, missed = run_pipeline(
    digits_subset,
    output,
    '--train-steps',
    '1',
    *('--min-accuracy', '0', '--max-accuracy-drop', '1', '--min-class-recall', '0.9'),
  )
  assert code == EXIT_NOT_BLESSED
  assert missed['executed'] == ['Evaluator', 'Pusher', 'ServingCheck']
  weakest = min(missed['class_recall'], key=missed['class_recall'].get)
  assert re.fullmatch(
    rf'accuracy \S+, class {weakest} recall {missed["class_recall"][weakest]:.3f}: '
    r'below the 0.9 needed( \(\d+ classes\))?',
    missed['blessing'],
  )
  assert sorted(os.listdir(serving)) == pushed

  # The first run's settings again: its (cached) model is the serving model. It is evaluated
  # alone, not against itself, and not pushed a second time.
  code, again = run_pipeline(digits_subset, output)
  assert code == EXIT_OK and again['blessed'] and again['pushed_to'] is None
  assert again['serving_accuracy'] is None
  assert again['blessing'] == (
    f'accuracy {again["eval_accuracy"]:.3f}, every class predicted; '
    'it is the serving model (not compared with itself)'
  )
  assert again['already_serving'] == first['pushed_to']
  assert sorted(os.listdir(serving)) == pushed  # no second version of the same model
  assert again['executed'] == ['Evaluator', 'Pusher', 'ServingCheck']  # the model was cached
  # Against the Evaluator's last execution (the class-recall run): its thresholds, its model.
  assert again['why_executed']['Evaluator'] == (
    'options changed (metrics_specs, min_accuracy 0.0 → 0.3); new inputs from upstream (model, '
    'model_run)'
  )

  # The same command once more, nothing changed: answered at once (cli/unchanged.py).
  capsys.readouterr()
  code, _ = run_pipeline(digits_subset, output)
  assert code == EXIT_OK and 'components: none run: ' in capsys.readouterr().out
  # Through TFX (the store written since, as another command may): every component cached.
  os.utime(os.path.join(output, 'metadata.sqlite'))
  before = len(_store(output).get_artifacts())
  code, cached = run_pipeline(digits_subset, output)
  assert code == EXIT_OK and set(cached['components'].values()) == {'CACHED'}
  assert len(cached['components']) == len(first['components']) == 10  # the resolver is not one
  assert len(_store(output).get_artifacts()) == before  # nothing new published
  out = capsys.readouterr().out
  assert 'all cached' in out
  assert f'pushed to:  not again: already serving as {first["pushed_to"]}' in out.splitlines()

  # A model as good as the serving one whose raw-input signature disagrees with serving_default.
  pushed = sorted(os.listdir(serving))
  monkeypatch.setattr(
    signatures, 'image_signatures', _inverting_image_bytes(signatures.image_signatures)
  )
  code, broken = run_pipeline(
    digits_subset, output, '--train-steps', '149', '--max-accuracy-drop', '1'
  )
  assert code == EXIT_NOT_SERVABLE and broken['blessed'] and broken['pushed_to'] is None
  (problem,) = broken['serving_check']['problems']
  assert problem.startswith(
    f"{signature_names.IMAGE_BYTES}: probabilities differ from {signature_names.SERVING_DEFAULT}'s"
  )
  assert f'serving:    failed ({problem})' in capsys.readouterr().out.splitlines()
  with open(broken['report'], encoding='utf-8') as f:
    assert 'It does not serve: predict_image_bytes: probabilities differ' in f.read()
  assert sorted(os.listdir(serving)) == pushed

  # Lineage credits each model with its own figures: the serving model was the baseline of the
  # refused runs, with its own accuracy there, not the refused candidate's.
  answer = tmp_path / 'lineage.json'
  answer.write_text('kept')
  capsys.readouterr()
  assert cli_main.main(['lineage', '--output', output, '--json', str(answer)]) == EXIT_BAD_INPUT
  assert 'already exists' in capsys.readouterr().err and answer.read_text() == 'kept'
  assert cli_main.main(['lineage', '--output', output, '--json', str(answer), '--overwrite']) == 0
  lines = capsys.readouterr().out.splitlines()
  models = json.loads(answer.read_text())['models']
  (served,) = [m for m in models if m['pushed_to'] == [first['pushed_to']]]
  (refused,) = [m for m in models if all(e['blessed'] is False for e in m['evaluations'])]
  assert {(e['role'], e['blessed']) for e in refused['evaluations']} == {('candidate', False)}
  assert weak['eval_accuracy'] in [e['accuracy'] for e in refused['evaluations']]
  assert {e['against'] for e in refused['evaluations']} == {served['model_id']}
  as_baseline = [e for e in served['evaluations'] if e['against'] == refused['model_id']]
  assert as_baseline and {e['role'] for e in as_baseline} == {'baseline'}
  assert {e['against_blessed'] for e in as_baseline} == {False}
  assert all(e['accuracy'] == pytest.approx(first['eval_accuracy']) for e in as_baseline)
  assert weak['eval_accuracy'] not in [e['accuracy'] for e in served['evaluations']]
  (line,) = [x for x in lines if x.startswith(f'  model #{served["model_id"]} ')]
  assert (
    f'baseline on #{served["trained_on"]} against model #{refused["model_id"]} (not blessed): '
    f'accuracy {first["eval_accuracy"]:.4f}'
  ) in line
  # A class folder removed, then back: the serving model's class ids are not the eval labels',
  # so it is not scored by them (it was: 0.000 on digits it knew by name); the candidate is
  # judged on its own thresholds, and pushed.
  monkeypatch.undo()  # signatures that agree again
  nine = str(tmp_path / 'nine')
  shutil.copytree(
    digits_subset, nine, ignore=lambda folder, _: ['9'] if folder == digits_subset else []
  )
  code, removed = run_pipeline(nine, output)
  assert code == EXIT_OK and removed['blessed'] and removed['pushed_to']
  assert removed['serving_accuracy'] is None and '9' not in removed['class_recall']
  refused = (
    'not compared with the serving model, whose classes differ ({}): judged on its own thresholds'
  )
  assert removed['blessing'].endswith('; ' + refused.format('only it has 9'))
  assert f'blessed:    yes ({removed["blessing"]})' in capsys.readouterr().out.splitlines()
  code, back = run_pipeline(digits_subset, output)  # the first run's model, cached
  assert back['executed'] == ['Evaluator', 'Pusher', 'ServingCheck']
  assert code == EXIT_OK and back['pushed_to'] and back['serving_accuracy'] is None
  assert back['blessing'].endswith('; ' + refused.format('only this model has 9'))


def test_a_model_that_never_predicts_the_minority_class_is_not_pushed(tmp_path, capsys):
  """990:10-like labels on features that say nothing: always answering the majority class
  scores above --min-accuracy, and is still not blessed unless --allow-missed-classes. Then a
  table of other columns on the same output: the serving model cannot read it, so it is not
  compared (the blessing says why) and the new model is judged on its own thresholds."""
  rng = np.random.default_rng(0)
  data = tmp_path / 'rare.csv'
  rows = [
    f'{x:.4f},{y:.4f},{int(i % 33 == 0)}' for i, (x, y) in enumerate(rng.normal(size=(1000, 2)))
  ]
  data.write_text('x,y,label\n' + '\n'.join(rows) + '\n')
  output = str(tmp_path / 'out')

  code, rare = run_pipeline(str(data), output, '--label', 'label', '--min-accuracy', '0.9')
  assert code == EXIT_NOT_BLESSED and rare['blessed'] is False and rare['pushed_to'] is None
  assert rare['eval_accuracy'] >= 0.9 and list(rare['missed_classes']) == ['1']
  assert rare['missed_classes']['1']['judged']
  examples = rare['missed_classes']['1']['examples']
  assert rare['blessing'] == (
    f'accuracy {rare["eval_accuracy"]:.3f}, class 1 never predicted ({examples} eval examples): '
    'a model that misses a class is not pushed (--allow-missed-classes pushes it)'
  )
  assert f'blessed:    no ({rare["blessing"]})' in capsys.readouterr().out.splitlines()
  assert not os.path.exists(os.path.join(output, 'serving'))

  code, allowed = run_pipeline(
    str(data), output, '--label', 'label', '--min-accuracy', '0.9', '--allow-missed-classes'
  )
  assert code == EXIT_OK and allowed['pushed_to']
  assert allowed['executed'] == ['Evaluator', 'Pusher', 'ServingCheck']
  assert 'class 1 never predicted' in allowed['blessing'] and 'allowed' in allowed['blessing']

  other = tmp_path / 'other.csv'
  noisy = rng.normal(size=(300, 2))  # the label is z's sign, with noise: no column alone gives it
  rows = [f'{"ab"[i % 2]},{z:.4f},{int(z + e > 0)}' for i, (z, e) in enumerate(noisy)]
  other.write_text('x,z,kind\n' + '\n'.join(rows) + '\n')
  code, retrained = run_pipeline(str(other), output, '--label', 'kind')
  assert code == EXIT_OK and retrained['pushed_to'] != allowed['pushed_to'], retrained['blessing']
  assert retrained['blessing'].endswith(
    '; serving model not compared: trained on other columns: it reads label, y, not in this '
    'data; x (float32, here string) of another type; new here: kind, z'
  )
