"""The project's own models, each a model file behind the contract of trainer/model.py (and
docs/models.md): `build_model(spec, hp) -> keras.Model` and an optional `search_space(hp)`.

`pipeline.py run --model NAME` picks one by its file name here; `--model PATH.py` takes a
user's file instead. Without --model, each kind of data has its default (DEFAULT). `gbt`
(gradient-boosted trees) is the one built-in that is not a Keras model: the Trainer grows it
with YDF (trainer/trees.py).
"""

from contracts import trainer_options

DEFAULT = {
  trainer_options.IMAGE: 'cnn',
  trainer_options.TABULAR: 'mlp',
  trainer_options.SEQUENCE: 'bag_of_words',
}
BACKBONES = ('mobilenet_v3_small', 'efficientnet_b0', 'resnet50')  # keras.applications, images
TREES = 'gbt'  # gradient-boosted trees: grown by YDF, not a Keras model
BUILT_IN = {  # name → the kind of data it takes
  'cnn': trainer_options.IMAGE,
  'mlp': trainer_options.TABULAR,
  'bag_of_words': trainer_options.SEQUENCE,
  **{name: trainer_options.IMAGE for name in BACKBONES},
  TREES: trainer_options.TABULAR,
}
