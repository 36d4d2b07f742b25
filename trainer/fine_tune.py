"""Training phases of a model whose pretrained part is the layer named `backbone`
(trainer/models/backbone.py; a user's model file may name a layer so too):

1. head: the backbone frozen, the new layers on top trained at the learning rate, for
   --train-steps;
2. fine_tune: the top --fine-tune-layers layers of the backbone unfrozen (BatchNormalization
   excluded: its layers stay frozen, and in inference mode since the backbone is called with
   training=False), trained with everything above them at FINE_TUNE_RATE_FACTOR × the learning
   rate for --fine-tune-steps (default: half of --train-steps).

Freezing first keeps the large gradients of a randomly initialised head from wrecking the
pretrained features (Keras' transfer-learning guide); the lower rate keeps fine-tuning from
forgetting them. Without pretrained weights there is nothing to keep: one phase, all trainable.
"""

import dataclasses
from typing import List, Optional

import keras
import numpy as np

from contracts.errors import UnusableModel
from contracts.trainer_options import NO_WEIGHTS, TrainerOptions
from trainer.models.backbone import BACKBONE_LAYER

FINE_TUNE_RATE_FACTOR = 0.1
HEAD, FINE_TUNE, TRAIN = 'head', 'fine_tune', 'train'


@dataclasses.dataclass
class Phase:
  name: str  # HEAD, FINE_TUNE or TRAIN (one phase, everything trainable)
  steps: int
  learning_rate: float
  unfrozen_layers: Optional[int] = None  # FINE_TUNE: backbone layers trained


def backbone_of(built: keras.Model) -> Optional[keras.Model]:
  return next((layer for layer in built.layers if layer.name == BACKBONE_LAYER), None)


def phases(
  built: keras.Model, options: TrainerOptions, weights: str, train_steps: int, rate: float
) -> List[Phase]:
  """The phases to train `built` in (weights: what the backbone started from)."""
  asked = options.fine_tune_steps
  if backbone_of(built) is None:
    if asked > 0:
      raise UnusableModel(
        f'--fine-tune-steps {asked}: the model has no layer named {BACKBONE_LAYER!r} to fine-tune'
      )
    return [Phase(TRAIN, train_steps, rate)]
  pretrained = weights != NO_WEIGHTS
  steps = asked if asked >= 0 else (train_steps // 2 if pretrained else 0)
  if not pretrained and not steps:
    return [Phase(TRAIN, train_steps, rate)]
  head = [Phase(HEAD, train_steps, rate)]
  if not steps:
    return head
  return head + [
    Phase(FINE_TUNE, steps, rate * FINE_TUNE_RATE_FACTOR, unfrozen_layers=options.fine_tune_layers)
  ]


def prepare(built: keras.Model, phase: Phase) -> None:
  """Sets what trains in `phase` (compile the model after this)."""
  backbone = backbone_of(built)
  if backbone is None or phase.name == TRAIN:
    return
  backbone.trainable = phase.name == FINE_TUNE
  if phase.name == HEAD:
    return
  tunable = [
    layer
    for layer in backbone._flatten_layers(include_self=False)
    if layer.weights and not isinstance(layer, keras.layers.BatchNormalization)
  ]
  for layer in backbone._flatten_layers(include_self=False):
    layer.trainable = False
  for layer in tunable[len(tunable) - phase.unfrozen_layers :] if phase.unfrozen_layers else []:
    layer.trainable = True


def record(phase: Phase, seconds: float, built: keras.Model) -> dict:
  """The phase as training.json records it (seconds: its fit's wall time)."""
  trainable = sum(int(np.prod(w.shape)) for w in built.trainable_weights)
  return dict(dataclasses.asdict(phase), seconds=round(seconds, 1), trainable_parameters=trainable)
