"""--weights FILE and the two phases (trainer/fine_tune.py) on a real backbone: the weights the
backbone starts from are the file's; the head phase leaves them as they are; fine-tuning changes
the unfrozen top only, and BatchNormalization's statistics in neither phase."""

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf

from contracts import image_record
from contracts.errors import UnusableModel
from contracts.trainer_options import NO_WEIGHTS, TrainerOptions
from tests.support import built_models
from trainer import fine_tune, model
from trainer.data_spec import ImageSpec
from trainer.models import backbone

SPEC = ImageSpec(8, 8, 1, ['a', 'b'], image_record.ENCODED, True)  # resized to 32×32 inside
LAYERS = 6


def _values(layer) -> list:
  return [w.numpy().copy() for w in layer.weights]


def _fit(built, phase) -> None:
  fine_tune.prepare(built, phase)
  model.compile_model(built, phase.learning_rate, jit_compile=False)
  rng = np.random.default_rng(1)
  images = rng.integers(0, 256, (32, 8, 8, 1), np.uint8)
  labels = rng.integers(0, 2, 32)
  built.fit(tf.data.Dataset.from_tensor_slices((images, labels)).batch(8), epochs=1, verbose=0)


@pytest.fixture(scope='module')
def weights_file(tmp_path_factory) -> str:
  keras.utils.set_random_seed(7)
  path = str(tmp_path_factory.mktemp('weights') / 'mobilenet.weights.h5')
  backbone.application('mobilenet_v3_small', weights=None).save_weights(path)
  return path


@pytest.mark.slow  # 24 s on 2 cores: two fits of a real backbone
def test_a_weights_file_is_loaded_kept_by_the_head_phase_and_fine_tuned_at_the_top(weights_file):
  saved = backbone.application('mobilenet_v3_small', (32, 32, 3), weights=None)
  saved.load_weights(weights_file)
  spec = dataclasses.replace(SPEC, weights=weights_file)
  module = model.load('mobilenet_v3_small')
  built = model.build(module, 'mobilenet_v3_small', spec, model.hyperparameters(module, 'm', 1e-2))
  net = fine_tune.backbone_of(built)
  start = [w.numpy() for w in net.weights]
  for got, want in zip(start, [w.numpy() for w in saved.weights]):
    np.testing.assert_array_equal(got, want)

  options = TrainerOptions(fine_tune_steps=4, fine_tune_layers=LAYERS)
  head, tune = fine_tune.phases(built, options, weights_file, train_steps=4, rate=1e-2)
  assert (head.name, tune.name, tune.learning_rate) == ('head', 'fine_tune', pytest.approx(1e-3))
  _fit(built, head)
  for got, want in zip(net.weights, start):
    np.testing.assert_array_equal(got.numpy(), want)

  tunable = [
    layer
    for layer in net._flatten_layers(include_self=False)
    if layer.weights and not isinstance(layer, keras.layers.BatchNormalization)
  ]
  norms = [layer for layer in net.layers if isinstance(layer, keras.layers.BatchNormalization)]
  before = {layer.name: _values(layer) for layer in tunable + norms}
  _fit(built, tune)
  changed = lambda layer: any(  # noqa: E731
    not np.array_equal(a, w.numpy()) for a, w in zip(before[layer.name], layer.weights)
  )
  assert all(changed(layer) for layer in tunable[-LAYERS:])
  assert not any(changed(layer) for layer in tunable[:-LAYERS])
  assert not any(changed(layer) for layer in norms)  # moving statistics too: inference mode


def test_a_weights_file_of_another_backbone_is_refused_in_one_line(weights_file):
  spec = dataclasses.replace(SPEC, weights=weights_file)
  module = model.load('resnet50')
  with pytest.raises(UnusableModel, match=r'^--weights .*: not a weights file of resnet50 \('):
    model.build(module, 'resnet50', spec, model.hyperparameters(module, 'r', 1e-3))


def test_without_pretrained_weights_everything_trains_in_one_phase():
  module = model.load('mobilenet_v3_small')
  built = model.build(module, 'mobilenet_v3_small', SPEC, model.hyperparameters(module, 'm', 1e-3))
  (only,) = fine_tune.phases(built, TrainerOptions(), NO_WEIGHTS, train_steps=10, rate=1e-3)
  assert (only.name, only.steps) == ('train', 10)
  with pytest.raises(UnusableModel, match='no layer named .backbone.'):
    fine_tune.phases(
      built_models.built_in('cnn', SPEC), TrainerOptions(fine_tune_steps=5), NO_WEIGHTS, 10, 1e-3
    )
