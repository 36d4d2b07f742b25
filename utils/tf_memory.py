"""Ways around TensorFlow's process-wide registries that keep traced graphs alive for good: a warm
process (`run --watch`) trains, counts and reduces again on every edit, and each graph kept is
about a megabyte (docs/operations.md: Watching).

- tf.custom_gradient registers a gradient, under a new name, each time a function using it is
  traced, and never removes it; the registered closure holds the traced graph. Keras' train step
  uses it (tf.distribute's all_reduce of the gradients, whatever the strategy), so every fit
  kept its train step's graph: `custom_gradients_dropped()` removes what a block registered.
- Dataset.reduce run eagerly adds its traced reducer to the process's default graph: `reduce()`
  traces it inside a throwaway tf.function instead, whose graph goes with it.
"""

import contextlib

import tensorflow as tf
from tensorflow.python.framework import ops

CUSTOM_GRADIENT_PREFIX = 'CustomGradient-'  # tf.custom_gradient's names (custom_gradient.py)


@contextlib.contextmanager
def custom_gradients_dropped():
  """The gradients tf.custom_gradient registered inside the block are unregistered after it:
  only for code whose traced functions are not differentiated again afterwards (a fit's train
  step computes its gradients as it is traced)."""
  registry = ops._gradient_registry._registry  # no public way to unregister a gradient
  before = set(registry)
  try:
    yield
  finally:
    for name in set(registry) - before:
      if name.startswith(CUSTOM_GRADIENT_PREFIX):
        del registry[name]


def reduce(dataset: tf.data.Dataset, initial, reducer):
  """`dataset.reduce(initial, reducer)`, traced in a tf.function that goes when it returns."""
  return tf.function(lambda: dataset.reduce(initial, reducer), autograph=False)()
