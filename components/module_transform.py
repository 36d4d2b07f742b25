"""TFX's Transform for a module file's preprocessing_fn (--module-file), between the checks and
the Trainer (built by components/cached_transform): the project's names of the user's functions
(trainer/module_file.py), and the transformed inputs of the Trainer and the Tuner; or, for
--tabular-stats transform, the project's own analysis of a table (vocabularies and moments,
stats_transform). Its transform graph and transformed examples are the Trainer's and the
Tuner's; the Evaluator reads the raw examples through the model's transform_features.
"""

from tfx import components as tfx_components

PREPROCESSING_FN = 'trainer.module_file.preprocessing_fn'
STATS_OPTIONS_UPDATER_FN = 'trainer.module_file.stats_options_updater_fn'
RUN_FN = 'trainer.module_file.run_fn'
TUNER_FN = 'trainer.module_file.tuner_fn'
TABULAR_STATS_FN = 'trainer.tabular_stats.preprocessing_fn'  # --tabular-stats transform
TRANSFORM = 'Transform'  # its node id


def stats_transform(examples, schema, label_key: str, code_fingerprint: str):
  """The Transform step of --tabular-stats transform: the project's preprocessing_fn
  (trainer/tabular_stats.py) analyses the raw train split, nothing materialized: its graph holds
  the vocabularies and moments the project's run_fn reads; the Trainer reads the raw examples."""
  return tfx_components.Transform(
    examples=examples,
    schema=schema,
    preprocessing_fn=TABULAR_STATS_FN,
    materialize=False,
    disable_statistics=True,
    custom_config={'label_key': label_key, 'code_fingerprint': code_fingerprint},
  ).with_id(TRANSFORM)


def transformed(examples, transform) -> dict:
  """The Trainer's and the Tuner's inputs: Transform's examples (raw ones when it materialized
  none) and graph (when there is one)."""
  if transform is None:
    return dict(examples=examples)
  return dict(
    examples=transform.outputs.get('transformed_examples') or examples,
    transform_graph=transform.outputs['transform_graph'],
  )


def raw(examples, transform) -> dict:
  """The Trainer's raw examples after Transform (the leakage rules judge their columns:
  trainer/module_file.check_leakage); none without Transform, whose examples are the raw ones."""
  return {} if transform is None else dict(raw_examples=examples)
