"""The model contract: a model file defines `build_model(spec, hp) -> keras.Model` and, optionally,
`search_space(hp)` (docs/models.md). The project's own models (trainer/models/) are such files;
`--model PATH.py` brings a user's.

- spec: what the Trainer knows about the data (trainer/data_spec.py: ImageSpec, TabularSpec,
  SequenceSpec); the model takes exactly what the input pipeline feeds (example_batch).
- hp: keras_tuner.HyperParameters, always holding `learning_rate`: the search space's defaults
  (with --learning-rate) when not tuning, the Tuner's best values when tuning.
- The model returns class probabilities [B, num_classes]; for regression (spec.regression, a
  TabularSpec), one number per example [B, 1] or [B]: the label standardized, (label -
  spec.label_mean) / spec.label_std (the project feeds it so and the signatures scale it back).
  It may come back uncompiled: the project compiles it (compile_model) with its loss and
  metrics, the learning rate from hp and XLA as planned (trainer/distribution.py). A model file
  may name its regression loss as `LOSS` ('mse', 'huber' or 'mae'; --loss wins).

A model that does not fit is refused before training with UnusableModel: one line, exit 2.
"""

import importlib
import types
from typing import Optional

import keras
import keras_tuner
import numpy as np

from contracts import trainer_options
from contracts.errors import UnusableModel, first_line
from trainer import models
from trainer.data_spec import ImageSpec, SequenceSpec, TabularSpec

LEARNING_RATE = 'learning_rate'
PROBABILITY_TOLERANCE = 1e-2  # rows of probabilities sum to 1 within this (float16 included)
EXAMPLE_ROWS = 2


def _one_line(error: BaseException) -> str:
  return f'{type(error).__name__}: {first_line(error)}' if str(error).strip() else first_line(error)


def model_name(options: trainer_options.TrainerOptions) -> str:
  """The model the options ask for: --model, else the data kind's built-in."""
  return options.model or models.DEFAULT[options.data_kind]


def load(name: str, source: str = '') -> types.ModuleType:
  """The model file: `source` run as a module named after the file, else trainer.models.<name>."""
  if source:
    module = types.ModuleType('model_file')
    module.__file__ = name
    try:
      exec(compile(source, name, 'exec'), module.__dict__)
    except Exception as e:
      raise UnusableModel(f'--model {name}: does not import ({_one_line(e)})') from None
  else:
    module = importlib.import_module(f'{models.__name__}.{name}')
  if not callable(getattr(module, 'build_model', None)):
    raise UnusableModel(f'--model {name}: defines no build_model(spec, hp)')
  return module


def hyperparameters(
  module: types.ModuleType, name: str, learning_rate: float, tuned: Optional[dict] = None
) -> keras_tuner.HyperParameters:
  """The search space (module.search_space, when defined) at its defaults with `learning_rate`,
  or at `tuned` values (HyperParameters.get_config(), as the Tuner's best_hyperparameters)."""
  if tuned:
    hp = keras_tuner.HyperParameters.from_config(tuned)
  else:
    hp = keras_tuner.HyperParameters()
    if hasattr(module, 'search_space'):
      try:
        module.search_space(hp)
      except Exception as e:
        raise UnusableModel(f'--model {name}: search_space(hp) failed ({_one_line(e)})') from None
    if LEARNING_RATE in hp.values:
      hp.values[LEARNING_RATE] = learning_rate
  if LEARNING_RATE not in hp.values:
    hp.Fixed(LEARNING_RATE, learning_rate)
  return hp


def example_batch(spec):
  """A batch of what the input pipeline feeds the model (zeros), and its description."""
  if isinstance(spec, ImageSpec):
    shape = (EXAMPLE_ROWS, spec.height, spec.width, spec.channels)
    return np.zeros(
      shape, np.uint8
    ), f'uint8 images [B, {spec.height}, {spec.width}, {spec.channels}]'
  if isinstance(spec, TabularSpec):
    lists = spec.list_lengths  # a list column: [B, N]
    batch = {
      key: np.zeros((EXAMPLE_ROWS, lists[key]) if key in lists else EXAMPLE_ROWS, np.float32)
      for key in spec.numeric
    }
    batch.update({key: np.zeros(EXAMPLE_ROWS, np.int64) for key in spec.categorical})
    described = ', '.join(
      f'{key} ({value.dtype.name} [{", ".join(["B", *map(str, value.shape[1:])])}])'
      for key, value in batch.items()
    )
    return batch, f'a dict of columns: {described}'
  if isinstance(spec, SequenceSpec):
    return np.ones((EXAMPLE_ROWS, 4), np.int64), 'int64 token ids [B, T]'
  raise TypeError(type(spec).__name__)


def build(module: types.ModuleType, name: str, spec, hp) -> keras.Model:
  """module.build_model(spec, hp), checked against the data (UnusableModel when it does not
  fit): a keras.Model that takes example_batch(spec) and returns probabilities per class."""
  try:
    built = module.build_model(spec, hp)
  except UnusableModel:
    raise
  except Exception as e:
    raise UnusableModel(f'--model {name}: build_model failed ({_one_line(e)})') from None
  if not isinstance(built, keras.Model):
    raise UnusableModel(
      f'--model {name}: build_model returned {type(built).__name__}, not a keras.Model'
    )
  batch, described = example_batch(spec)
  _check_input_shape(built, name, spec, described)
  try:
    outputs = built(batch, training=False)
  except Exception as e:
    raise UnusableModel(
      f"--model {name}: does not take the Trainer's input, {described} ({_one_line(e)})"
    ) from None
  if getattr(spec, 'regression', False):
    _check_numbers(outputs, name)
  else:
    _check_probabilities(outputs, name, spec.num_classes)
  return built


def regression_loss(module: types.ModuleType, name: str, asked: str) -> str:
  """The regression loss: --loss, else the model file's LOSS, else HUBER."""
  chosen = asked or getattr(module, 'LOSS', '') or trainer_options.HUBER
  if chosen not in trainer_options.LOSSES:
    raise UnusableModel(
      f'--model {name}: LOSS {chosen!r} is not one of {", ".join(trainer_options.LOSSES)}'
    )
  return chosen


def _check_numbers(outputs, name: str) -> None:
  """A regression model returns one finite number per example."""
  if isinstance(outputs, (dict, list, tuple)):
    raise UnusableModel(f'--model {name}: returns {len(outputs)} outputs; one is needed')
  values = np.asarray(outputs, np.float64)
  if values.shape not in ((EXAMPLE_ROWS,), (EXAMPLE_ROWS, 1)):
    shown = 'x'.join(str(d) for d in values.shape[1:]) or 'a scalar'
    raise UnusableModel(
      f'--model {name}: returns {shown} per example; regression needs one number per example '
      '([B, 1] or [B]: the label standardized)'
    )
  if not np.all(np.isfinite(values)):
    raise UnusableModel(f'--model {name}: returns inf or NaN on a batch of zeros')


def _check_input_shape(built: keras.Model, name: str, spec, described: str) -> None:
  """Images: the one input's shape, where the model states it (a functional model)."""
  try:
    inputs = built.inputs if isinstance(spec, ImageSpec) else None
  except (AttributeError, ValueError):  # a subclassed model: it is called with the batch
    inputs = None
  if not inputs:
    return
  wanted = (spec.height, spec.width, spec.channels)
  if len(inputs) != 1:
    raise UnusableModel(f'--model {name}: takes {len(inputs)} inputs; one is fed, {described}')
  shape = tuple(inputs[0].shape[1:])
  if len(shape) != 3 or any(got not in (None, want) for got, want in zip(shape, wanted)):
    raise UnusableModel(
      f'--model {name}: takes input shape {shape}; the data is fed as {described} '
      '(spec.height, spec.width, spec.channels)'
    )


def _check_probabilities(outputs, name: str, num_classes: int) -> None:
  if isinstance(outputs, (dict, list, tuple)):
    raise UnusableModel(f'--model {name}: returns {len(outputs)} outputs; one is needed')
  values = np.asarray(outputs, np.float64)
  if values.shape != (EXAMPLE_ROWS, num_classes):
    shown = 'x'.join(str(d) for d in values.shape[1:]) or 'a scalar'
    raise UnusableModel(
      f'--model {name}: returns {shown} per example; the data has {num_classes} classes '
      f'(probabilities [B, spec.num_classes] are needed)'
    )
  sums = values.sum(axis=-1)
  if (
    not np.all(np.isfinite(values))
    or values.min() < 0
    or np.abs(sums - 1).max() > PROBABILITY_TOLERANCE
  ):
    raise UnusableModel(
      f'--model {name}: its outputs are not class probabilities (a row sums to '
      f'{sums[0]:.3g}): end the model with a softmax'
    )


REGRESSION_METRIC = 'mean_absolute_error'  # of the standardized label while training
_LOSSES = {
  trainer_options.MSE: 'mean_squared_error',
  trainer_options.HUBER: 'huber',
  trainer_options.MAE: 'mean_absolute_error',
}


def compile_model(
  built: keras.Model,
  learning_rate: float,
  jit_compile: bool,
  xla_asked: bool = False,
  regression_loss: str = '',
) -> keras.Model:
  """The project's loss and metrics (what training.json and the report read), Adam at
  `learning_rate`; with jit_compile the train step is compiled by XLA. A model with a layer XLA
  cannot compile is refused when XLA was asked for (--xla on), else trained without it.
  regression_loss (one of trainer_options.LOSSES): a regression model, its loss and its mean
  absolute error on the standardized label."""
  if regression_loss:
    loss, metric = _LOSSES[regression_loss], REGRESSION_METRIC
  else:
    loss, metric = 'sparse_categorical_crossentropy', 'sparse_categorical_accuracy'
  built.compile(
    optimizer=keras.optimizers.Adam(learning_rate),
    jit_compile=jit_compile,
    loss=loss,
    metrics=[metric],
  )
  if jit_compile and not built.jit_compile and xla_asked:  # Keras turned XLA off
    unsupported = sorted(
      {layer.__class__.__name__ for layer in built._flatten_layers() if not layer.supports_jit}
    )
    raise UnusableModel(
      f'--xla on: XLA cannot compile layer(s) {", ".join(unsupported)} of the model; '
      'move that work into the input or pass --xla off'
    )
  return built
