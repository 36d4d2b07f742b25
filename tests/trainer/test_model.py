"""The model contract (trainer/model.py): a model file that does not fit the data is refused
with one line naming what is wrong; the built-ins train with their step compiled by XLA."""

import dataclasses
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from contracts import image_record
from contracts.errors import UnusableModel
from tests.support import built_models
from trainer import model, models
from trainer.data_spec import ImageSpec, SequenceSpec, TabularSpec

IMAGES = ImageSpec(8, 8, 1, ['a', 'b', 'c'], image_record.ENCODED, True)
COLUMNS = TabularSpec(
  'label',
  None,
  2,
  ['fare'],
  ['payment'],
  numeric_mean={'fare': 10.0},
  numeric_variance={'fare': 4.0},
)
TOKENS = SequenceSpec('label', 'tokens', tf.int64, ['neg', 'pos'], 50, hashed=True)
SPECS = {'cnn': IMAGES, 'mlp': COLUMNS, 'bag_of_words': TOKENS}

HEADER = 'import keras\n\n\n'
GOOD_BODY = """
def build_model(spec, hp):
  inputs = keras.Input((spec.height, spec.width, spec.channels), dtype='uint8')
  x = keras.layers.Flatten()(keras.layers.Rescaling(1 / 255)(inputs))
  return keras.Model(inputs, keras.layers.Dense({classes}, activation='{activation}')(x))
"""


def _checked(source: str, spec=IMAGES) -> keras.Model:
  module = model.load('my_model.py', source)
  return model.build(module, 'my_model.py', spec, model.hyperparameters(module, 'x', 1e-3))


def _refusal(source: str, spec=IMAGES) -> str:
  with pytest.raises(UnusableModel) as refused:
    _checked(source, spec)
  message = str(refused.value)
  assert message.startswith('--model my_model.py: ') and '\n' not in message
  return message


def test_a_model_file_that_fits_is_built_and_takes_the_learning_rate():
  source = HEADER + GOOD_BODY.format(classes='spec.num_classes', activation='softmax')
  module = model.load('my_model.py', source)
  hp = model.hyperparameters(module, 'my_model.py', 0.02)
  assert hp.get(model.LEARNING_RATE) == 0.02
  built = model.build(module, 'my_model.py', IMAGES, hp)
  assert built.output_shape == (None, 3)


@pytest.mark.parametrize(
  'source,expected',
  [
    ('import not_a_module_anywhere\n', 'does not import (ModuleNotFoundError: '),
    ('x = 1\n', 'defines no build_model(spec, hp)'),
    ('def build_model(spec, hp):\n  return 42\n', 'build_model returned int, not a keras.Model'),
    ('def build_model(spec, hp):\n  raise RuntimeError("no GPU")\n', 'build_model failed (Runtime'),
    (
      HEADER + GOOD_BODY.format(classes=7, activation='softmax'),
      'returns 7 per example; the data has 3 classes',
    ),
    (
      HEADER + GOOD_BODY.format(classes='spec.num_classes', activation='linear'),
      'its outputs are not class probabilities',
    ),
    (
      HEADER
      + GOOD_BODY.format(classes='spec.num_classes', activation='softmax').replace(
        '(spec.height, spec.width, spec.channels)', '(28, 28, 1)'
      ),
      'takes input shape (28, 28, 1); the data is fed as uint8 images [B, 8, 8, 1]',
    ),
  ],
  ids=['import', 'no-build_model', 'not-keras', 'raises', 'width', 'logits', 'input-shape'],
)
def test_a_model_that_does_not_fit_is_refused_in_one_line(source, expected):
  assert expected in _refusal(source)


def test_a_tabular_model_must_take_the_columns():
  wrong = HEADER + textwrap.dedent("""
    def build_model(spec, hp):
      inputs = keras.Input((3,))
      return keras.Model(inputs, keras.layers.Dense(2, activation='softmax')(inputs))
  """)
  message = _refusal(wrong, COLUMNS)
  assert (
    "does not take the Trainer's input, a dict of columns: fare (float32 [B]), payment" in message
  )
  with_list = dataclasses.replace(COLUMNS, numeric=['fare', 'pixels'], list_lengths={'pixels': 64})
  batch, described = model.example_batch(with_list)
  assert batch['pixels'].shape == (model.EXAMPLE_ROWS, 64)
  assert described.startswith('a dict of columns: fare (float32 [B]), pixels (float32 [B, 64]), ')


def test_the_tuned_values_replace_the_defaults():
  module = model.load('cnn')
  tuned = model.hyperparameters(module, 'cnn', 1e-3)
  tuned.values.update(learning_rate=0.005, dense_units=64)
  hp = model.hyperparameters(module, 'cnn', 1e-3, tuned.get_config())
  assert (hp.get('learning_rate'), hp.get('dense_units')) == (0.005, 64)


def test_a_layer_xla_cannot_compile_is_refused_when_xla_is_asked_for():
  inputs = keras.Input((), dtype='string')
  hashed = keras.layers.Hashing(8, output_mode='one_hot')(keras.layers.Reshape((1,))(inputs))
  built = keras.Model(inputs, keras.layers.Dense(2, activation='softmax')(hashed))
  with pytest.raises(UnusableModel, match='XLA cannot compile layer.s. Hashing'):
    model.compile_model(built, 1e-3, jit_compile=True, xla_asked=True)
  assert not model.compile_model(built, 1e-3, jit_compile=True).jit_compile  # auto: without


def _batches(spec, rows: int = 16):
  batch, _ = model.example_batch(spec)
  rng = np.random.default_rng(0)
  if isinstance(spec, ImageSpec):
    features = rng.integers(0, 256, (rows, spec.height, spec.width, spec.channels), np.uint8)
  elif isinstance(spec, TabularSpec):
    features = {
      'fare': rng.normal(10, 2, rows).astype(np.float32),
      'payment': rng.integers(0, 64, rows),
    }
  else:
    features = rng.integers(0, spec.vocabulary_size, (rows, 6))
  labels = rng.integers(0, spec.num_classes, rows)
  return tf.data.Dataset.from_tensor_slices((features, labels)).batch(8, drop_remainder=True)


@pytest.mark.parametrize('name', sorted(SPECS))
def test_every_built_in_model_trains_with_its_step_compiled_by_xla(name):
  """What a TPU needs: static shapes and no host-only op in the step (XLA on the CPU here)."""
  built = built_models.built_in(name, SPECS[name], jit_compile=True)
  assert built.jit_compile, 'Keras fell back to running the step without XLA'
  history = built.fit(_batches(SPECS[name]), epochs=1, steps_per_epoch=2, verbose=0).history
  assert np.isfinite(history['loss'][0])


@pytest.mark.slow  # 25-50 s each on 2 cores; XLA's CPU code generation would add 2-4 min more
@pytest.mark.parametrize('name', models.BACKBONES)
def test_every_backbone_train_step_lowers_to_xla(name):
  """Keras' own train step of each backbone model, lowered to XLA HLO (what a TPU compiles):
  lowering is where a host-only op or a dynamic shape fails."""
  spec = dataclasses.replace(IMAGES, height=32, width=32, channels=3)
  built = built_models.built_in(name, spec, jit_compile=True)
  assert built.jit_compile
  built.optimizer.build(built.trainable_variables)
  images, labels = next(iter(_batches(spec)))
  step = tf.function(built.train_step, jit_compile=True)
  hlo = step.experimental_get_compiler_ir((images, labels))(stage='hlo')
  assert 'ENTRY' in hlo and 'convolution' in hlo


def test_a_regression_model_returns_one_number_per_example_and_may_name_its_loss():
  spec = dataclasses.replace(COLUMNS, num_classes=1, task='regression', label_std=3.0)
  built = built_models.built_in('mlp', spec)
  assert built.loss == 'huber'  # the default
  classes = model.load('wide.py', _source('keras.layers.Dense(3)'))
  with pytest.raises(UnusableModel, match='returns 3 per example; regression needs one number'):
    model.build(classes, 'wide.py', spec, model.hyperparameters(classes, 'wide.py', 1e-3))
  module = model.load('mine.py', _source('keras.layers.Dense(1)') + "LOSS = 'mae'\n")
  assert model.regression_loss(module, 'mine.py', '') == 'mae'
  assert model.regression_loss(module, 'mine.py', 'mse') == 'mse'  # --loss wins
  odd = model.load('odd.py', _source('keras.layers.Dense(1)') + "LOSS = 'poisson'\n")
  with pytest.raises(UnusableModel, match="LOSS 'poisson' is not one of mse, huber, mae"):
    model.regression_loss(odd, 'odd.py', '')


def _source(head: str) -> str:
  """A tabular model file whose model ends with `head` over the `fare` column."""
  return textwrap.dedent(
    f"""
    import keras

    def build_model(spec, hp):
      fare = keras.Input(shape=(), name='fare')
      payment = keras.Input(shape=(), dtype='int64', name='payment')
      x = keras.layers.Reshape((1,))(fare)
      return keras.Model({{'fare': fare, 'payment': payment}}, {head}(x))
    """
  )
