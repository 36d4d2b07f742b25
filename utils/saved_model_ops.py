"""The TensorFlow ops a saved model of the project may hold besides TensorFlow's own: TensorFlow
Decision Forests' inference op, which a `--model gbt` model (trainer/models/gbt.py) calls. A
process must register them before it loads such a model ("Op type not registered
'SimpleMLInferenceOpWithHandle'"): every loader calls `register()` first, and Beam pipelines whose
workers load the model inside third-party code (TFMA, tfx-bsl's RunInference) add BEAM_ARGS, so
that each worker process imports the ops as it starts. `load` is the one loader of the project's
own readers (tests/test_architecture.py: nothing else calls tf.saved_model.load)."""

import importlib
from typing import List

OPS_MODULE = 'tensorflow_decision_forests'  # importing it registers its ops (~0.3 s after TF)
BEAM_ARGS = [f'--beam_plugins={OPS_MODULE}']


def register() -> None:
  """Registers the ops in this process (once: Python imports a module once)."""
  importlib.import_module(OPS_MODULE)


def with_beam_args(args: List[str]) -> List[str]:
  """For a loader inside third-party code (TFMA, tfx-bsl): the ops registered in this process
  (in_memory Beam loads the model here), and Beam pipeline args that also register them in every
  worker process."""
  register()
  return [*args, *(arg for arg in BEAM_ARGS if arg not in args)]


def load(saved_model_dir: str):
  """tf.saved_model.load with the ops registered first: every reader's one way in."""
  import tensorflow as tf

  register()
  return tf.saved_model.load(saved_model_dir)
