"""The project's TFX pipeline: create_pipeline(config) builds the DAG that every runner runs
(LocalDagRunner in cli/run.py, KubeflowV2DagRunner in cli/compile.py).

  ExampleGen → StatisticsGen → Schema → ExampleValidator → AnomalyGate ─┐
             └ ShardCheck (every record's CRC) ─────────────────────────┼→ Trainer → Evaluator
               [LabelCheck (tabular/sequence labels), DriftCheck (spans)]┘      → ServingCheck → Pusher
  [--module-file with preprocessing_fn: the gates → Transform → (Tuner →) Trainer]
  [--infer-data: InferExampleGen ─→ BulkInferrer (Trainer's model, once the Evaluator blessed it)
                                    → PredictionCsv (predictions.csv)]

Run as a script, this file is the command line (cli/main.py): `python pipeline.py --help`.
"""

import os
import sys

if __name__ == '__main__':
  # The command line answers --help and bad input before TensorFlow is imported; it imports
  # this module again (as `pipeline`) when it builds the DAG.
  sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
  from cli import main

  main.exit_with(main.main())

import dataclasses
import operator
from typing import List, Tuple

from tfx import components as tfx_components
from tfx.dsl.components.common import resolver
from tfx.dsl.input_resolution.strategies import (
  latest_artifact_strategy,
  latest_blessed_model_strategy,
)
from tfx.orchestration import data_types
from tfx.orchestration import pipeline as tfx_pipeline
from tfx.proto import (
  bulk_inferrer_pb2,
  infra_validator_pb2,
  pusher_pb2,
  trainer_pb2,
  tuner_pb2,
)
from tfx.types import channel, standard_artifacts

import cache_keys
from components import module_transform
from components.anomaly_gate.component import AnomalyGate
from components.blessing_evaluator import eval_config as blessing_config
from components.blessing_evaluator.component import BlessingEvaluator
from components.bulk_inferrer.component import BulkInferrer
from components.cached_transform import component as cached_transform
from components.curated_schema_gen.component import CuratedSchemaGen
from components.drift_check.component import DriftCheck
from components.label_check.component import LabelCheck
from components.prediction_csv.component import PredictionCsv
from components.recording_trainer.component import RecordingTrainer, TunedInputTuner
from components.serving_check.component import ServingCheck, TensorFlowServingCheck
from components.serving_pusher.component import ServingPusher
from components.shard_check.component import ShardCheck
from components.statistics_gen.component import StatisticsGen
import config as cfg
from contracts import evaluation, serving, splits
from contracts.trainer_options import (
  CLASSIFICATION,
  REGRESSION,
  TABULAR,
  TRANSFORM,
  TrainerOptions,
  TunerOptions,
)
import example_gens
from utils import fingerprint

# Pipeline parameters of a compiled spec (`submit --param NAME=VALUE`) → their PipelineConfig field.
PARAMETERS = {
  'data': 'data',
  'train_steps': 'train_steps',
  'learning_rate': 'trainer.learning_rate',
  'min_accuracy': 'min_accuracy',
}
SERVING_CHECK = 'ServingCheck'  # the step id of either serving check
EVALUATOR = 'Evaluator'


def create_pipeline(
  config: cfg.PipelineConfig,
  metadata_connection_config=None,
  schema_only: bool = False,
  parameters: bool = False,
) -> tfx_pipeline.Pipeline:
  """The whole DAG for `config`; schema_only: stop after an inferred schema (`pipeline.py
  schema`); parameters: PARAMETERS become pipeline parameters defaulting to config's values
  (`pipeline.py compile`), else they are plain values."""
  values = parameter_values(config, parameters)
  example_gen = example_gens.example_gen_for(config, values['data'])
  examples = example_gen.outputs['examples']
  statistics_gen = StatisticsGen(
    examples=examples,
    in_process_below_bytes=config.statistics_in_process_below_bytes if config.direct_beam else 0,
    code_fingerprint=fingerprint.of('components.statistics_gen.executor'),
  )
  if config.schema and not schema_only:
    schema_gen = CuratedSchemaGen(
      schema_file=config.schema,
      code_fingerprint=cache_keys.files_fingerprint(files={'schema': config.schema}),
    ).with_id('ImportSchemaGen')
  else:
    schema_gen = tfx_components.SchemaGen(
      statistics=statistics_gen.outputs['statistics'], infer_feature_shape=True
    )
  components = [example_gen, statistics_gen, schema_gen]
  if not schema_only:
    checks, gates = validation(config, examples, statistics_gen, schema_gen)
    transform = transforming(config, examples, schema_gen)
    tuner = tuning(config, examples, schema_gen, transform) if config.tune_trials else None
    trainer = training(config, examples, schema_gen, values, tuner, transform)
    for gate in gates:  # a failing gate stops the run before transforming, tuning and training
      (transform or tuner or trainer).add_upstream_node(gate)
    components += checks + [c for c in (transform, tuner) if c] + [trainer]
    pushing = evaluation_and_push(config, examples, trainer, values)
    components += pushing
    if config.infer_data:
      components += inference(config, trainer, pushing[1])
  return tfx_pipeline.Pipeline(
    pipeline_name=config.pipeline_name,
    pipeline_root=config.pipeline_root,
    components=components,
    enable_cache=config.enable_cache,
    metadata_connection_config=metadata_connection_config,
    beam_pipeline_args=config.beam_pipeline_args,
  )


def parameter_values(config: cfg.PipelineConfig, as_parameters: bool) -> dict:
  """{name: config's value} for PARAMETERS, or RuntimeParameters defaulting to those values."""
  values = {name: operator.attrgetter(field)(config) for name, field in PARAMETERS.items()}
  if not as_parameters:
    return values
  return {
    name: data_types.RuntimeParameter(name=name, ptype=type(value), default=value)
    for name, value in values.items()
  }


def validation(
  config: cfg.PipelineConfig, examples, statistics_gen, schema_gen
) -> Tuple[list, list]:
  """What must pass before training: schema anomalies, shard CRCs, the label, drift.
  Returns (components, the gates among them that the Trainer waits for)."""
  validator = tfx_components.ExampleValidator(
    statistics=statistics_gen.outputs['statistics'], schema=schema_gen.outputs['schema']
  )
  gates = [
    AnomalyGate(
      anomalies=validator.outputs['anomalies'],
      code_fingerprint=fingerprint.of('components.anomaly_gate.component'),
    ),
    ShardCheck(
      examples=examples,
      max_damaged_percent=config.max_damaged_percent,
      code_fingerprint=fingerprint.of('components.shard_check.component'),
    ),
  ]
  if config.data_kind in (cfg.CSV, cfg.TFRECORDS, cfg.SEQUENCES):  # the label is a user's guess
    gates.append(
      LabelCheck(
        schema=schema_gen.outputs['schema'],
        statistics=statistics_gen.outputs['statistics'],
        label=config.label,
        label_default=config.trainer.label_default,
        task=config.trainer.task,
        **(
          {}
          if config.trainer.label_threshold is None
          else dict(label_threshold=config.trainer.label_threshold)
        ),
        code_fingerprint=fingerprint.of('components.label_check.component'),
      )
    )
  resolvers = []
  if '{SPAN}' in config.data_pattern:  # data versions: compare with the previous one
    previous = resolver.Resolver(
      strategy_class=latest_artifact_strategy.LatestArtifactStrategy,
      statistics=channel.Channel(
        type=standard_artifacts.ExampleStatistics,
        producer_component_id=statistics_gen.id,
        output_key='statistics',
      ),
    ).with_id('previous_statistics')
    statistics_gen.add_upstream_node(previous)  # resolve before this run's statistics exist
    resolvers.append(previous)
    gates.append(
      DriftCheck(
        statistics=statistics_gen.outputs['statistics'],
        schema=schema_gen.outputs['schema'],
        previous_statistics=previous.outputs['statistics'],
        code_fingerprint=fingerprint.of('components.drift_check.component'),
      )
    )
  return [validator] + resolvers + gates, gates


def trainer_options(config: cfg.PipelineConfig) -> TrainerOptions:
  """The Trainer's options (config.trainer) with run_fn's code fingerprint: its custom_config."""
  return dataclasses.replace(
    config.trainer, code_fingerprint=cache_keys.trainer_fingerprint(config)
  )


def transforming(config: cfg.PipelineConfig, examples, schema_gen):
  """TFX's Transform when the module file defines preprocessing_fn, or a table's statistics
  (--tabular-stats transform), else None."""
  options = config.trainer
  if (
    options.tabular_stats == TRANSFORM and options.data_kind == TABULAR and not options.module_file
  ):
    fingerprint_ = fingerprint.of('trainer.tabular_stats')
    schema = schema_gen.outputs['schema']
    return module_transform.stats_transform(examples, schema, options.label_key, fingerprint_)
  if 'preprocessing_fn' not in options.module_functions:
    return None
  fingerprint_ = cache_keys.transform_fingerprint(config)
  schema = schema_gen.outputs['schema']
  store = '' if config.cloud else config.metadata_path  # compiled: no last analyzer cache
  return cached_transform.transform(
    examples, schema, options.module_file, options.module_functions, fingerprint_, store
  )


def tuning(config: cfg.PipelineConfig, examples, schema_gen, transform=None):
  """TFX's Tuner (tuner_fn trainer.tuning.tuner_fn): config.tune_trials trials of
  config.tune_steps over the model's search space; compiled with cloud.vertex_tuning, TFX's
  Vertex AI Tuner runs cloud.tune_parallel_trials of them at once on Vertex AI Training."""
  options = dataclasses.asdict(trainer_options(config))
  custom_config = TunerOptions(**options, max_trials=config.tune_trials).to_custom_config()
  tuner_class, tune_args = TunedInputTuner, None  # a module file's data_accessor: the tuned input
  if config.cloud and config.cloud.vertex_tuning:  # the Vertex AI client: imported only here
    from tfx.extensions.google_cloud_ai_platform.tuner import executor as vertex_tuner
    from tfx.v1.extensions import google_cloud_ai_platform as vertex

    tuner_class = vertex.Tuner
    tune_args = tuner_pb2.TuneArgs(num_parallel_trials=config.cloud.tune_parallel_trials)
    custom_config.update(
      {
        vertex.ENABLE_VERTEX_KEY: True,
        vertex.VERTEX_REGION_KEY: config.cloud.region,
        vertex_tuner.TUNING_ARGS_KEY: config.cloud.vertex_tuning_args,
        vertex_tuner.REMOTE_TRIALS_WORKING_DIR_KEY: os.path.join(
          config.pipeline_root, 'tuning_trials'
        ),
      }
    )
  return tuner_class(
    tuner_fn=module_transform.TUNER_FN if config.trainer.module_file else 'trainer.tuning.tuner_fn',
    **module_transform.transformed(examples, transform),
    schema=schema_gen.outputs['schema'],
    train_args=trainer_pb2.TrainArgs(num_steps=config.tune_steps),
    eval_args=trainer_pb2.EvalArgs(num_steps=config.eval_steps or None),
    tune_args=tune_args,
    custom_config=custom_config,
  ).with_id('Tuner')


def training(
  config: cfg.PipelineConfig, examples, schema_gen, values: dict, tuner=None, transform=None
):
  """The Trainer (run_fn trainer.task.run_fn, or a module file's through trainer.module_file):
  in this step, or as a Vertex AI custom job. values: train_steps and learning_rate
  (parameter_values); tuner: its best hyperparameters are the Trainer's; transform: its
  transformed examples and graph are."""
  custom_config = trainer_options(config).to_custom_config()
  trainer_class = RecordingTrainer  # records input damage on the Model artifact
  if config.cloud and config.cloud.vertex_training:  # the Vertex AI client: imported only here
    from tfx.v1.extensions import google_cloud_ai_platform as vertex

    from components.recording_trainer.vertex_component import VertexTrainer

    trainer_class = VertexTrainer
    custom_config.update(
      {
        vertex.ENABLE_VERTEX_KEY: True,
        vertex.VERTEX_REGION_KEY: config.cloud.region,
        vertex.TRAINING_ARGS_KEY: config.cloud.vertex_training_args,
      }
    )
  return trainer_class(
    run_fn=module_transform.RUN_FN if config.trainer.module_file else 'trainer.task.run_fn',
    **module_transform.transformed(examples, transform),
    schema=schema_gen.outputs['schema'],
    train_steps=values['train_steps'],
    learning_rate=values['learning_rate'],
    eval_steps=config.eval_steps or None,
    custom_config=custom_config,
    hyperparameters=tuner.outputs['best_hyperparameters'] if tuner else None,
    **module_transform.raw(examples, transform),
  ).with_id('Trainer')


def evaluation_and_push(config: cfg.PipelineConfig, examples, trainer, values: dict) -> List:
  """Evaluator, ServingCheck and Pusher: a model is pushed when it is blessed and serves.
  Blessing: eval accuracy ≥ min_accuracy and, once a model is serving, at most max_accuracy_drop
  below it on the same eval split (the latest blessed model, resolved as the baseline); with
  min_class_recall, every class's recall ≥ it (components/blessing_evaluator/eval_config.py); and
  every class of the eval split predicted at least once unless allow_missed_classes; at least
  min_eval_examples eval examples (min_eval_class_examples of each class of a classifier). A
  regression model (config.trainer.task): eval MAE at least min_improvement below the mean
  predictor's, optional max_mae / max_rmse, and RMSE at most max_error_increase above the serving
  model's (eval_config.build_regression). A model
  that is already the newest serving version is not pushed again (components/serving_pusher).
  values: min_accuracy (parameter_values)."""
  serving_model = resolver.Resolver(
    strategy_class=latest_blessed_model_strategy.LatestBlessedModelStrategy,
    model=channel.Channel(type=standard_artifacts.Model),
    model_blessing=channel.Channel(type=standard_artifacts.ModelBlessing),
  ).with_id('serving_model')
  # a module file's model: the classifier's config here, the regression one beside it
  regression = config.trainer.task == REGRESSION and not config.trainer.module_file
  eval_config = (
    blessing_config.build_regression(
      config.min_improvement,
      config.max_error_increase,
      config.max_mae,
      config.max_rmse,
      config.slice_features,
      label_key=serving.EVAL_LABEL_KEY,
    )
    if regression
    else blessing_config.build(
      config.min_accuracy,
      config.max_accuracy_drop,
      config.min_class_recall,
      config.slice_features,
      label_key=serving.EVAL_LABEL_KEY,
    )
  )
  evaluator = BlessingEvaluator(
    examples=examples,
    model=trainer.outputs['model'],
    baseline_model=serving_model.outputs['model'],
    eval_config=eval_config,
    min_accuracy=values['min_accuracy'],
    allow_missed_classes=config.allow_missed_classes,
    min_eval_examples=config.min_eval_examples,
    min_eval_class_examples=config.min_eval_class_examples,
    max_damaged_percent=config.max_damaged_percent,
    task=REGRESSION if config.trainer.task == REGRESSION else CLASSIFICATION,
    model_run=trainer.outputs['model_run'],
    **module_file_evaluation(config),
    # TFMA imports the derived metrics by name (eval_config's module): the code is theirs too.
    code_fingerprint=fingerprint.of(
      'components.blessing_evaluator.component',
      evaluation.METRICS_MODULE,
      evaluation.REGRESSION_METRICS_MODULE,
    ),
  ).with_id(EVALUATOR)
  check, infra_blessing = serving_check(config, examples, trainer, evaluator)
  pusher = ServingPusher(
    model=trainer.outputs['model'],
    model_blessing=evaluator.outputs['blessing'],
    infra_blessing=infra_blessing,
    push_destination=pusher_pb2.PushDestination(
      filesystem=pusher_pb2.PushDestination.Filesystem(base_directory=config.serving_dir)
    ),
    code_fingerprint=fingerprint.of('components.serving_pusher.component'),
  ).with_id('Pusher')
  return [serving_model, evaluator, check, pusher]


def module_file_evaluation(config: cfg.PipelineConfig) -> dict:
  """A module file's model is judged on what it turns out to predict (user_model.py): the raw
  label's name and the regression config beside the classifier's."""
  if not config.trainer.module_file:
    return {}
  regression = blessing_config.build_regression(
    config.min_improvement,
    config.max_error_increase,
    config.max_mae,
    config.max_rmse,
    config.slice_features,
    label_key=config.label,
  )
  return dict(label=config.label, regression_eval_config=regression)


def inference(config: cfg.PipelineConfig, trainer, evaluator) -> List:
  """--infer-data: its own ExampleGen (one split, splits.INFER), TFX's BulkInferrer with the
  Trainer's model through bulk_inference (serving_default's answer, contracts/serving.py) once
  the Evaluator blessed it (unblessed: the step is skipped), and PredictionCsv writing
  predictions.csv (contracts/predictions.py) with the model's class names."""
  infer_gen = example_gens.example_gen_for(config, config.infer_data, unlabeled=True).with_id(
    'InferExampleGen'
  )
  inferrer = BulkInferrer(
    examples=infer_gen.outputs['examples'],
    model=trainer.outputs['model'],
    model_blessing=evaluator.outputs['blessing'],
    data_spec=bulk_inferrer_pb2.DataSpec(example_splits=[splits.INFER]),
    model_spec=bulk_inferrer_pb2.ModelSpec(model_signature_name=[serving.BULK_INFERENCE]),
    code_fingerprint=fingerprint.of('components.bulk_inferrer.executor'),
    max_damaged_percent=config.max_damaged_percent,
  )
  to_csv = PredictionCsv(
    inference_result=inferrer.outputs['inference_result'],
    model=trainer.outputs['model'],
    code_fingerprint=fingerprint.of('components.prediction_csv.component'),
  ).with_id('PredictionCsv')
  return [infer_gen, inferrer, to_csv]


def serving_check(config: cfg.PipelineConfig, examples, trainer, evaluator) -> tuple:
  """(the component, its InfraBlessing channel): ServingCheck loads the blessed model in a fresh
  process; compiled with cloud.serving_check = kubernetes, TFX's InfraValidator starts the
  TensorFlow Serving image as a pod instead (Kubeflow Pipelines on a Kubernetes cluster)."""
  if config.cloud and config.cloud.serving_check == cfg.KUBERNETES_SERVING_CHECK:
    validator = TensorFlowServingCheck(
      model=trainer.outputs['model'],
      examples=examples,
      serving_spec=infra_validator_pb2.ServingSpec(
        tensorflow_serving=infra_validator_pb2.TensorFlowServing(
          tags=[config.cloud.tf_serving_tag]
        ),
        kubernetes=infra_validator_pb2.KubernetesConfig(),
      ),
      request_spec=infra_validator_pb2.RequestSpec(
        tensorflow_serving=infra_validator_pb2.TensorFlowServingRequestSpec(
          signature_names=[serving.SERVING_DEFAULT]
        ),
        split_name=splits.EVAL,
        num_examples=serving.CHECK_EXAMPLES,
      ),
    ).with_id(SERVING_CHECK)
    return validator, validator.outputs['blessing']
  check = ServingCheck(
    model=trainer.outputs['model'],
    examples=examples,
    model_blessing=evaluator.outputs['blessing'],
    code_fingerprint=fingerprint.of('components.serving_check.component'),
  ).with_id(SERVING_CHECK)
  return check, check.outputs['infra_blessing']
