"""keras.applications' mobilenet_v3_small as a model file (trainer/models/backbone.py: preprocessing, head)."""

from trainer.models import backbone

search_space = backbone.search_space


def build_model(spec, hp):
  return backbone.build('mobilenet_v3_small', spec, hp)
