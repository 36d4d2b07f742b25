"""TFX's Transform for a module file's preprocessing_fn (--module-file), between the checks and
the Trainer (built by components/cached_transform): the project's names of the user's functions
(trainer/module_file.py), and the transformed inputs of the Trainer and the Tuner. Its transform
graph and transformed examples are the Trainer's and the Tuner's; the Evaluator reads the raw
examples through the model's transform_features.
"""

PREPROCESSING_FN = 'trainer.module_file.preprocessing_fn'
STATS_OPTIONS_UPDATER_FN = 'trainer.module_file.stats_options_updater_fn'
RUN_FN = 'trainer.module_file.run_fn'
TUNER_FN = 'trainer.module_file.tuner_fn'
TRANSFORM = 'Transform'  # its node id


def transformed(examples, transform) -> dict:
  """The Trainer's and the Tuner's inputs: Transform's examples and graph (when there is one)."""
  if transform is None:
    return dict(examples=examples)
  return dict(
    examples=transform.outputs['transformed_examples'],
    transform_graph=transform.outputs['transform_graph'],
  )
