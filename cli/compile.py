"""`pipeline.py compile`: the same create_pipeline(...) compiled offline for Kubeflow Pipelines v2
and Vertex AI with KubeflowV2DagRunner (kubeflow/compiler.py)."""

import argparse
import glob
import os

from cli import beam_runner, config_builder, flag_groups, model_options, output_folder
from cli.inputs import csv_input, data_layout, image_folders, infer_data, tfrecord_probe
import config as cfg
from contracts import labels, trainer_options
from contracts.errors import EXIT_OK, UserError

HELP = 'compile the same pipeline for Kubeflow Pipelines v2 / Vertex AI'
DESCRIPTION = (
  'Compile create_pipeline(...) with KubeflowV2DagRunner. Offline: nothing is '
  'written to the pipeline root and no credentials are needed (user code is '
  'referenced by module path and must be in the image: kubeflow/Dockerfile).'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
  cloud = cfg.CloudConfig()
  parser.add_argument('--pipeline-root', required=True, help='e.g. gs://BUCKET/pipeline_root')
  flag_groups.add(
    parser,
    *flag_groups.DATA,
    data=dict(required=True, help='input as the cluster sees it (gs://...)'),
    span=dict(
      help='with {SPAN} in --data-pattern: pin that span (default: the latest at run time)'
    ),
  )
  flag_groups.add(
    parser,
    *flag_groups.INFER,
    infer_data=dict(
      help='unlabeled data as the cluster sees it (gs://...: a folder of images, a .csv / '
      ".tfrecord file or a folder of them) that the blessed model scores (TFX's BulkInferrer "
      '→ predictions.csv)',
    ),
  )
  parser.add_argument(
    '--data-kind',
    choices=(cfg.IMAGES, cfg.CSV, cfg.TFRECORDS, cfg.TEXT, cfg.SEQUENCES),
    default=None,
    help="which ExampleGen reads --data and which model trains (default: by --data's name, "
    'a .csv / .tfrecord file: csv / tfrecords; else images; text needs --text-column)',
  )
  parser.add_argument(
    '--data-pattern',
    default='',
    help='files under --data (default: */* for images, * otherwise); data '
    'versions: e.g. span-{SPAN}/*.csv, span-{SPAN}/version-{VERSION}/*/*',
  )
  parser.add_argument(
    '--image', default=cloud.image, help='container image of every step (default: %(default)s)'
  )
  parser.add_argument(
    '--format',
    choices=('json', 'yaml'),
    default='json',
    help='json: a Vertex AI PipelineJob; yaml: the bare KFP pipeline spec',
  )
  parser.add_argument(
    '--out',
    default=cfg.COMPILED_EXAMPLE,
    help='the compiled file (default: kubeflow/pipeline.json)',
  )
  output_folder.add_overwrite(parser, '--out', 'compile wrote it')
  parser.add_argument('--pipeline-name', default=cfg.PIPELINE_NAME)
  flag_groups.add(
    parser,
    *flag_groups.TRAINING,
    schema=dict(
      help='curated schema.pbtxt path inside the image, e.g. '
      'schema/digits/schema.pbtxt; default: SchemaGen infers one'
    ),
    no_cache=dict(help='compile with caching off'),
  )
  parser.add_argument(
    '--job-label',
    action='append',
    default=[],
    metavar='KEY=VALUE',
    help='label of the Vertex AI PipelineJob (repeatable)',
  )
  parser.add_argument(
    '--service-account', default='', help='service account the Vertex AI PipelineJob runs as'
  )
  gcp = parser.add_argument_group('Google Cloud (Dataflow and Vertex AI Training)')
  gcp.add_argument('--project', default='', help='GCP project of Dataflow / Vertex jobs')
  gcp.add_argument('--region', default='', help='GCP region of Dataflow / Vertex jobs')
  gcp.add_argument(
    '--beam-runner',
    choices=(cfg.DIRECT_RUNNER, cfg.DATAFLOW_RUNNER, cfg.FLINK_RUNNER, cfg.SPARK_RUNNER),
    default=cloud.beam_runner,
    help='where Beam components run: inside their '
    'step (DirectRunner), as Dataflow jobs, or on a Flink / Spark cluster (--flink-master / '
    '--spark-master: its '
    'arguments are resolved against the cluster as `run` does) (default: %(default)s)',
  )
  flag_groups.add(gcp, '--flink-master', '--spark-master', '--beam-parallelism')
  flag_groups.add(
    gcp, '--beam-arg', beam_arg=dict(help='passed to every Beam component as is (repeatable)')
  )
  gcp.add_argument('--temp-location', default='', help='Dataflow: gs:// scratch folder')
  gcp.add_argument('--max-workers', type=int, default=0, help='Dataflow: worker limit')
  gcp.add_argument('--dataflow-machine-type', default='', help='Dataflow: worker machine type')
  gcp.add_argument(
    '--vertex-training',
    action='store_true',
    help='train as a Vertex AI custom job (TFX google_cloud_ai_platform Trainer)',
  )
  gcp.add_argument(
    '--vertex-tuning',
    action='store_true',
    help="with --tune-trials: run the Tuner's trials as a Vertex AI custom job (TFX "
    'google_cloud_ai_platform Tuner) on --trainer-machine-type machines',
  )
  gcp.add_argument(
    '--tune-parallel-trials',
    type=int,
    default=cloud.tune_parallel_trials,
    metavar='N',
    help='with --vertex-tuning: trials run at once, one machine each (default: %(default)s)',
  )
  gcp.add_argument(
    '--trainer-machine-type',
    default=cloud.trainer_machine_type,
    help='Vertex training machine (default: %(default)s)',
  )
  gcp.add_argument('--accelerator-type', default='', help='e.g. NVIDIA_TESLA_T4, NVIDIA_L4')
  gcp.add_argument('--accelerator-count', type=int, default=0)
  check = parser.add_argument_group('serving check (before the Pusher)')
  check.add_argument(
    '--serving-check',
    choices=(cfg.PROCESS_SERVING_CHECK, cfg.KUBERNETES_SERVING_CHECK),
    default=cloud.serving_check,
    help='process: load the model in a fresh process of its step (components/serving_check); '
    "kubernetes: TFX's InfraValidator starts TensorFlow Serving as a pod (Kubeflow Pipelines "
    'on Kubernetes only; not Vertex AI Pipelines) (default: %(default)s)',
  )
  check.add_argument(
    '--kfp-namespace',
    default='kubeflow',
    help="the kubernetes check: Kubeflow Pipelines' namespace, where the serving pod starts "
    '(default: %(default)s)',
  )
  check.add_argument(
    '--tf-serving-tag',
    default=cloud.tf_serving_tag,
    help='tensorflow/serving image tag of the kubernetes check (default: %(default)s)',
  )


def _cloud(args: argparse.Namespace) -> cfg.CloudConfig:
  """Where the steps run, with the checks that make a bad combination one line."""
  cloud = cfg.CloudConfig(
    image=args.image,
    project=args.project,
    region=args.region,
    beam_runner=args.beam_runner,
    dataflow_temp_location=args.temp_location,
    dataflow_max_workers=args.max_workers,
    dataflow_machine_type=args.dataflow_machine_type,
    vertex_training=args.vertex_training,
    vertex_tuning=args.vertex_tuning,
    tune_parallel_trials=args.tune_parallel_trials,
    trainer_machine_type=args.trainer_machine_type,
    trainer_accelerator_type=args.accelerator_type,
    trainer_accelerator_count=args.accelerator_count,
    serving_check=args.serving_check,
    tf_serving_tag=args.tf_serving_tag,
  )
  needs = {
    'Dataflow': cloud.beam_runner == cfg.DATAFLOW_RUNNER,
    'Vertex AI Training': cloud.vertex_training,
    'Vertex AI tuning': cloud.vertex_tuning,
  }
  if cloud.vertex_tuning and not args.tune_trials:
    raise UserError('--vertex-tuning needs --tune-trials N')
  if cloud.tune_parallel_trials < 1 or (cloud.tune_parallel_trials > 1 and not cloud.vertex_tuning):
    raise UserError('--tune-parallel-trials: 1 or more, above 1 only with --vertex-tuning')
  for service, used in needs.items():
    if used and not (cloud.project and cloud.region):
      raise UserError(f'{service} needs --project and --region')
  if needs['Dataflow'] and not cloud.dataflow_temp_location.startswith('gs://'):
    raise UserError('Dataflow needs --temp-location gs://BUCKET/tmp')
  if (cloud.trainer_accelerator_count or cloud.trainer_accelerator_type) and not (
    cloud.vertex_training and cloud.trainer_accelerator_type
  ):
    raise UserError(
      '--accelerator-type/--accelerator-count need --vertex-training and an --accelerator-type'
    )
  return cloud


def compile_config(args: argparse.Namespace) -> cfg.PipelineConfig:
  """The same builder as `run`'s (cli/config_builder.py), for data as the cluster sees it."""
  data, data_pattern = args.data.rstrip('/'), args.data_pattern
  named = data_layout.name_kind(data)  # a data file: nothing is read, the path is the cluster's
  if args.data_kind and named and named != args.data_kind:
    raise UserError(f'--data {args.data}: {named} data, but --data-kind is {args.data_kind}')
  args.data_kind = args.data_kind or named or cfg.IMAGES
  if named and not data_pattern:  # one file: its folder, and its name as the pattern
    data, data_pattern = os.path.dirname(data), os.path.basename(data)
  config_builder.check_numbers(args)
  config_builder.check_input_service(args)
  if args.data_kind == cfg.TEXT and not args.text_column:
    raise UserError('--data-kind text needs --text-column')
  infer = {}
  if args.infer_data:
    infer_data.check_infer_kind(args.data_kind)
    kind = data_layout.name_kind(args.infer_data)  # nothing is read: the path is the cluster's
    if kind and kind != args.data_kind:
      raise UserError(
        f'--infer-data {args.infer_data}: {kind} data, but --data-kind is {args.data_kind}'
      )
    root = args.infer_data.rstrip('/')
    infer = (
      dict(infer_data=os.path.dirname(root), infer_pattern=os.path.basename(root))
      if kind
      else dict(infer_data=root, infer_pattern='*')
    )
  task, task_reason = _task(args, data, data_pattern)
  return config_builder.config_from(
    args,
    **infer,
    task=task,
    task_reason=task_reason,
    data=data,
    data_kind=args.data_kind,
    data_pattern=data_pattern
    or (image_folders.CLASS_FOLDERS if args.data_kind == cfg.IMAGES else '*'),
    output=args.pipeline_root,
    pipeline_root=args.pipeline_root,
    schema=args.schema,
    schema_default=cfg.TEXT_SCHEMA_IN_IMAGE if args.data_kind == cfg.TEXT else None,
    cloud=_cloud(args),
    beam_engine_args=beam_runner.engine_args(args),
    **model_options.model_options(args, args.data_kind, local=False),
  )


def _task(args: argparse.Namespace, data: str, pattern: str) -> tuple:
  """(task, why): images and text train classes; a table's task is decided as `run` decides it
  when a file of the data (`data`/`pattern`) can be read here; else --task must be given: the
  Evaluator's metrics are fixed when the DAG is built, so `auto` decided later by the Trainer
  could make a model the Evaluator refuses (UserError, one line); not for a module file's model,
  whose Evaluator decides from the model (docs/design/module_files.md)."""
  if args.data_kind not in (cfg.CSV, cfg.TFRECORDS):
    if args.task == trainer_options.REGRESSION:
      raise UserError(f'--task regression: {args.data_kind} data trains classes only')
    return trainer_options.CLASSIFICATION, ''
  local = [] if cfg.is_remote(data) else sorted(glob.glob(os.path.join(data, pattern or '*')))
  local = [path for path in local if os.path.isfile(path)]
  if not local:
    # A module file's model: the Evaluator reads what it predicts from the model (both configs built)
    if args.task == trainer_options.AUTO and not getattr(args, 'module_file', None):
      raise UserError(
        f'--task auto: --data {args.data} is not read here, and the Evaluator is built for one '
        'task; give --task classification or --task regression'
      )
    return args.task, ''
  if args.data_kind == cfg.CSV:
    return csv_input.label_task(local[0], args.label, args.label_threshold, args.task)
  values = tfrecord_probe.label_values(local[0], args.label)
  try:
    return labels.decide_task(
      args.label,
      values,
      f'the first {len(values)} records of {local[0]}',
      args.label_threshold,
      args.task,
    )
  except ValueError as e:
    raise UserError(str(e)) from None


def compile_kubeflow(args: argparse.Namespace) -> str:
  """Compiles for KFP v2 with KubeflowV2DagRunner; returns the written file's path."""
  output = os.path.abspath(args.out)
  if not output.endswith('.' + args.format):
    output = os.path.splitext(output)[0] + '.' + args.format
  _check_writable(output)
  from kubeflow import compiler

  output_folder.check_new_file(
    '--out', output, args.overwrite, compiler.is_compiled, 'a compiled pipeline'
  )
  config = compile_config(args)  # bad numbers and paths: one line before TFX is imported
  import pipeline

  try:
    labels = compiler.parse_labels(args.job_label)
  except ValueError as e:
    raise UserError(str(e)) from None
  job = compiler.compile_job(
    pipeline.create_pipeline(config, parameters=True),
    args.image,
    labels,
    args.service_account,
    parameter_values=pipeline.parameter_values(config, as_parameters=False),
    # TFX's Kubernetes model server runner reads the namespace from KFP_NAMESPACE; the KFP 2
    # backend sets KFP_POD_NAME alone.
    step_env={pipeline.SERVING_CHECK: {'KFP_NAMESPACE': args.kfp_namespace}}
    if config.cloud.serving_check == cfg.KUBERNETES_SERVING_CHECK
    else None,
  )
  return compiler.write(job, output, args.format)


def _check_writable(path: str) -> None:
  """Raises UserError unless `path`'s folder exists (or can be made) and takes a file."""
  import tempfile

  folder = os.path.dirname(path)
  try:
    os.makedirs(folder, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, prefix='.write-test-'):
      pass
  except OSError as e:
    raise UserError(f'--out {path}: cannot write there ({e.strerror or e})') from None


def main(args: argparse.Namespace) -> int:
  print(f'compiled {compile_kubeflow(args)}')
  return EXIT_OK
