"""The project's TFX pipeline: one create_pipeline(...) and the command line that runs it.

  .venv/bin/python pipeline.py run [--data PATH] [--output DIR] [--train-steps N] ...
  .venv/bin/python pipeline.py schema --data PATH --out schema/NAME/schema.pbtxt
  .venv/bin/python pipeline.py verify PATH... [--repair OUT_DIR]
  .venv/bin/python pipeline.py lineage [--output DIR] [--model output/serving/VERSION]
  .venv/bin/python pipeline.py compile --pipeline-root gs://B/root --data gs://B/images [--image IMG]
  .venv/bin/python pipeline.py submit --target vertex --project P --region R [--dry-run]
  .venv/bin/python pipeline.py submit --target kubeflow --host http://HOST:PORT [--dry-run]

Without --data, `run` uses the embedded default: scikit-learn's 1,797 8×8 digits written out
as a class-per-folder PNG tree under <output>/default_data/digits.
"""
import argparse
import dataclasses
import logging
import os
import sys
import time
import warnings
from typing import List, Optional

# Before TensorFlow is first imported: its C++ start-up chatter (CUDA probes) is not for users.
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)

import config as cfg  # pylint: disable=g-import-not-at-top,wrong-import-position

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, 'schema', 'digits', 'schema.pbtxt')
TEXT_SCHEMA = os.path.join(HERE, 'schema', 'text', 'schema.pbtxt')  # the text route's layout
EXIT_ANOMALIES = 1
EXIT_BAD_INPUT = 2


def create_pipeline(config: cfg.PipelineConfig, metadata_connection_config=None,
                    schema_only: bool = False):
  """ExampleGen → StatisticsGen → Schema → ExampleValidator → gate → Trainer → Evaluator → Pusher,
  with ShardCheck (every record's CRC) between ExampleGen and the Trainer.

  schema_only: stop after an inferred schema (what `pipeline.py schema` runs).
  """
  # Heavy imports live here so that `--help` and bad-input errors answer at once.
  import tensorflow_model_analysis as tfma  # pylint: disable=g-import-not-at-top
  from tfx import v1 as tfx  # pylint: disable=g-import-not-at-top
  from components.anomaly_gate.component import AnomalyGate  # pylint: disable=g-import-not-at-top
  from components.drift_check.component import DriftCheck  # pylint: disable=g-import-not-at-top
  from components.recording_trainer import component as recording  # pylint: disable=g-import-not-at-top
  from components.shard_check.component import ShardCheck  # pylint: disable=g-import-not-at-top
  from tfx.proto import example_gen_pb2  # pylint: disable=g-import-not-at-top
  from components.file_based import span_range  # pylint: disable=g-import-not-at-top
  from components.image_example_gen.component import ImageExampleGen  # pylint: disable=g-import-not-at-top
  from components.label_check.component import LabelCheck  # pylint: disable=g-import-not-at-top
  from components.text_example_gen import text  # pylint: disable=g-import-not-at-top
  from components.text_example_gen.component import TextExampleGen  # pylint: disable=g-import-not-at-top
  from trainer import data_spec, signatures  # pylint: disable=g-import-not-at-top

  if config.data_kind == cfg.TEXT:
    example_gen = TextExampleGen(
        input_base=config.data, pattern=config.data_pattern, label_column=config.label,
        text_column=config.text_column, eval_percent=config.eval_percent,
        shard_size_mb=config.shard_size_mb, span=config.span)
  elif config.data_kind == cfg.IMAGES:
    example_gen = ImageExampleGen(
        input_base=config.data, encoding=config.encoding, compression=config.compression,
        eval_percent=config.eval_percent, shard_size_mb=config.shard_size_mb,
        pattern=config.data_pattern, span=config.span)
  else:
    if config.data_splits:  # already split (Split-<name> folders): kept as they are
      input_config = tfx.proto.Input(splits=[tfx.proto.Input.Split(name=name, pattern=pattern)
                                             for name, pattern in config.data_splits])
      output_config = tfx.proto.Output()
    else:
      input_config = tfx.proto.Input(splits=[
          tfx.proto.Input.Split(name='single_split', pattern=config.data_pattern)])
      output_config = tfx.proto.Output(split_config=tfx.proto.SplitConfig(splits=[
          tfx.proto.SplitConfig.Split(name='train', hash_buckets=100 - config.eval_percent),
          tfx.proto.SplitConfig.Split(name='eval', hash_buckets=config.eval_percent)]))
    files = dict(input_base=config.data, input_config=input_config, output_config=output_config,
                 range_config=span_range(config.span))
    if config.data_kind == cfg.CSV:
      example_gen = tfx.components.CsvExampleGen(**files)
    else:
      example_gen = tfx.components.ImportExampleGen(**files, payload_format=(
          example_gen_pb2.FORMAT_TF_SEQUENCE_EXAMPLE if config.data_kind == cfg.SEQUENCES
          else example_gen_pb2.FORMAT_TF_EXAMPLE))
  examples = example_gen.outputs['examples']
  statistics_gen = tfx.components.StatisticsGen(examples=examples)
  if config.schema and not schema_only:
    schema_gen = tfx.components.ImportSchemaGen(schema_file=config.schema)
  else:
    schema_gen = tfx.components.SchemaGen(
        statistics=statistics_gen.outputs['statistics'], infer_feature_shape=True)
  components = [example_gen, statistics_gen, schema_gen]

  if not schema_only:
    validator = tfx.components.ExampleValidator(
        statistics=statistics_gen.outputs['statistics'], schema=schema_gen.outputs['schema'])
    gate = AnomalyGate(anomalies=validator.outputs['anomalies'])
    shard_check = ShardCheck(examples=examples, max_damaged_percent=config.max_damaged_percent)
    custom_config = {
        'data_kind': {cfg.IMAGES: data_spec.IMAGE, cfg.TEXT: data_spec.SEQUENCE,
                      cfg.SEQUENCES: data_spec.SEQUENCE}.get(config.data_kind, data_spec.TABULAR),
        'tokens_key': config.tokens_key,
        'batch_size': config.batch_size,
        'learning_rate': config.learning_rate,
        'augment': config.augment,
        'mixed_precision': config.mixed_precision,
        'xla': {'on': True, 'off': False}.get(config.xla, 'auto'),
        'tpu': config.tpu,
        'image_height': config.image_height,
        'image_width': config.image_width,
        'image_channels': config.image_channels,
        'label_key': text.LABEL_KEY if config.data_kind == cfg.TEXT else config.label,
        'label_threshold': config.label_threshold,
    }
    trainer_class = recording.RecordingTrainer  # records input damage on the Model artifact
    if config.cloud and config.cloud.vertex_training:
      vertex = tfx.extensions.google_cloud_ai_platform
      trainer_class = vertex.Trainer
      custom_config.update({vertex.ENABLE_VERTEX_KEY: True,
                            vertex.VERTEX_REGION_KEY: config.cloud.region,
                            vertex.TRAINING_ARGS_KEY: config.cloud.vertex_training_args})
    trainer = trainer_class(
        run_fn='trainer.task.run_fn',
        examples=examples,
        schema=schema_gen.outputs['schema'],
        train_args=tfx.proto.TrainArgs(num_steps=config.train_steps),
        eval_args=tfx.proto.EvalArgs(num_steps=config.eval_steps or None),
        custom_config=custom_config).with_id('Trainer')
    trainer.add_upstream_node(gate)
    trainer.add_upstream_node(shard_check)
    if config.data_kind in (cfg.CSV, cfg.TFRECORDS, cfg.SEQUENCES):  # the label is a user's guess
      label_check = LabelCheck(schema=schema_gen.outputs['schema'], label=config.label)
      trainer.add_upstream_node(label_check)
      components.append(label_check)
    if '{SPAN}' in config.data_pattern:  # data versions: compare with the previous one
      previous = tfx.dsl.Resolver(
          strategy_class=tfx.dsl.experimental.LatestArtifactStrategy,
          statistics=tfx.dsl.Channel(type=tfx.types.standard_artifacts.ExampleStatistics,
                                     producer_component_id=statistics_gen.id,
                                     output_key='statistics')).with_id('previous_statistics')
      statistics_gen.add_upstream_node(previous)  # resolve before this run's statistics exist
      drift = DriftCheck(statistics=statistics_gen.outputs['statistics'],
                         schema=schema_gen.outputs['schema'],
                         previous_statistics=previous.outputs['statistics'])
      trainer.add_upstream_node(drift)
      components += [previous, drift]
    accuracy = tfma.MetricConfig(
        class_name='SparseCategoricalAccuracy',
        threshold=tfma.MetricThreshold(value_threshold=tfma.GenericValueThreshold(
            lower_bound={'value': config.min_accuracy})))
    eval_config = tfma.EvalConfig(
        model_specs=[tfma.ModelSpec(
            signature_name='serving_default', prediction_key='probabilities',
            label_key=signatures.EVAL_LABEL_KEY,
            preprocessing_function_names=['transform_features'])],
        slicing_specs=[tfma.SlicingSpec()],
        metrics_specs=[tfma.MetricsSpec(metrics=[tfma.MetricConfig(class_name='ExampleCount'),
                                                 accuracy])])
    evaluator = tfx.components.Evaluator(
        examples=examples, model=trainer.outputs['model'], eval_config=eval_config)
    pusher = tfx.components.Pusher(
        model=trainer.outputs['model'], model_blessing=evaluator.outputs['blessing'],
        push_destination=tfx.proto.PushDestination(
            filesystem=tfx.proto.PushDestination.Filesystem(base_directory=config.serving_dir)))
    components += [validator, gate, shard_check, trainer, evaluator, pusher]

  return tfx.dsl.Pipeline(
      pipeline_name=config.pipeline_name,
      pipeline_root=config.pipeline_root,
      components=components,
      enable_cache=config.enable_cache,
      metadata_connection_config=metadata_connection_config,
      beam_pipeline_args=config.beam_pipeline_args)


def _parser() -> argparse.ArgumentParser:
  from cli import inputs  # pylint: disable=g-import-not-at-top
  defaults = cfg.PipelineConfig(data='', data_kind='', output='')
  cloud = cfg.CloudConfig()
  parser = argparse.ArgumentParser(
      prog='pipeline.py', description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')

  def common(sub):
    sub.add_argument('--data', help='a class-per-folder image tree, a CSV file or folder, or '
                     'TFRecord file(s) (*.tfrecord, *.tfrecord.gz); default: embedded digits')
    sub.add_argument('--output', default='output',
                     help='folder for metadata, artifacts, serving model and logs (default: '
                     '%(default)s); gs:// or s3:// for artifacts and the serving model in object '
                     'storage (README: Object storage)')
    sub.add_argument('--local-dir', default='', metavar='DIR',
                     help='with a gs:// or s3:// --output: the local folder for ML Metadata '
                     '(metadata.sqlite), logs and the run report (default: '
                     'output/remote/<scheme>/<bucket>/<path>)')
    sub.add_argument('--label', default=defaults.label,
                     help='CSV/TFRecord data: the label column or context feature (default: '
                     '%(default)s); a float column trains as (value > --label-threshold)')
    sub.add_argument('--text-column', default='', metavar='COLUMN',
                     help='CSV: convert COLUMN (free text) and the label into SequenceExamples of '
                     'token ids (vocabulary from the train split). Default: detected, when the '
                     'only column besides the label has >= %d words per row on median' %
                     inputs.MIN_TEXT_WORDS)
    sub.add_argument('--tokens-key', default='', metavar='KEY',
                     help='SequenceExample TFRecords: the feature list holding the tokens '
                     '(default: the first)')
    sub.add_argument('--label-threshold', type=float, default=defaults.label_threshold)
    sub.add_argument('--eval-percent', type=int, default=defaults.eval_percent,
                     help='share of examples in the eval split, by path/row hash (default: %(default)s)')
    sub.add_argument('--encoding', choices=('encoded', 'raw'), default=defaults.encoding,
                     help='images: keep JPEG/PNG bytes or store raw uint8 pixels (default: %(default)s)')
    sub.add_argument('--compression', choices=('none', 'gzip'), default=defaults.compression,
                     help='images: shard compression (default: %(default)s; GZIP reads 4-8x slower)')
    sub.add_argument('--shard-size-mb', type=float, default=defaults.shard_size_mb,
                     help='images: target shard size (default: %(default)s)')
    sub.add_argument('--span', type=int, default=0,
                     help='data laid out by version, <data>/span-<N>/[version-<M>/]<class '
                     'folders, CSV or TFRecord files>: the span to read (default: the latest '
                     'span; within a span the latest version is read)')
    sub.add_argument('--beam-runner', default=defaults.beam_runner,
                     choices=(cfg.DIRECT_RUNNER, cfg.DATAFLOW_RUNNER, cfg.FLINK_RUNNER,
                              cfg.SPARK_RUNNER),
                     help='Beam runner of the data components (default: %(default)s); the others '
                     'need --beam-arg flags (README: Scaling out)')
    sub.add_argument('--beam-arg', action='append', default=[], metavar='ARG',
                     help='passed to Beam as is, e.g. --beam-arg=--flink_master=host:8081 '
                     '(repeatable)')
    sub.add_argument('--beam-mode', choices=('in_memory', 'multi_processing', 'multi_threading'),
                     default=defaults.beam_direct_running_mode,
                     help='DirectRunner running mode (default: %(default)s; in_memory is faster '
                     'for small data: no worker processes to start)')
    sub.add_argument('--beam-workers', type=int, default=defaults.beam_direct_num_workers,
                     help='DirectRunner worker processes; 0 = one per core (default: %(default)s)')

  run = commands.add_parser('run', help='run the whole pipeline locally (LocalDagRunner)',
                            description='Run the whole pipeline locally with LocalDagRunner and '
                            'SQLite ML Metadata in <output>/metadata.sqlite. Exit codes: 0 done, '
                            '1 data anomalies or a failed component, 2 bad input.')
  common(run)
  run.add_argument('--schema', help='curated schema.pbtxt (ImportSchemaGen); default for the '
                   'embedded digits: schema/digits/schema.pbtxt, otherwise SchemaGen infers one')
  run.add_argument('--train-steps', type=int, default=defaults.train_steps,
                   help='training steps (default: %(default)s)')
  run.add_argument('--eval-steps', type=int, default=defaults.eval_steps,
                   help='validation steps during training; 0 = the whole eval split')
  run.add_argument('--batch-size', type=int, default=defaults.batch_size)
  run.add_argument('--learning-rate', type=float, default=defaults.learning_rate)
  run.add_argument('--mixed-precision', default=defaults.mixed_precision,
                   choices=('auto', 'float32', 'mixed_float16', 'mixed_bfloat16'),
                   help='Keras dtype policy (default auto: mixed_float16 on GPUs, mixed_bfloat16 '
                   'on TPUs, float32 on CPUs)')
  run.add_argument('--xla', default=defaults.xla, choices=('auto', 'on', 'off'),
                   help='XLA-compile the train step (default auto: on with GPUs/TPUs)')
  run.add_argument('--tpu', default=defaults.tpu,
                   help='train with TPUStrategy on this TPU (default: $TPU_NAME if set). Several '
                   'workers: set TF_CONFIG (MultiWorkerMirroredStrategy); GPUs are found alone')
  run.add_argument('--augment', action='store_true',
                   help='images: random left-right flips and shifts of up to 1/8 while training '
                   '(off by default: digits and text are not mirror-invariant)')
  run.add_argument('--image-size', type=int, nargs=2, metavar=('HEIGHT', 'WIDTH'), default=(0, 0),
                   help='model input size; default: the most common size in the data')
  run.add_argument('--image-channels', type=int, choices=(0, 1, 3), default=0,
                   help='model input channels; 0 = 1 for all-grayscale data, else 3')
  run.add_argument('--min-accuracy', type=float, default=defaults.min_accuracy,
                   help='eval accuracy needed to bless and push the model (default: %(default)s)')
  run.add_argument('--max-damaged-percent', type=float, default=defaults.max_damaged_percent,
                   help='stop before training when more than this share of the records in the '
                   'ExampleGen output is damaged (default: %(default)s)')
  run.add_argument('--no-cache', action='store_true', help='re-run every component')

  schema = commands.add_parser('schema', help='infer a schema from data, to review and commit',
                               description='Run ExampleGen, StatisticsGen and SchemaGen and '
                               'write the inferred schema for review (e.g. schema/NAME/schema.pbtxt).')
  common(schema)
  schema.add_argument('--out', required=True, help='where to write schema.pbtxt')

  verify = commands.add_parser(
      'verify', help='check TFRecord shards record by record; salvage the intact records',
      description='Check every record of TFRecord shards (plain or GZIP) against its CRCs, in '
      'parallel, and report per shard: good records, corrupt records, truncated tail bytes. '
      'Exit codes: 0 clean, 1 damage found, 2 bad input.')
  verify.add_argument('paths', nargs='+', metavar='PATH',
                      help='shard files, or folders to search (e.g. an Examples artifact)')
  verify.add_argument('--repair', metavar='OUT_DIR', default='',
                      help='write salvaged copies of every shard (every intact record and '
                      'nothing else) under OUT_DIR, keeping relative paths')
  verify.add_argument('--workers', type=int, default=0,
                      help='parallel scans (default: one per core)')

  lineage = commands.add_parser(
      'lineage', help='data versions and models in ML Metadata, and which data trained which model',
      description='Read <output>/metadata.sqlite and list every data version (Examples artifact: '
      'span, version, fingerprint, counts) and every model (trained on, evaluated on, accuracy, '
      'blessed, pushed to). With --model PATH: which data trained the model pushed to PATH.')
  lineage.add_argument('--output', default='output', help='the run folder (default: %(default)s)')
  lineage.add_argument('--model', default='', metavar='PATH',
                       help='a pushed model folder (e.g. output/serving/<version>)')
  lineage.add_argument('--json', default='', metavar='OUT', help='also write the answer as JSON')

  compile_ = commands.add_parser(
      'compile', help='compile the same pipeline for Kubeflow Pipelines v2 / Vertex AI',
      description='Compile create_pipeline(...) with KubeflowV2DagRunner. Offline: nothing is '
      'written to the pipeline root and no credentials are needed (user code is referenced by '
      'module path and must be in the image: kubeflow/Dockerfile).')
  compile_.add_argument('--pipeline-root', required=True, help='e.g. gs://BUCKET/pipeline_root')
  compile_.add_argument('--data', required=True, help='input as the cluster sees it (gs://...)')
  compile_.add_argument('--data-kind', choices=(cfg.IMAGES, cfg.CSV, cfg.TFRECORDS),
                        default=cfg.IMAGES, help='which ExampleGen reads --data (default: %(default)s)')
  compile_.add_argument('--data-pattern', default='',
                        help='files under --data (default: */* for images, * otherwise); data '
                        'versions: e.g. span-{SPAN}/*.csv, span-{SPAN}/version-{VERSION}/*/*')
  compile_.add_argument('--span', type=int, default=0,
                        help='with {SPAN} in --data-pattern: pin that span (default: the latest '
                        'at run time)')
  compile_.add_argument('--image', default=cloud.image,
                        help='container image of every step (default: %(default)s)')
  compile_.add_argument('--format', choices=('json', 'yaml'), default='json',
                        help='json: a Vertex AI PipelineJob; yaml: the bare KFP pipeline spec')
  compile_.add_argument('--output', default=os.path.join(HERE, 'kubeflow', 'pipeline.json'),
                        help='compiled file (default: kubeflow/pipeline.json)')
  compile_.add_argument('--pipeline-name', default=cfg.PIPELINE_NAME)
  compile_.add_argument('--schema', help='curated schema.pbtxt path inside the image, e.g. '
                        'schema/digits/schema.pbtxt; default: SchemaGen infers one')
  compile_.add_argument('--label', default=defaults.label, help='tabular label column')
  compile_.add_argument('--train-steps', type=int, default=defaults.train_steps)
  compile_.add_argument('--min-accuracy', type=float, default=defaults.min_accuracy)
  compile_.add_argument('--no-cache', action='store_true', help='compile with caching off')
  compile_.add_argument('--job-label', action='append', default=[], metavar='KEY=VALUE',
                        help='label of the Vertex AI PipelineJob (repeatable)')
  compile_.add_argument('--service-account', default='',
                        help='service account the Vertex AI PipelineJob runs as')
  gcp = compile_.add_argument_group('Google Cloud (Dataflow and Vertex AI Training)')
  gcp.add_argument('--project', default='', help='GCP project of Dataflow / Vertex jobs')
  gcp.add_argument('--region', default='', help='GCP region of Dataflow / Vertex jobs')
  gcp.add_argument('--beam-runner', choices=(cfg.DIRECT_RUNNER, cfg.DATAFLOW_RUNNER),
                   default=cloud.beam_runner, help='where Beam components run: inside their '
                   'step (DirectRunner) or as Dataflow jobs (default: %(default)s)')
  gcp.add_argument('--beam-arg', action='append', default=[], metavar='ARG',
                   help='passed to every Beam component as is (repeatable)')
  gcp.add_argument('--temp-location', default='', help='Dataflow: gs:// scratch folder')
  gcp.add_argument('--max-workers', type=int, default=0, help='Dataflow: worker limit')
  gcp.add_argument('--dataflow-machine-type', default='', help='Dataflow: worker machine type')
  gcp.add_argument('--vertex-training', action='store_true',
                   help='train as a Vertex AI custom job (TFX google_cloud_ai_platform Trainer)')
  gcp.add_argument('--trainer-machine-type', default=cloud.trainer_machine_type,
                   help='Vertex training machine (default: %(default)s)')
  gcp.add_argument('--accelerator-type', default='', help='e.g. NVIDIA_TESLA_T4, NVIDIA_L4')
  gcp.add_argument('--accelerator-count', type=int, default=0)

  submit = commands.add_parser(
      'submit', help='submit a compiled pipeline to Vertex AI or a Kubeflow Pipelines cluster',
      description='Submit a compiled pipeline (pipeline.py compile) to Vertex AI Pipelines '
      '(google.cloud.aiplatform.PipelineJob) or to a Kubeflow Pipelines cluster (kfp.Client). '
      'Exit codes: 0 submitted (or --dry-run), 2 bad input, missing credentials, unreachable '
      'host or a refused request.')
  submit.add_argument('--target', choices=('vertex', 'kubeflow'), required=True)
  submit.add_argument('--template', default=os.path.join(HERE, 'kubeflow', 'pipeline.json'),
                      help='compiled pipeline, .json or .yaml (default: kubeflow/pipeline.json)')
  submit.add_argument('--pipeline-root', default='',
                      help='override the compiled pipeline root (gs://... on Vertex)')
  submit.add_argument('--display-name', default='', help='run name (default: the pipeline name)')
  submit.add_argument('--job-label', action='append', default=[], metavar='KEY=VALUE',
                      help='Vertex: label added to the compiled ones (repeatable)')
  submit.add_argument('--service-account', default='',
                      help='Vertex: GCP service account; kubeflow: Kubernetes service account')
  caching = submit.add_mutually_exclusive_group()
  caching.add_argument('--cache', dest='enable_caching', action='store_const', const=True,
                       help='turn caching on for every step (default: as compiled)')
  caching.add_argument('--no-cache', dest='enable_caching', action='store_const', const=False,
                       help='turn caching off for every step')
  submit.add_argument('--dry-run', action='store_true',
                      help='print what would be sent and exit 0, without network')
  vertex = submit.add_argument_group('--target vertex')
  vertex.add_argument('--project', default='')
  vertex.add_argument('--region', default='')
  vertex.add_argument('--access-token', default=os.environ.get('GOOGLE_OAUTH_ACCESS_TOKEN', ''),
                      help='OAuth token (e.g. `gcloud auth print-access-token`; env '
                      'GOOGLE_OAUTH_ACCESS_TOKEN); default: Application Default Credentials')
  vertex.add_argument('--api-endpoint', default='',
                      help='Vertex AI endpoint (default: REGION-aiplatform.googleapis.com); an '
                      'http:// URL is spoken to over REST')
  kubeflow = submit.add_argument_group('--target kubeflow')
  kubeflow.add_argument('--host', default='', help='KFP API, e.g. http://localhost:8080')
  kubeflow.add_argument('--experiment', default='Default', help='(default: %(default)s)')
  kubeflow.add_argument('--namespace', default='', help='multi-user clusters: the namespace')
  kubeflow.add_argument('--token', default='', help='bearer token for the KFP API')
  return parser


def compile_kubeflow(args: argparse.Namespace) -> str:
  """Compiles for KFP v2 with KubeflowV2DagRunner; returns the written file's path."""
  from cli import inputs  # pylint: disable=g-import-not-at-top
  from kubeflow import compiler  # pylint: disable=g-import-not-at-top
  try:
    labels = compiler.parse_labels(args.job_label)
  except ValueError as e:
    raise inputs.UserError(str(e)) from None
  cloud = cfg.CloudConfig(
      image=args.image, project=args.project, region=args.region, beam_runner=args.beam_runner,
      dataflow_temp_location=args.temp_location, dataflow_max_workers=args.max_workers,
      dataflow_machine_type=args.dataflow_machine_type, vertex_training=args.vertex_training,
      trainer_machine_type=args.trainer_machine_type,
      trainer_accelerator_type=args.accelerator_type,
      trainer_accelerator_count=args.accelerator_count)
  needs = {'Dataflow': cloud.beam_runner == cfg.DATAFLOW_RUNNER,
           'Vertex AI Training': cloud.vertex_training}
  for service, used in needs.items():
    if used and not (cloud.project and cloud.region):
      raise inputs.UserError(f'{service} needs --project and --region')
  if needs['Dataflow'] and not cloud.dataflow_temp_location.startswith('gs://'):
    raise inputs.UserError('Dataflow needs --temp-location gs://BUCKET/tmp')
  if (cloud.trainer_accelerator_count or cloud.trainer_accelerator_type) and not (
      cloud.vertex_training and cloud.trainer_accelerator_type):
    raise inputs.UserError('--accelerator-type/--accelerator-count need --vertex-training and '
                           'an --accelerator-type')
  config = cfg.PipelineConfig(
      data=args.data, data_kind=args.data_kind, span=args.span, data_pattern=args.data_pattern
      or (inputs.CLASS_FOLDERS if args.data_kind == cfg.IMAGES else '*'),
      output=args.pipeline_root, pipeline_root=args.pipeline_root,
      pipeline_name=args.pipeline_name, schema=args.schema, label=args.label,
      train_steps=args.train_steps, min_accuracy=args.min_accuracy,
      enable_cache=not args.no_cache, beam_extra_args=args.beam_arg, cloud=cloud)
  output = os.path.abspath(args.output)
  if not output.endswith('.' + args.format):
    output = os.path.splitext(output)[0] + '.' + args.format
  job = compiler.compile_job(create_pipeline(config), args.image, labels, args.service_account)
  return compiler.write(job, output, args.format)


def _data_kind(source, args: argparse.Namespace):
  """(data kind, text column): CSV with a free-text column is TEXT, TFRecords of
  SequenceExamples are SEQUENCES (both become sequence models)."""
  from cli import inputs  # pylint: disable=g-import-not-at-top
  if args.text_column and (source is None or source.kind != cfg.CSV):
    raise inputs.UserError('--text-column: only CSV data has columns')
  if source is None:
    return None, ''
  if source.kind == cfg.CSV:
    text_column = inputs.text_column(inputs.sample_file(source), args.label, args.text_column)
    return (cfg.TEXT if text_column else cfg.CSV), text_column
  if source.kind == cfg.TFRECORDS and inputs.holds_sequence_examples(inputs.sample_file(source)):
    return cfg.SEQUENCES, ''
  return source.kind, ''


def _config(args: argparse.Namespace) -> cfg.PipelineConfig:
  """Checks --data and --output (raising cli.inputs.UserError) and builds the config."""
  from cli import inputs  # pylint: disable=g-import-not-at-top
  if not 1 <= args.eval_percent <= 99:
    raise inputs.UserError(f'--eval-percent {args.eval_percent}: must be between 1 and 99')
  missing = [flag for flag in cfg.RUNNER_NEEDS.get(args.beam_runner, ())
             if not any(arg.startswith(flag + '=') for arg in args.beam_arg)]
  if missing:
    raise inputs.UserError(f'--beam-runner {args.beam_runner} needs ' + ' '.join(
        f'--beam-arg={flag}=…' for flag in missing))
  if args.shard_size_mb <= 0 or getattr(args, 'train_steps', 1) < 1:
    raise inputs.UserError('--shard-size-mb and --train-steps must be positive')
  schema = getattr(args, 'schema', None)
  if schema and not os.path.isfile(schema):
    raise inputs.UserError(f'--schema {schema}: no such file')
  for flag, path in (('--data', args.data or ''), ('--output', args.output)):
    if path.startswith('s3://'):
      from components import object_storage  # pylint: disable=g-import-not-at-top
      try:
        object_storage.check_bucket(path)
      except ValueError as e:
        raise inputs.UserError(f'{flag} {path}: {e}') from None
  source = inputs.resolve_data(args.data) if args.data else None
  kind, text_column = _data_kind(source, args)
  output = inputs.check_output(args.output)
  local_dir = output
  if cfg.is_remote(output):
    local_dir = inputs.check_output(args.local_dir or inputs.local_state_dir(output))
  if source is None:
    source = inputs.resolve_data(
        inputs.write_digits(os.path.join(local_dir, 'default_data', 'digits')))
    kind, schema = cfg.IMAGES, schema or DEFAULT_SCHEMA
  if kind == cfg.TEXT:
    schema = schema or TEXT_SCHEMA
  if args.span and args.span not in source.spans:
    raise inputs.UserError(f'--span {args.span}: ' + (
        f'no span-{args.span} folder (spans: {", ".join(map(str, source.spans))})'
        if source.spans else 'the data has no span-<N> folders'))
  config = cfg.PipelineConfig(
      data=source.root, data_kind=kind, data_pattern=source.pattern, output=output,
      local_dir=local_dir, span=args.span, data_splits=source.splits, text_column=text_column,
      tokens_key=args.tokens_key,
      schema=os.path.abspath(schema) if schema else None, label=args.label,
      label_threshold=args.label_threshold, encoding=args.encoding,
      compression=args.compression, eval_percent=args.eval_percent,
      shard_size_mb=args.shard_size_mb, beam_runner=args.beam_runner,
      beam_direct_running_mode=args.beam_mode, beam_direct_num_workers=args.beam_workers,
      beam_extra_args=args.beam_arg)
  if args.command == 'run':
    config = dataclasses.replace(
        config, train_steps=args.train_steps, eval_steps=args.eval_steps,
        batch_size=args.batch_size, learning_rate=args.learning_rate, augment=args.augment,
        mixed_precision=args.mixed_precision, xla=args.xla, tpu=args.tpu,
        image_height=args.image_size[0], image_width=args.image_size[1],
        image_channels=args.image_channels, min_accuracy=args.min_accuracy,
        max_damaged_percent=args.max_damaged_percent, enable_cache=not args.no_cache)
  else:
    config = dataclasses.replace(config, pipeline_name=cfg.PIPELINE_NAME + '-schema')
  return config


def run_local(config: cfg.PipelineConfig, schema_only: bool = False) -> dict:
  """Runs the pipeline with LocalDagRunner; returns the summary (with 'error' on failure)."""
  # Beam workers and the Trainer import user code (trainer.task) by module path.
  os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, [HERE, os.environ.get('PYTHONPATH')]))
  from tfx import v1 as tfx  # pylint: disable=g-import-not-at-top
  from cli import progress, summary  # pylint: disable=g-import-not-at-top
  from components.anomaly_gate import executor as gate  # pylint: disable=g-import-not-at-top

  from cli import recovery  # pylint: disable=g-import-not-at-top
  for interrupted in recovery.cancel_interrupted(config.metadata_path, config.pipeline_root):
    print(f'an earlier run was interrupted in {interrupted}: marked CANCELED, its partial '
          'outputs removed', flush=True)
  pipeline = create_pipeline(
      config, tfx.orchestration.metadata.sqlite_metadata_connection_config(config.metadata_path),
      schema_only=schema_only)
  os.makedirs(os.path.join(config.local_dir, 'logs'), exist_ok=True)
  log_path = os.path.join(config.local_dir, 'logs', time.strftime('run-%Y%m%d-%H%M%S.log'))
  progress.route_logs(log_path, progress.ComponentProgress([c.id for c in pipeline.components]))
  print(f'pipeline {config.pipeline_name}: {config.data_kind} from {config.data}; '
        f'log: {log_path}', flush=True)
  started = time.monotonic()
  error = None
  try:
    tfx.orchestration.LocalDagRunner().run(pipeline)
  except Exception as e:  # pylint: disable=broad-except
    logging.exception('pipeline run failed')
    error = e
  nodes = summary.latest_run(summary.open_store(config.metadata_path), config.pipeline_name)
  result = summary.build(nodes, time.monotonic() - started)
  result['log'] = log_path
  if error is not None:
    result['error'] = str(error).splitlines()[0] if str(error) else type(error).__name__
    result['anomalies_stop'] = isinstance(error, gate.AnomaliesFound) or bool(result.get('anomalies'))
  if not schema_only:
    from cli import report  # pylint: disable=g-import-not-at-top
    try:
      result['report'] = report.write(nodes, result, config)
    except Exception:  # pylint: disable=broad-except
      logging.exception('run report not written')  # the run's outcome stands without it
      result['report'] = None
  summary.write(result, os.path.join(config.local_dir, 'last_run.json'))
  return result


def main(argv: Optional[List[str]] = None) -> int:
  args = _parser().parse_args(argv)
  from cli import inputs  # pylint: disable=g-import-not-at-top
  try:
    if args.command == 'compile':
      print(f'compiled {compile_kubeflow(args)}')
      return 0
    if args.command == 'lineage':
      from cli import lineage as lineage_report  # pylint: disable=g-import-not-at-top
      return lineage_report.run(args.output, args.model, args.json)
    if args.command == 'verify':
      from cli import verify  # pylint: disable=g-import-not-at-top
      return verify.run(args.paths, args.repair, args.workers)
    if args.command == 'submit':
      from kubeflow import submit  # pylint: disable=g-import-not-at-top
      return submit.main(args)
    config = _config(args)
  except inputs.UserError as e:
    print(f'error: {e}', file=sys.stderr)
    return EXIT_BAD_INPUT
  from cli import summary  # pylint: disable=g-import-not-at-top
  result = run_local(config, schema_only=args.command == 'schema')
  print('\n'.join(summary.render(result)))
  if 'error' in result:
    if result['anomalies_stop']:
      print('stopped before training: the data does not match its schema (anomalies above)',
            file=sys.stderr)
    else:
      print(f'error: {result["error"]} (full log: {result["log"]})', file=sys.stderr)
    return EXIT_ANOMALIES
  if args.command == 'schema':
    from tfx.dsl.io import fileio  # pylint: disable=g-import-not-at-top
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fileio.copy(os.path.join(result['schema_uri'], 'schema.pbtxt'), args.out, overwrite=True)
    print(f'schema written to {args.out}')
  return 0


def _exit(code: int) -> None:
  if 'tensorflow_io' in sys.modules:  # its S3 client aborts the interpreter's normal shutdown
    logging.shutdown()                 # ("pure virtual method called"): leave without it
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # pylint: disable=protected-access
  sys.exit(code)


if __name__ == '__main__':
  _exit(main())
