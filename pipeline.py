"""The project's TFX pipeline: one create_pipeline(...) and the command line that runs it.

  .venv/bin/python pipeline.py run [--data PATH] [--output DIR] [--train-steps N] ...
  .venv/bin/python pipeline.py schema --data PATH --out schema/NAME/schema.pbtxt
  .venv/bin/python pipeline.py compile --pipeline-root gs://B/root --data gs://B/images [--image IMG]

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
EXIT_ANOMALIES = 1
EXIT_BAD_INPUT = 2


def create_pipeline(config: cfg.PipelineConfig, metadata_connection_config=None,
                    schema_only: bool = False):
  """ExampleGen → StatisticsGen → Schema → ExampleValidator → gate → Trainer → Evaluator → Pusher.

  schema_only: stop after an inferred schema (what `pipeline.py schema` runs).
  """
  # Heavy imports live here so that `--help` and bad-input errors answer at once.
  import tensorflow_model_analysis as tfma  # pylint: disable=g-import-not-at-top
  from tfx import v1 as tfx  # pylint: disable=g-import-not-at-top
  from components.anomaly_gate.component import AnomalyGate  # pylint: disable=g-import-not-at-top
  from components.image_example_gen.component import ImageExampleGen  # pylint: disable=g-import-not-at-top
  from trainer import data_spec, signatures  # pylint: disable=g-import-not-at-top

  if config.data_kind == cfg.IMAGES:
    example_gen = ImageExampleGen(
        input_base=config.data, encoding=config.encoding, compression=config.compression,
        eval_percent=config.eval_percent, shard_size_mb=config.shard_size_mb)
  else:
    input_config = tfx.proto.Input(splits=[
        tfx.proto.Input.Split(name='single_split', pattern=config.data_pattern)])
    output_config = tfx.proto.Output(split_config=tfx.proto.SplitConfig(splits=[
        tfx.proto.SplitConfig.Split(name='train', hash_buckets=100 - config.eval_percent),
        tfx.proto.SplitConfig.Split(name='eval', hash_buckets=config.eval_percent)]))
    example_gen_class = (tfx.components.CsvExampleGen if config.data_kind == cfg.CSV
                         else tfx.components.ImportExampleGen)
    example_gen = example_gen_class(input_base=config.data, input_config=input_config,
                                    output_config=output_config)
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
    trainer = tfx.components.Trainer(
        run_fn='trainer.task.run_fn',
        examples=examples,
        schema=schema_gen.outputs['schema'],
        train_args=tfx.proto.TrainArgs(num_steps=config.train_steps),
        eval_args=tfx.proto.EvalArgs(num_steps=config.eval_steps or None),
        custom_config={
            'data_kind': data_spec.IMAGE if config.data_kind == cfg.IMAGES else data_spec.TABULAR,
            'batch_size': config.batch_size,
            'learning_rate': config.learning_rate,
            'image_height': config.image_height,
            'image_width': config.image_width,
            'image_channels': config.image_channels,
            'label_key': config.label,
            'label_threshold': config.label_threshold,
        })
    trainer.add_upstream_node(gate)
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
    components += [validator, gate, trainer, evaluator, pusher]

  return tfx.dsl.Pipeline(
      pipeline_name=config.pipeline_name,
      pipeline_root=config.pipeline_root,
      components=components,
      enable_cache=config.enable_cache,
      metadata_connection_config=metadata_connection_config,
      beam_pipeline_args=config.beam_pipeline_args)


def _parser() -> argparse.ArgumentParser:
  defaults = cfg.PipelineConfig(data='', data_kind='', output='')
  parser = argparse.ArgumentParser(
      prog='pipeline.py', description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')

  def common(sub):
    sub.add_argument('--data', help='a class-per-folder image tree, a CSV file or folder, or '
                     'TFRecord file(s) (*.tfrecord, *.tfrecord.gz); default: embedded digits')
    sub.add_argument('--output', default='output',
                     help='folder for metadata, artifacts, serving model and logs (default: %(default)s)')
    sub.add_argument('--label', default=defaults.label,
                     help='tabular data: the label column (default: %(default)s); a float column '
                     'trains as (value > --label-threshold)')
    sub.add_argument('--label-threshold', type=float, default=defaults.label_threshold)
    sub.add_argument('--eval-percent', type=int, default=defaults.eval_percent,
                     help='share of examples in the eval split, by path/row hash (default: %(default)s)')
    sub.add_argument('--encoding', choices=('encoded', 'raw'), default=defaults.encoding,
                     help='images: keep JPEG/PNG bytes or store raw uint8 pixels (default: %(default)s)')
    sub.add_argument('--compression', choices=('none', 'gzip'), default=defaults.compression,
                     help='images: shard compression (default: %(default)s; GZIP reads 4-8x slower)')
    sub.add_argument('--shard-size-mb', type=float, default=defaults.shard_size_mb,
                     help='images: target shard size (default: %(default)s)')
    sub.add_argument('--beam-mode', choices=('in_memory', 'multi_processing', 'multi_threading'),
                     default=defaults.beam_direct_running_mode,
                     help='Beam DirectRunner running mode (default: %(default)s)')
    sub.add_argument('--beam-workers', type=int, default=defaults.beam_direct_num_workers,
                     help='Beam DirectRunner workers; 0 = one per core (default: %(default)s)')

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
  run.add_argument('--image-size', type=int, nargs=2, metavar=('HEIGHT', 'WIDTH'), default=(0, 0),
                   help='model input size; default: the most common size in the data')
  run.add_argument('--image-channels', type=int, choices=(0, 1, 3), default=0,
                   help='model input channels; 0 = 1 for all-grayscale data, else 3')
  run.add_argument('--min-accuracy', type=float, default=defaults.min_accuracy,
                   help='eval accuracy needed to bless and push the model (default: %(default)s)')
  run.add_argument('--no-cache', action='store_true', help='re-run every component')

  schema = commands.add_parser('schema', help='infer a schema from data, to review and commit',
                               description='Run ExampleGen, StatisticsGen and SchemaGen and '
                               'write the inferred schema for review (e.g. schema/NAME/schema.pbtxt).')
  common(schema)
  schema.add_argument('--out', required=True, help='where to write schema.pbtxt')

  compile_ = commands.add_parser(
      'compile', help='compile the same pipeline for Kubeflow Pipelines v2 / Vertex AI',
      description='Compile create_pipeline(...) with KubeflowV2DagRunner. Offline: nothing is '
      'written to the pipeline root and no credentials are needed (user code is referenced by '
      'module path and must be in the image).')
  compile_.add_argument('--pipeline-root', required=True, help='e.g. gs://BUCKET/pipeline_root')
  compile_.add_argument('--data', required=True, help='input as the cluster sees it (gs://...)')
  compile_.add_argument('--data-kind', choices=(cfg.IMAGES, cfg.CSV, cfg.TFRECORDS),
                        default=cfg.IMAGES, help='which ExampleGen reads --data (default: %(default)s)')
  compile_.add_argument('--data-pattern', default='*',
                        help='csv/tfrecords: files under --data (default: %(default)s)')
  compile_.add_argument('--image', default='tfrecord-pipeline:latest',
                        help='container image of every step (default: %(default)s)')
  compile_.add_argument('--format', choices=('json', 'yaml'), default='json',
                        help='json: a full PipelineJob; yaml: the bare pipeline spec')
  compile_.add_argument('--output', default=os.path.join(HERE, 'kubeflow', 'pipeline.json'),
                        help='compiled file (default: kubeflow/pipeline.json)')
  compile_.add_argument('--schema', help='curated schema.pbtxt path inside the image')
  compile_.add_argument('--label', default=defaults.label)
  compile_.add_argument('--train-steps', type=int, default=defaults.train_steps)
  compile_.add_argument('--min-accuracy', type=float, default=defaults.min_accuracy)
  compile_.add_argument('--no-cache', action='store_true', help='compile with caching off')
  return parser


def compile_kubeflow(args: argparse.Namespace) -> str:
  """Compiles for KFP v2 with KubeflowV2DagRunner; returns the written file's path."""
  from tfx import v1 as tfx  # pylint: disable=g-import-not-at-top
  config = cfg.PipelineConfig(
      data=args.data, data_kind=args.data_kind, data_pattern=args.data_pattern,
      output=args.pipeline_root, pipeline_root=args.pipeline_root, schema=args.schema,
      label=args.label, train_steps=args.train_steps, min_accuracy=args.min_accuracy,
      enable_cache=not args.no_cache)
  output = os.path.abspath(args.output)
  if not output.endswith('.' + args.format):
    output = os.path.splitext(output)[0] + '.' + args.format
  runner = tfx.orchestration.experimental.KubeflowV2DagRunner(
      config=tfx.orchestration.experimental.KubeflowV2DagRunnerConfig(default_image=args.image),
      output_dir=os.path.dirname(output), output_filename=os.path.basename(output))
  runner.run(create_pipeline(config))
  return output


def _config(args: argparse.Namespace) -> cfg.PipelineConfig:
  """Checks --data and --output (raising cli.inputs.UserError) and builds the config."""
  from cli import inputs  # pylint: disable=g-import-not-at-top
  if not 1 <= args.eval_percent <= 99:
    raise inputs.UserError(f'--eval-percent {args.eval_percent}: must be between 1 and 99')
  if args.shard_size_mb <= 0 or getattr(args, 'train_steps', 1) < 1:
    raise inputs.UserError('--shard-size-mb and --train-steps must be positive')
  schema = getattr(args, 'schema', None)
  if schema and not os.path.isfile(schema):
    raise inputs.UserError(f'--schema {schema}: no such file')
  source = inputs.resolve_data(args.data) if args.data else None
  output = inputs.check_output(args.output)
  if source is None:
    source = inputs.resolve_data(inputs.write_digits(os.path.join(output, 'default_data', 'digits')))
    schema = schema or DEFAULT_SCHEMA
  config = cfg.PipelineConfig(
      data=source.root, data_kind=source.kind, data_pattern=source.pattern, output=output,
      schema=os.path.abspath(schema) if schema else None, label=args.label,
      label_threshold=args.label_threshold, encoding=args.encoding,
      compression=args.compression, eval_percent=args.eval_percent,
      shard_size_mb=args.shard_size_mb, beam_direct_running_mode=args.beam_mode,
      beam_direct_num_workers=args.beam_workers)
  if args.command == 'run':
    config = dataclasses.replace(
        config, train_steps=args.train_steps, eval_steps=args.eval_steps,
        batch_size=args.batch_size, learning_rate=args.learning_rate,
        image_height=args.image_size[0], image_width=args.image_size[1],
        image_channels=args.image_channels, min_accuracy=args.min_accuracy,
        enable_cache=not args.no_cache)
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

  pipeline = create_pipeline(
      config, tfx.orchestration.metadata.sqlite_metadata_connection_config(config.metadata_path),
      schema_only=schema_only)
  os.makedirs(os.path.join(config.output, 'logs'), exist_ok=True)
  log_path = os.path.join(config.output, 'logs', time.strftime('run-%Y%m%d-%H%M%S.log'))
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
  result = summary.build(summary.latest_run(summary.open_store(config.metadata_path),
                                            config.pipeline_name), time.monotonic() - started)
  result['log'] = log_path
  if error is not None:
    result['error'] = str(error).splitlines()[0] if str(error) else type(error).__name__
    result['anomalies_stop'] = isinstance(error, gate.AnomaliesFound) or bool(result.get('anomalies'))
  summary.write(result, os.path.join(config.output, 'last_run.json'))
  return result


def main(argv: Optional[List[str]] = None) -> int:
  args = _parser().parse_args(argv)
  from cli import inputs  # pylint: disable=g-import-not-at-top
  if args.command == 'compile':
    os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, [HERE, os.environ.get('PYTHONPATH')]))
    print(f'compiled {compile_kubeflow(args)}')
    return 0
  try:
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
    import shutil  # pylint: disable=g-import-not-at-top
    schema_dir = result['schema_uri']
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    shutil.copyfile(os.path.join(schema_dir, 'schema.pbtxt'), args.out)
    print(f'schema written to {args.out}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
