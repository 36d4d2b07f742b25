"""Standard image backbones from keras.applications behind the model-file contract: each model
takes the Trainer's uint8 images and brings them to what its backbone expects inside the model
(so every signature still takes raw pixels or image bytes), then pools and classifies.

- Grayscale images are repeated into three channels (ImageNet weights are RGB).
- A side below MIN_SIDE is resized up to it inside the model (keras.applications refuses less).
- Each backbone's own preprocessing: MobileNetV3 and EfficientNet rescale and normalise 0-255
  themselves; ResNet50 wants Caffe's (BGR, ImageNet channel means subtracted), done here.
- The backbone is the layer named BACKBONE_LAYER. With pretrained weights it is called with
  training=False, so that its BatchNormalization layers stay in inference mode also when it is
  fine-tuned (trainer/fine_tune.py); with random weights they train like every other layer.

spec.weights says where the backbone's weights come from: IMAGENET (Keras downloads them once
into ~/.keras/models), NO_WEIGHTS (random: everything trains from the start) or a local Keras
weights file of the same backbone, as
`keras.applications.ResNet50(include_top=False, weights=None).save_weights('r.weights.h5')`
writes it (for machines without internet access).
"""

import contextlib
import io
import socket

import keras

from contracts.errors import UnusableModel, first_line
from contracts.trainer_options import IMAGENET, NO_WEIGHTS

MIN_SIDE = 32  # the smallest input keras.applications builds these backbones for
BACKBONE_LAYER = 'backbone'
FETCH_TIMEOUT_SECONDS = 60  # per socket operation of the weights' download
CAFFE_MEANS = (103.939, 116.779, 123.68)  # ImageNet's B, G, R means (resnet50.preprocess_input)
APPLICATIONS = {
  'mobilenet_v3_small': keras.applications.MobileNetV3Small,
  'efficientnet_b0': keras.applications.EfficientNetB0,
  'resnet50': keras.applications.ResNet50,
}


def search_space(hp) -> None:
  hp.Float('learning_rate', 1e-4, 1e-2, sampling='log', default=1e-3)
  hp.Choice('dropout', [0.0, 0.2, 0.4], default=0.2)


def application(name: str, input_shape=None, weights=None) -> keras.Model:
  """The headless keras.applications backbone `name` (weights: 'imagenet' or None)."""
  kwargs = dict(include_top=False, weights=weights, input_shape=input_shape)
  if name == 'mobilenet_v3_small':
    kwargs['include_preprocessing'] = True  # 0-255 in, as for EfficientNet
  return APPLICATIONS[name](**kwargs)


def fetch_imagenet(name: str) -> None:
  """Puts the ImageNet weights of `name` into Keras' cache (a download the first time). Keras
  downloads without a timeout: a network that accepts and never answers would hang the run.
  What Keras prints (`Downloading data from …`, its progress bar) is dropped: the caller says
  what went wrong in one line."""
  previous = socket.getdefaulttimeout()
  socket.setdefaulttimeout(FETCH_TIMEOUT_SECONDS)
  try:
    with contextlib.redirect_stdout(io.StringIO()):
      application(name, (224, 224, 3), weights=IMAGENET)  # the size the weights were made for
  finally:
    socket.setdefaulttimeout(previous)


def build(name: str, spec, hp) -> keras.Model:
  """uint8 [B, H, W, C] → backbone `name` → global average pooling → dropout → softmax."""
  inputs = keras.Input(shape=(spec.height, spec.width, spec.channels), dtype='uint8', name='image')
  x = keras.ops.cast(inputs, 'float32')
  if spec.channels == 1:
    x = keras.ops.repeat(x, 3, axis=-1)
  height, width = max(spec.height, MIN_SIDE), max(spec.width, MIN_SIDE)
  if (height, width) != (spec.height, spec.width):
    x = keras.layers.Resizing(height, width, name='to_backbone_minimum')(x)
  if name == 'resnet50':
    x = keras.ops.flip(x, axis=-1) - keras.ops.convert_to_tensor(CAFFE_MEANS)
  backbone = application(
    name, (height, width, 3), weights=IMAGENET if spec.weights == IMAGENET else None
  )
  if spec.weights not in (IMAGENET, NO_WEIGHTS):
    load_weights(backbone, name, spec.weights)
  backbone.name = BACKBONE_LAYER
  # Pretrained: BatchNormalization keeps the statistics it was trained with, also when its
  # backbone is fine-tuned. Random weights: it must learn them (MobileNetV3 from scratch with
  # frozen statistics stayed at chance on two classes of photos; with them: see docs/models.md).
  x = backbone(x, training=False) if spec.weights != NO_WEIGHTS else backbone(x)
  x = keras.layers.GlobalAveragePooling2D()(x)
  x = keras.layers.Dropout(hp.get('dropout'))(x)
  outputs = keras.layers.Dense(
    spec.num_classes, activation='softmax', name='probabilities', dtype='float32'
  )(x)
  return keras.Model(inputs, outputs, name=name)


def load_weights(backbone: keras.Model, name: str, path: str) -> None:
  try:
    backbone.load_weights(path)
  except Exception as e:  # a file of another backbone, or not a weights file
    raise UnusableModel(
      f'--weights {path}: not a weights file of {name} ({first_line(e)})'
    ) from None
