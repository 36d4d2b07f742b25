"""keras.applications' efficientnet_b0 as a model file (trainer/models/backbone.py: preprocessing, head)."""

from trainer.models import backbone

search_space = backbone.search_space


def build_model(spec, hp):
  return backbone.build('efficientnet_b0', spec, hp)
