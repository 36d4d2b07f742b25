"""The Trainer's options: one typed definition, with every default, that crosses into
`trainer.task.run_fn` as TFX's `custom_config` (a JSON object) and back.

The command line builds it once, as `config.PipelineConfig.trainer` (each Trainer flag's `dest`
is a field here, cli/config_builder.py); `pipeline.py` writes it with `to_custom_config` and
`run_fn` reads it back with `from_custom_config`. A new option: docs/architecture.md's recipe.
"""

import dataclasses
from typing import Dict, List, Optional, Union

IMAGE, TABULAR, SEQUENCE = 'image', 'tabular', 'sequence'
AUTO = 'auto'
CACHE_MEMORY, CACHE_OFF = 'memory', 'off'  # input_cache besides AUTO (trainer/input_cache.py)
IMAGENET, NO_WEIGHTS = 'imagenet', 'none'  # weights besides a weights file's path
XLA = {AUTO: AUTO, 'on': True, 'off': False}  # --xla → xla
# What the model learns (--task): classes, or a number. AUTO is decided once, by the command line
# from the data (cli/inputs/csv_input.py), and said; the Trainer resolves what is left AUTO from
# the schema (a FLOAT label without a threshold regresses).
CLASSIFICATION, REGRESSION = 'classification', 'regression'
TASKS = (AUTO, CLASSIFICATION, REGRESSION)
# Regression losses (--loss), on the label standardized with the train split's mean and deviation
# (the project scales it: a model predicts (label - mean) / deviation). Huber by default: a few
# far-off labels (a $300 fare among $10 ones) do not steer the fit as MSE lets them.
MSE, HUBER, MAE = 'mse', 'huber', 'mae'
LOSSES = (MSE, HUBER, MAE)
# A module file's fn_args.data_accessor (--input-accessor): TUNED, the project's tf.data input
# with TFXIO's results (components/recording_trainer/data_accessor.py), or TFX_ACCESSOR, TFXIO's.
TUNED, TFX_ACCESSOR = 'tuned', 'tfx'
INPUT_ACCESSORS = (TUNED, TFX_ACCESSOR)
# custom_config's key of a module file's Trainer after Transform: {split: [file patterns]} of the
# raw examples (components/recording_trainer), whose columns the leakage rules judge
# (trainer/module_file.check_leakage) before the user's run_fn trains on the transformed ones.
RAW_SPLITS_KEY = 'raw_splits'
# Where a table's moments and vocabularies come from (--tabular-stats; trainer/tabular_stats.py):
# SAMPLE, the Trainer's first 4,096 train rows (categories hashed), or TRANSFORM, a full pass of
# TFX's Transform on the run's Beam runner (categories by vocabulary, OOV buckets).
SAMPLE, TRANSFORM = 'sample', 'transform'
TABULAR_STATS = (SAMPLE, TRANSFORM)
# The functions TFX reads from a module file (--module-file), each the component that calls it.
MODULE_FUNCTIONS = {
  'preprocessing_fn': 'Transform',
  'stats_options_updater_fn': 'Transform',
  'run_fn': 'Trainer',
  'tuner_fn': 'Tuner',
}


@dataclasses.dataclass(frozen=True)
class TrainerOptions:
  data_kind: str = TABULAR  # IMAGE, TABULAR or SEQUENCE (PipelineConfig sets it from its own)
  label_key: str = 'label'  # tabular label column / sequence context feature (set likewise)
  label_threshold: Optional[float] = None  # the label trains as (label > threshold) (None:
  # integer and string labels as classes, float labels refused)
  label_default: str = ''  # the label of rows without one ('': such rows stop the run)
  task: str = AUTO  # CLASSIFICATION or REGRESSION (AUTO: from the schema, see TASKS)
  loss: str = ''  # regression: one of LOSSES ('' : HUBER, or the model file's LOSS)
  allowed_features: List[str] = dataclasses.field(default_factory=list)  # columns kept though
  # they alone give the label (--allow-feature; trainer/leakage.py)
  date_order: str = ''  # a slash date column no cell decides: contracts/dates.DMY or MDY ('' :
  # such a column stops the run; contracts/dates.py)
  tokens_key: str = ''  # sequences: the feature list holding tokens ('' : first)
  batch_size: int = 64  # per step, across replicas
  learning_rate: float = 1e-3  # Adam
  augment: bool = False  # images: random flips and shifts while training
  input_cache: str = AUTO  # decoded input held in memory: AUTO (when it fits), CACHE_MEMORY, OFF
  image_height: int = 0  # model input; 0: the most common size in the data
  image_width: int = 0
  image_channels: int = 0  # 0: 1 for all-grayscale data, else 3
  mixed_precision: str = AUTO  # AUTO, float32, mixed_float16, mixed_bfloat16
  xla: Union[bool, str] = AUTO  # AUTO (on with GPUs/TPUs), True, False
  tpu: str = ''  # TPUStrategy target ('' : $TPU_NAME or none)
  input_service: str = ''  # grpc://HOST:PORT: training input on tf.data service ('' : here)
  model: str = ''  # a built-in model (trainer/models/) or a model file's path ('' : the kind's)
  model_source: str = ''  # the model file's text ('' : a built-in): it travels with the config
  module_file: str = ''  # --module-file: a TFX module file's path, whose run_fn trains
  # (trainer/module_file.py; '' : the project's model contract)
  module_functions: List[str] = dataclasses.field(default_factory=list)  # TFX's functions the
  # module file defines (MODULE_FUNCTIONS), read with ast by the command line
  weights: str = ''  # backbones: IMAGENET, NO_WEIGHTS or a weights file ('' : IMAGENET)
  fine_tune_steps: int = -1  # steps with the backbone's top unfrozen (-1: train_steps // 2
  # when the backbone starts from pretrained weights, else 0)
  fine_tune_layers: int = 20  # backbone layers unfrozen (from the top, BatchNorm excluded)
  seed: Optional[int] = None  # --seed: Python, NumPy and TensorFlow seeded and TensorFlow's ops
  # deterministic, so the same data, code and options train the same model (None: unseeded)
  code_fingerprint: str = ''  # run_fn's code, for TFX's cache key (pipeline.py sets it)
  max_damaged_percent: float = 1.0  # records damaged or missing above which training stops
  min_eval_class_examples: int = 0  # classes: eval examples of each the Evaluator needs, so a
  # class short of them stops the run before training (PipelineConfig sets it; 0: not checked)
  # (PipelineConfig sets it from its own); recorded_counts: {split: records} the ExampleGen
  # recorded, what is missing is counted against (set at run time by components/recording_trainer)
  recorded_counts: Optional[Dict[str, int]] = None
  input_accessor: str = TUNED  # a module file's fn_args.data_accessor: one of INPUT_ACCESSORS
  tabular_stats: str = SAMPLE  # a table's moments and vocabularies: one of TABULAR_STATS

  def to_custom_config(self) -> dict:
    return dataclasses.asdict(self)

  @classmethod
  def from_custom_config(cls, custom_config: dict):
    """Keys of this class only: TFX's Vertex Trainer adds its own to the same dict."""
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in (custom_config or {}).items() if k in known})


@dataclasses.dataclass(frozen=True)
class TunerOptions(TrainerOptions):
  """The Tuner's custom_config (`trainer.tuning.tuner_fn`): the Trainer's options and --tune-trials."""

  max_trials: int = 1
