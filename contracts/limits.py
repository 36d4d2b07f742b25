"""The range of each number the pipeline takes, in one table: `run` and `compile` check their
flags with it (cli/config_builder.py), `submit` and the local launcher their `--param` values
(kubeflow/parameters.py)."""

from typing import Callable, Dict, Tuple

_POSITIVE = (lambda value: value > 0, 'must be positive')


def _between(low: int, high: int) -> Tuple[Callable, str]:
  return (lambda value: low <= value <= high, f'must be between {low} and {high}')


def _zero_or_more(zero_means: str) -> Tuple[Callable, str]:
  return (lambda value: value >= 0, f'must be 0 ({zero_means}) or more')


# PipelineConfig field (a flag's dest, a pipeline parameter's name) → (test, what is wrong).
RULES: Dict[str, Tuple[Callable, str]] = {
  'eval_percent': _between(1, 99),
  'shard_size_mb': _POSITIVE,
  'train_steps': _POSITIVE,
  'batch_size': _POSITIVE,
  'learning_rate': _POSITIVE,
  'eval_steps': _zero_or_more('the default: the whole eval split'),
  'keep_reports': _zero_or_more("the default: every run's report kept"),
  'image_size': (
    lambda size: min(size) >= 0,
    'must be 0 (the default: decided from the data) or more',
  ),
  'max_image_side': _zero_or_more('sizes kept'),
  'min_accuracy': _between(0, 1),
  'max_accuracy_drop': _between(0, 1),
  'min_class_recall': _between(0, 1),
  'min_eval_examples': _zero_or_more('not checked'),
  'min_eval_class_examples': _zero_or_more('not checked'),
  'min_improvement': (lambda value: 0 <= value < 1, 'must be at least 0 and below 1'),
  'max_mae': _POSITIVE,
  'max_rmse': _POSITIVE,
  'max_error_increase': (lambda value: value >= 0, 'must be 0 or more'),
  'max_damaged_percent': _between(0, 100),
  'fine_tune_steps': (lambda value: value >= -1, 'must be 0 (no fine-tuning) or more'),
  'fine_tune_layers': _POSITIVE,
  'tune_trials': _zero_or_more('the default: no tuning'),
  'tune_steps': _POSITIVE,
  'seed': _between(0, 2**32 - 1),  # NumPy's seeds
  'beam_parallelism': _zero_or_more("the default: the cluster's own"),
}


def problem(name: str, value) -> str:
  """What is wrong with `value` as `name` ('' when nothing is, or no rule names it)."""
  test, wrong = RULES.get(name, (None, ''))
  return '' if test is None or test(value) else wrong
