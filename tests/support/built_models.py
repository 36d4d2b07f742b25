"""Built-in models as tests use them: compiled, at their default hyperparameters."""

from trainer import model


def built_in(name: str, spec, learning_rate: float = 1e-3, jit_compile: bool = False):
  """The built-in model `name` (trainer/models/) for `spec`, compiled."""
  module = model.load(name)
  built = model.build(module, name, spec, model.hyperparameters(module, name, learning_rate))
  return model.compile_model(built, learning_rate, jit_compile)
