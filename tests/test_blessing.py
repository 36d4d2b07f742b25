"""Only a model at least as good as the serving one is pushed, and an identical run re-runs
nothing: four real runs on one output."""

import os
import re

import pytest

from contracts.errors import EXIT_NOT_BLESSED, EXIT_OK
from metadata import summary
from tests.conftest import run_pipeline


def _store(output):
  return summary.open_store(os.path.join(output, 'metadata.sqlite'))


pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)


def test_a_worse_model_is_not_pushed_and_the_serving_one_stays(digits_subset, tmp_path, capsys):
  output = str(tmp_path / 'out')
  serving = os.path.join(output, 'serving')

  code, first = run_pipeline(digits_subset, output)
  assert code == EXIT_OK and first['blessed'] and first['pushed_to']
  assert first['blessing'].endswith('no serving model to compare with')
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
  assert sorted(os.listdir(serving)) == pushed  # the serving folder as it was

  # The same weak model with the accuracy thresholds off: a class it misses blocks it alone.
  code, missed = run_pipeline(
    digits_subset,
    output,
    '--train-steps',
    '1',
    *('--min-accuracy', '0', '--max-accuracy-drop', '1', '--min-class-recall', '0.9'),
  )
  assert code == EXIT_NOT_BLESSED and missed['executed'] == ['Evaluator', 'Pusher']
  weakest = min(missed['class_recall'], key=missed['class_recall'].get)
  assert re.fullmatch(
    rf'accuracy \S+, class {weakest} recall {missed["class_recall"][weakest]:.3f}: '
    r'below the 0.9 needed( \(\d+ classes\))?',
    missed['blessing'],
  )
  assert sorted(os.listdir(serving)) == pushed

  # The first run's settings again: its (cached) model against itself as the serving model.
  code, again = run_pipeline(digits_subset, output)
  assert code == EXIT_OK and again['blessed'] and again['pushed_to']
  assert again['blessing'] == (
    f'accuracy {again["eval_accuracy"]:.3f}, serving model {first["eval_accuracy"]:.3f}'
  )
  assert again['executed'] == ['Evaluator', 'Pusher']  # the Trainer's model was cached
  # Against the Evaluator's last execution (the class-recall run): its thresholds, its model.
  assert again['why_executed']['Evaluator'] == (
    'options changed (metrics_specs, min_accuracy 0.0 → 0.3); new inputs from upstream (model)'
  )

  capsys.readouterr()
  before = len(_store(output).get_artifacts())
  code, cached = run_pipeline(digits_subset, output)
  assert code == EXIT_OK and set(cached['components'].values()) == {'CACHED'}
  assert len(cached['components']) == len(first['components']) == 9  # the resolver is not one
  assert len(_store(output).get_artifacts()) == before  # nothing new published
  assert 'all cached' in capsys.readouterr().out
