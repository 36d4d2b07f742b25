"""Every option the commands share, declared once with its default from config.py, and the one
builder from parsed options to a PipelineConfig (with the checks that make bad input one line).

Each flag's `dest` is the PipelineConfig field it sets, so the builder copies them by name.
"""

import argparse
import dataclasses
import os

from cli import inputs, output_lock
import config as cfg
from contracts import limits, trainer_options
from contracts.errors import UserError, first_line
from trainer import models

_DEFAULTS = cfg.PipelineConfig(data='', data_kind='', output='')
SALVAGED_INPUT = 'salvaged_input'  # <output>/…: intact copies of a damaged TFRecord input

DATA_HELP = (
  'a class-per-folder image tree, a CSV file or folder, or TFRecord file(s) '
  '(*.tfrecord, *.tfrecord.gz); default: embedded digits'
)

# flag → add_argument keywords; `dest` names the PipelineConfig field it sets.
OPTIONS = {
  '--data': dict(dest='data', default='', help=DATA_HELP),
  '--infer-data': dict(
    dest='infer_data',
    default='',
    metavar='PATH',
    help='unlabeled data of the same kind as --data (a folder of images at any depth, a CSV '
    'file or folder without the label column, or TFRecords of tf.Examples): once the Evaluator '
    "blesses the model, TFX's "
    'BulkInferrer scores it (serving_default) into an InferenceResult and predictions.csv',
  ),
  '--output': dict(
    default='output',
    help='folder for metadata, artifacts, serving model and logs (default: %(default)s); '
    'gs:// or s3:// for artifacts and the serving model in object storage '
    '(docs/operations.md: Object storage)',
  ),
  '--local-dir': dict(
    default='',
    metavar='DIR',
    help='with a gs:// or s3:// --output: the local folder for ML Metadata '
    '(metadata.sqlite), logs and the run report (default: '
    'output/remote/<scheme>/<bucket>/<path>)',
  ),
  '--wait': dict(
    action='store_true',
    help='when another run is using the same output, wait for it to end (default: refuse at once)',
  ),
  '--schema': dict(
    default=None,
    help='curated schema.pbtxt (ImportSchemaGen); default for the embedded digits: '
    'schema/digits/schema.pbtxt, otherwise SchemaGen infers one',
  ),
  '--label': dict(
    default=_DEFAULTS.label,
    help='CSV/TFRecord data: the label column or context feature (default: %(default)s); a '
    'float column trains as (value > --label-threshold)',
  ),
  '--text-column': dict(
    default='',
    metavar='COLUMN',
    help='CSV: convert COLUMN (free text) and the label into SequenceExamples of token ids '
    '(vocabulary from the train split). Default: detected, when the only column besides the '
    f'label has >= {inputs.MIN_TEXT_WORDS} words per row on median',
  ),
  '--tokens-key': dict(
    default=_DEFAULTS.tokens_key,
    metavar='KEY',
    help='SequenceExample TFRecords: the feature list holding the tokens (default: the first)',
  ),
  '--label-threshold': dict(type=float, default=_DEFAULTS.label_threshold),
  '--label-default': dict(
    default=_DEFAULTS.label_default,
    metavar='VALUE',
    help='CSV and TFRecord columns: the label of rows that have none (empty, nan, NA, …): a '
    'class id, a float or a class name, as the label column holds. Default: such rows stop the '
    'run',
  ),
  '--eval-percent': dict(
    type=int,
    default=None,  # None: the default, and Split-* TFRecords keep their splits
    help='share of examples in the eval split, by a hash of their content (default: '
    f'{_DEFAULTS.eval_percent}); with Split-* TFRecords: re-split them (duplicates grouped)',
  ),
  '--duplicates': dict(
    choices=('group', 'keep-conflicts', 'off'),
    default=_DEFAULTS.duplicates,
    help='group (default): copies and near-copies of an example share a split, and content '
    'filed under two labels is left out (listed in the summary); keep-conflicts: train and '
    'evaluate on those too; off: split by name / row hash alone (leakage possible)',
  ),
  '--id-column': dict(
    action='append',
    dest='id_columns',
    default=[],
    metavar='COLUMN',
    help='CSV/TFRecord data: a column that identifies a row (repeatable): left out when rows are '
    'compared for duplicates',
  ),
  '--encoding': dict(
    choices=('encoded', 'raw'),
    default=_DEFAULTS.encoding,
    help='images: keep JPEG/PNG bytes or store raw uint8 pixels (default: %(default)s)',
  ),
  '--compression': dict(
    choices=('none', 'gzip'),
    default=_DEFAULTS.compression,
    help='images and CSV: shard compression (default: %(default)s; GZIP reads 4-8x slower)',
  ),
  '--csv-reader': dict(
    choices=cfg.CSV_READERS,
    default=_DEFAULTS.csv_reader,
    help="CSV: the project's Arrow ExampleGen or TFX's CsvExampleGen (the same records; "
    'default: %(default)s)',
  ),
  '--shard-size-mb': dict(
    type=float,
    default=_DEFAULTS.shard_size_mb,
    help='images: target shard size (default: %(default)s)',
  ),
  '--max-image-side': dict(
    type=int,
    default=_DEFAULTS.max_image_side,
    metavar='PIXELS',
    help='images: store each image whose longer side is above PIXELS downscaled to it, once, '
    'at ingestion (aspect kept), so that training does not decode camera-size photos every '
    'epoch; e.g. 256 for a 224x224 model (default: 0, sizes kept)',
  ),
  '--data-rev': dict(
    dest='data_rev',
    default='',
    metavar='REV',
    help='read --data (a path inside a git repository under DVC) as of git revision REV (a '
    'commit, tag or branch) with DVC, from its local cache, into a copy under the output; '
    'the run records the commit and DVC hash in ML Metadata (docs/data.md: Data revisions)',
  ),
  '--span': dict(
    type=int,
    default=_DEFAULTS.span,
    help='data laid out by version, <data>/span-<N>/[version-<M>/]<class folders, CSV or '
    'TFRecord files>: the span to read (default: the latest span; within a span the '
    'latest version is read)',
  ),
  '--beam-runner': dict(
    default=_DEFAULTS.beam_runner,
    choices=(cfg.DIRECT_RUNNER, cfg.DATAFLOW_RUNNER, cfg.FLINK_RUNNER, cfg.SPARK_RUNNER),
    help='Beam runner of the data components (default: %(default)s); the others need '
    '--beam-arg flags (docs/operations.md: Scaling out)',
  ),
  '--flink-master': dict(
    dest='flink_master',
    default=_DEFAULTS.flink_master,
    metavar='HOST:PORT',
    help='with --beam-runner FlinkRunner: the Flink REST address, e.g. localhost:8081 for '
    "`make flink-up`'s cluster (its job server and SDK worker pool are then used)",
  ),
  '--spark-master': dict(
    dest='spark_master',
    default=_DEFAULTS.spark_master,
    metavar='spark://HOST:PORT',
    help='with --beam-runner SparkRunner: the Spark master, e.g. spark://localhost:7077 for '
    "`make spark-up`'s cluster (its job server and SDK worker pool are then used)",
  ),
  '--beam-parallelism': dict(
    dest='beam_parallelism',
    type=int,
    default=_DEFAULTS.beam_parallelism,
    metavar='N',
    help="FlinkRunner: parallelism of every Beam job (default: the cluster's own default)",
  ),
  '--beam-arg': dict(
    dest='beam_extra_args',
    action='append',
    default=[],
    metavar='ARG',
    help='passed to Beam as is, e.g. --beam-arg=--flink_master=host:8081 (repeatable)',
  ),
  '--beam-mode': dict(
    dest='beam_direct_running_mode',
    default=_DEFAULTS.beam_direct_running_mode,
    choices=(cfg.BEAM_AUTO, 'in_memory', 'multi_processing', 'multi_threading'),
    help='DirectRunner running mode (default: %(default)s: in_memory, with no worker processes '
    f'to start, for fewer than {cfg.IN_MEMORY_BELOW_IMAGES:,} images or CSV / TFRecord files '
    f'under {cfg.IN_MEMORY_BELOW_BYTES >> 20} MB, else multi_processing; StatisticsGen without Beam '
    f'below {cfg.STATISTICS_IN_PROCESS_BELOW_BYTES >> 20} MB of shards)',
  ),
  '--beam-workers': dict(
    dest='beam_direct_num_workers',
    type=int,
    default=_DEFAULTS.beam_direct_num_workers,
    help='DirectRunner worker processes; 0 = one per core (default: %(default)s)',
  ),
  '--model': dict(
    default=_DEFAULTS.model,
    metavar='NAME|FILE.py',
    help='what trains: a model file defining build_model(spec, hp) (docs/models.md), or a '
    f'built-in: {", ".join(models.BUILT_IN)} (default: {models.DEFAULT[trainer_options.IMAGE]} '
    f'for images, {models.DEFAULT[trainer_options.TABULAR]} for columns, '
    f'{models.DEFAULT[trainer_options.SEQUENCE]} for text and sequences)',
  ),
  '--weights': dict(
    default=_DEFAULTS.weights,
    metavar='imagenet|none|FILE',
    help='the backbone models: start from ImageNet weights (the default; fetched once into '
    '~/.keras/models), from random ones (none), or from a Keras weights file of the same '
    'backbone (for machines without internet access; docs/models.md)',
  ),
  '--fine-tune-steps': dict(
    type=int,
    default=_DEFAULTS.fine_tune_steps,
    metavar='N',
    help='with pretrained weights: after --train-steps with the backbone frozen, N steps with '
    'its top --fine-tune-layers unfrozen at a tenth of the learning rate (default: half of '
    '--train-steps; 0: the backbone stays frozen)',
  ),
  '--fine-tune-layers': dict(
    type=int,
    default=_DEFAULTS.fine_tune_layers,
    metavar='N',
    help='backbone layers (with weights, BatchNormalization excluded) unfrozen for fine-tuning, '
    'counted from the top (default: %(default)s)',
  ),
  '--tune-trials': dict(
    type=int,
    default=_DEFAULTS.tune_trials,
    metavar='N',
    help="search the model's search_space(hp) with TFX's Tuner (KerasTuner, random search) "
    'over N trials before training; the Trainer trains with the best values (default: 0, no '
    'tuning)',
  ),
  '--tune-steps': dict(
    type=int,
    default=_DEFAULTS.tune_steps,
    metavar='S',
    help='training steps of each tuning trial (default: %(default)s)',
  ),
  '--train-steps': dict(
    type=int, default=_DEFAULTS.train_steps, help='training steps (default: %(default)s)'
  ),
  '--eval-steps': dict(
    type=int,
    default=_DEFAULTS.eval_steps,
    help='validation steps during training; 0 = the whole eval split',
  ),
  '--batch-size': dict(type=int, default=_DEFAULTS.batch_size),
  '--learning-rate': dict(type=float, default=_DEFAULTS.learning_rate),
  '--mixed-precision': dict(
    default=_DEFAULTS.mixed_precision,
    choices=('auto', 'float32', 'mixed_float16', 'mixed_bfloat16'),
    help='Keras dtype policy (default auto: mixed_float16 on GPUs, mixed_bfloat16 on TPUs, '
    'float32 on CPUs)',
  ),
  '--xla': dict(
    default=_DEFAULTS.xla,
    choices=('auto', 'on', 'off'),
    help='XLA-compile the train step (default auto: on with GPUs/TPUs)',
  ),
  '--tpu': dict(
    default=_DEFAULTS.tpu,
    help='train with TPUStrategy on this TPU (default: $TPU_NAME if set). Several workers: '
    'set TF_CONFIG (MultiWorkerMirroredStrategy); GPUs are found alone',
  ),
  '--augment': dict(
    action='store_true',
    help='images: random left-right flips and shifts of up to 1/8 while training (off by '
    'default: digits and text are not mirror-invariant)',
  ),
  '--input-cache': dict(
    default=_DEFAULTS.input_cache,
    choices=('auto', 'memory', 'off'),
    help='hold the decoded training input in memory, decoded once for every epoch (default auto: when '
    'the decoded train and eval splits fit a quarter of memory)',
  ),
  '--image-size': dict(
    type=int,
    nargs=2,
    metavar=('HEIGHT', 'WIDTH'),
    default=(_DEFAULTS.image_height, _DEFAULTS.image_width),
    help='model input size; default: the most common size in the data',
  ),
  '--image-channels': dict(
    type=int,
    choices=(0, 1, 3),
    default=_DEFAULTS.image_channels,
    help='model input channels; 0 = 1 for all-grayscale data, else 3',
  ),
  '--min-accuracy': dict(
    type=float,
    default=_DEFAULTS.min_accuracy,
    help='eval accuracy needed to bless and push the model (default: %(default)s)',
  ),
  '--max-accuracy-drop': dict(
    type=float,
    default=_DEFAULTS.max_accuracy_drop,
    help='bless only a model whose eval accuracy is at most this far below the serving '
    "(latest blessed) model's on the same eval split (default: %(default)s; the first model: "
    '--min-accuracy alone)',
  ),
  '--min-class-recall': dict(
    type=float,
    default=_DEFAULTS.min_class_recall,
    help='bless only a model that finds at least this share of every class in the eval split '
    '(recall per class; default: %(default)s, not checked)',
  ),
  '--allow-missed-classes': dict(
    action='store_true',
    help='bless a model even when it never predicts some class of the eval split (by default '
    'such a model is not pushed: with 990:10 labels, always answering the majority class scores '
    'accuracy 0.99)',
  ),
  '--slice-feature': dict(
    action='append',
    dest='slice_features',
    default=[],
    metavar='COLUMN',
    help='tabular data: also evaluate per value of this column (repeatable; reported, the '
    'thresholds apply to the whole eval split)',
  ),
  '--max-damaged-percent': dict(
    type=float,
    default=_DEFAULTS.max_damaged_percent,
    help='stop before training when more than this share of the records in the ExampleGen '
    'output is damaged (default: %(default)s)',
  ),
  '--no-cache': dict(action='store_true', help='re-run every component'),
  '--input-service': dict(
    default=_DEFAULTS.input_service,
    metavar='grpc://HOST:PORT',
    help='train on input read and decoded by this tf.data service (docs/input_service.md)',
  ),
}

INFER = ('--infer-data',)
DATA = (
  '--data',
  '--label',
  '--text-column',
  '--tokens-key',
  '--label-threshold',
  '--label-default',
  '--eval-percent',
  '--duplicates',
  '--id-column',
  '--encoding',
  '--compression',
  '--csv-reader',
  '--shard-size-mb',
  '--max-image-side',
  '--span',
  '--data-rev',
)
OUTPUT = ('--output', '--local-dir', '--wait')
BEAM = (
  '--beam-runner',
  '--flink-master',
  '--spark-master',
  '--beam-parallelism',
  '--beam-arg',
  '--beam-mode',
  '--beam-workers',
)
TRAINING = (
  '--schema',
  '--model',
  '--weights',
  '--fine-tune-steps',
  '--fine-tune-layers',
  '--tune-trials',
  '--tune-steps',
  '--train-steps',
  '--eval-steps',
  '--batch-size',
  '--learning-rate',
  '--mixed-precision',
  '--xla',
  '--tpu',
  '--augment',
  '--input-cache',
  '--image-size',
  '--image-channels',
  '--min-accuracy',
  '--max-accuracy-drop',
  '--min-class-recall',
  '--allow-missed-classes',
  '--slice-feature',
  '--max-damaged-percent',
  '--no-cache',
  '--input-service',
)


def add(parser: argparse.ArgumentParser, *flags: str, **changes: dict) -> None:
  """Declares `flags` on `parser`; changes['no_cache'] = {...} adjusts one flag's keywords."""
  for flag in flags:
    parser.add_argument(flag, **{**OPTIONS[flag], **changes.get(flag[2:].replace('-', '_'), {})})


def _data_kind(source, args: argparse.Namespace):
  """(data kind, text column): CSV with a free-text column is TEXT, TFRecords of
  SequenceExamples are SEQUENCES (both become sequence models)."""
  if args.text_column and (source is None or source.kind != cfg.CSV):
    raise UserError('--text-column: only CSV data has columns')
  if source is None:
    return None, ''
  if source.kind == cfg.CSV:
    sample = inputs.sample_file(source)
    columns = _csv_header(sample)
    for column in getattr(args, 'id_columns', []):
      if column not in columns:
        raise UserError(
          f'--id-column {column}: no such column in {sample} (columns: {", ".join(columns)})'
        )
    text_column = inputs.text_column(sample, args.label, args.text_column, args.label_default)
    return (cfg.TEXT if text_column else cfg.CSV), text_column
  if source.kind == cfg.TFRECORDS and inputs.holds_sequence_examples(inputs.sample_file(source)):
    return cfg.SEQUENCES, ''
  return source.kind, ''


# What --infer-data can be (BulkInferrer in the DAG): not text or sequences yet.
INFERRED_KINDS = (cfg.IMAGES, cfg.CSV, cfg.TFRECORDS)


def check_infer_kind(kind: str) -> None:
  if kind not in INFERRED_KINDS:
    raise UserError(
      f'--infer-data: only images, CSV and TFRecord (tf.Example) data are scored in the DAG, '
      f'not {kind} data; score it after the push with pipeline.py predict'
    )


def infer_source(args: argparse.Namespace, kind: str, training):
  """--infer-data checked against --data (`training`, its DataSource): the same kind, and for
  CSV no column --data lacks. (input base, pattern), or None without it."""
  path = getattr(args, 'infer_data', '')
  if not path:
    return None
  check_infer_kind(kind)
  if kind == cfg.IMAGES:
    return inputs.unlabeled_images(path, '--infer-data'), inputs.UNLABELED_IMAGES
  try:
    source = inputs.resolve_data(path)
  except UserError as e:
    raise UserError(str(e).replace('--data', '--infer-data', 1)) from None
  if source.kind != kind:
    raise UserError(f'--infer-data {path}: {source.kind} data, but --data is {kind} data')
  if source.spans or source.splits:
    raise UserError(
      f'--infer-data {path}: one file or a folder of files, not span-<N> or Split-<name> folders'
    )
  sample = inputs.sample_file(source)  # a folder without files of its kind: one line now
  if kind == cfg.CSV and not cfg.is_remote(sample) and not cfg.is_remote(training.root):
    known = _csv_header(inputs.sample_file(training))
    unknown = [column for column in _csv_header(sample) if column not in known]
    if unknown:
      raise UserError(
        f'--infer-data {sample}: column(s) {", ".join(unknown)} not in --data '
        f'(columns: {", ".join(known)})'
      )
  return source.root, source.pattern


def _csv_header(path: str) -> list:
  import csv

  with open(path, encoding='utf-8', errors='replace', newline='') as f:
    return next(csv.reader([f.readline()]), [])


def check_numbers(args: argparse.Namespace) -> None:
  """Numbers out of range: one line each, before anything runs (`run` and `compile` alike; the
  same table, contracts/limits.py, checks `submit --param`)."""
  for name in limits.RULES:
    value = getattr(args, name, None)
    wrong = value is not None and limits.problem(name, value)
    if wrong:
      raise UserError(f'--{name.replace("_", "-")} {_shown(value)}: {wrong}')


def _shown(value) -> str:
  """A number as typed: 0.5, 100, or the two of --image-size."""
  if isinstance(value, (list, tuple)):
    return ' '.join(map(str, value))
  return f'{value:g}' if isinstance(value, float) else str(value)


def check_input_service(args: argparse.Namespace, reachable: bool = False) -> None:
  """--input-service: '' or grpc://HOST:PORT; with `reachable`, a dispatcher must answer."""
  address = getattr(args, 'input_service', '')
  if not address:
    return
  from trainer import input_service

  try:
    input_service.parse_address(address)
    if reachable:
      input_service.check(address)
  except ValueError as e:
    raise UserError(f'--input-service: {e}') from None


def model_options(args: argparse.Namespace, data_kind: str, local: bool = True) -> dict:
  """PipelineConfig fields for --model and --weights, checked without importing TensorFlow:
  a built-in for this kind of data, or a model file that parses and defines build_model (what
  it builds is checked by the Trainer, against the data). local: --weights FILE must exist."""
  name, weights = getattr(args, 'model', ''), getattr(args, 'weights', '')
  kind = cfg.trainer_kind(data_kind)
  decided = {}
  if name.endswith('.py'):
    decided = dict(model=os.path.abspath(name), model_source=_model_source(name))
  elif name and name not in models.BUILT_IN:
    raise UserError(
      f'--model {name}: not a built-in model ({", ".join(models.BUILT_IN)}) nor a .py file'
    )
  elif name and models.BUILT_IN[name] != kind:
    raise UserError(
      f'--model {name}: a model for {models.BUILT_IN[name]} data; this data is {kind} '
      f'(its built-in: {models.DEFAULT[kind]})'
    )
  backbone = name in models.BACKBONES or 'model_source' in decided
  for flag, value, unset in (
    ('--weights', weights, ''),
    ('--fine-tune-steps', getattr(args, 'fine_tune_steps', -1), _DEFAULTS.fine_tune_steps),
  ):
    if value != unset and not backbone:
      raise UserError(
        f'{flag}: only for a backbone model ({", ".join(models.BACKBONES)}) or a model file'
      )
  special = (trainer_options.IMAGENET, trainer_options.NO_WEIGHTS)
  if weights and weights not in special and local and not cfg.is_remote(weights):
    if not os.path.isfile(weights):
      raise UserError(f'--weights {weights}: no such file (or imagenet, none)')
    decided['weights'] = os.path.abspath(weights)
  return decided


def check_imagenet(args: argparse.Namespace) -> None:
  """A backbone starting from ImageNet weights: they are in Keras' cache or can be fetched now
  (the Trainer would fail on them after the data components ran)."""
  name, weights = getattr(args, 'model', ''), getattr(args, 'weights', '')
  if name not in models.BACKBONES or weights not in ('', trainer_options.IMAGENET):
    return
  from trainer.models import backbone

  try:
    backbone.fetch_imagenet(name)
  except Exception as e:
    raise UserError(
      f'--model {name}: its ImageNet weights cannot be fetched ({_reason(e)}); pass '
      '--weights none, or --weights FILE with the weights saved on a machine that can '
      '(docs/models.md)'
    ) from None


def _reason(error: BaseException) -> str:
  """The first line of the error at the root of `error` (Keras wraps urllib's)."""
  while error.__cause__ or error.__context__:
    error = error.__cause__ or error.__context__
  return first_line(error)


def _model_source(path: str) -> str:
  """The model file's text, once it parses and defines build_model at its top level."""
  import ast

  try:
    with open(path, encoding='utf-8') as f:
      source = f.read()
  except OSError as e:
    raise UserError(f'--model {path}: {e.strerror or e}') from None
  try:
    tree = ast.parse(source, path)
  except SyntaxError as e:
    raise UserError(f'--model {path}: line {e.lineno}: {e.msg}') from None
  defined = set()
  for node in tree.body:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
      defined.add(node.name)
    elif isinstance(node, ast.Assign):
      defined.update(target.id for target in node.targets if isinstance(target, ast.Name))
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
      defined.update(alias.asname or alias.name for alias in node.names)
  if 'build_model' not in defined:
    raise UserError(f'--model {path}: defines no build_model(spec, hp) (docs/models.md)')
  return source


ENGINE_MASTERS = {  # runner → (its flag, dest, the Beam flag that may name it instead, example)
  cfg.FLINK_RUNNER: ('--flink-master', 'flink_master', '--flink_master', 'localhost:8081'),
  cfg.SPARK_RUNNER: (
    '--spark-master',
    'spark_master',
    '--spark_master_url',
    'spark://localhost:7077',
  ),
}


def engine_args(args: argparse.Namespace) -> list:
  """FlinkRunner's or SparkRunner's arguments, resolved against the cluster (which must answer:
  one line, exit 2, within seconds when it does not); [] for the other runners."""
  for runner, (flag, dest, _, _) in ENGINE_MASTERS.items():
    if getattr(args, dest, '') and args.beam_runner != runner:
      raise UserError(f'{flag} goes with --beam-runner {runner}')
  if args.beam_runner not in ENGINE_MASTERS:
    return []
  flag, dest, beam_flag, example = ENGINE_MASTERS[args.beam_runner]
  extra = getattr(args, 'beam_extra_args', [])
  given = [a.split('=', 1)[1] for a in extra if a.startswith(beam_flag + '=')]
  master = getattr(args, dest, '') or (given[-1] if given else '')
  if not master:
    raise UserError(
      f'--beam-runner {args.beam_runner} needs {flag} (the local cluster of '
      f'`make {args.beam_runner[:-6].lower()}-up`: {example})'
    )
  from engines import beam_args, common

  try:
    return beam_args.engine_args(args.beam_runner, master, args.beam_parallelism)
  except common.EngineError as e:
    raise UserError(f'{flag} {master}: {e}') from None


def add_engine_flags(parser: argparse.ArgumentParser, what: str) -> None:
  """--beam-runner (the DirectRunner or a cluster), --flink-master, --spark-master and
  --beam-parallelism for a command whose own Beam pipeline runs `what`."""
  add(
    parser,
    '--beam-runner',
    '--flink-master',
    '--spark-master',
    '--beam-parallelism',
    beam_runner=dict(
      choices=(cfg.DIRECT_RUNNER, cfg.FLINK_RUNNER, cfg.SPARK_RUNNER),
      help=f'where {what} runs (default: %(default)s; a cluster: no progress line while it runs)',
    ),
  )


def command_engine_args(args: argparse.Namespace, beam_extra_args: list) -> list:
  """engine_args for a command with its own Beam flags (predict, monitor)."""
  return engine_args(argparse.Namespace(**dict(vars(args), beam_extra_args=beam_extra_args)))


def _check_runner(args: argparse.Namespace) -> None:
  missing = [
    flag
    for flag in cfg.RUNNER_NEEDS.get(args.beam_runner, ())
    if not any(arg.startswith(flag + '=') for arg in args.beam_extra_args)
  ]
  if missing:
    raise UserError(
      f'--beam-runner {args.beam_runner} needs '
      + ' '.join(f'--beam-arg={flag}=…' for flag in missing)
    )


def _check_buckets(args: argparse.Namespace) -> None:
  for flag, path in (('--data', args.data), ('--output', args.output)):
    if cfg.is_remote(path):
      from components import object_storage

      try:
        object_storage.check_bucket(path)
      except ValueError as e:
        raise UserError(f'{flag} {path}: {e}') from None


def _staged_revision(args: argparse.Namespace):
  """--data-rev: (args reading the staged copy, the config fields that say where it is from)."""
  from data_revisions import revision

  if not args.data:
    raise UserError('--data-rev needs --data: a path inside a git repository under DVC')
  remote = cfg.is_remote(args.output)
  local = (
    (getattr(args, 'local_dir', '') or inputs.local_state_dir(args.output))
    if remote
    else args.output
  )
  staged, _ = revision.stage(
    args.data, args.data_rev, revision.staging_folder(os.path.abspath(local))
  )
  source = dict(data_rev=args.data_rev, data_source=os.path.abspath(args.data))
  return argparse.Namespace(**dict(vars(args), data=staged)), source


def build_config(args: argparse.Namespace) -> cfg.PipelineConfig:
  """Checks --data, --output and the numbers (raising UserError) and builds the config; the
  embedded digits are written out when --data is not given."""
  check_numbers(args)
  _check_runner(args)
  resolved_engine_args = engine_args(args)
  check_input_service(args, reachable=True)
  schema = getattr(args, 'schema', None)
  if schema and not os.path.isfile(schema):
    raise UserError(f'--schema {schema}: no such file')
  _check_buckets(args)
  revision = {}
  if getattr(args, 'data_rev', ''):
    args, revision = _staged_revision(args)
  source = inputs.resolve_data(args.data) if args.data else None
  kind, text_column = _data_kind(source, args)
  if getattr(args, 'max_image_side', 0) and kind not in (None, cfg.IMAGES):
    raise UserError('--max-image-side: only image folders are stored by the project')
  if getattr(args, 'slice_features', None) and kind not in (cfg.CSV, cfg.TFRECORDS):
    raise UserError('--slice-feature: only tabular data (CSV or TFRecord columns) has features')
  chosen_model = model_options(args, kind or cfg.IMAGES)
  check_imagenet(args)
  if source is not None:
    inputs.check_outside_data(args.data, source.kind, '--output', args.output)
  infer = infer_source(args, kind or cfg.IMAGES, source)
  output = inputs.check_output(args.output)
  local_dir = output
  if cfg.is_remote(output):
    local_dir = args.local_dir or inputs.local_state_dir(output)
    if source is not None:
      inputs.check_outside_data(args.data, source.kind, '--local-dir', local_dir)
    local_dir = inputs.check_output(local_dir)
  output_lock.hold(local_dir, f'--output {output}', wait=getattr(args, 'wait', False))
  inputs.check_metadata(os.path.join(local_dir, cfg.METADATA_FILE))
  if source is None:
    source = inputs.resolve_data(
      inputs.write_digits(os.path.join(local_dir, 'default_data', 'digits'))
    )
    kind, schema = cfg.IMAGES, schema or cfg.DIGITS_SCHEMA
  elif source.kind == cfg.TFRECORDS:  # damaged records: read intact copies instead
    source, _ = inputs.salvage_tfrecords(source, os.path.join(local_dir, SALVAGED_INPUT))
  if kind == cfg.TEXT:
    schema = schema or cfg.TEXT_SCHEMA
  if args.span and args.span not in source.spans:
    raise UserError(
      f'--span {args.span}: '
      + (
        f'no span-{args.span} folder (spans: {", ".join(map(str, source.spans))})'
        if source.spans
        else 'the data has no span-<N> folders'
      )
    )
  data_bytes = inputs.data_bytes(source)
  resplit = getattr(args, 'eval_percent', None)
  return config_from(
    args,
    data=source.root,
    data_kind=kind,
    output=output,
    local_dir=local_dir,
    # Already split TFRecords keep their splits, unless --eval-percent asks to re-split them.
    data_splits=source.splits if resplit is None else (),
    data_pattern=source.pattern if resplit is None or not source.splits else 'Split-*/*',
    text_column=text_column,
    **(dict(infer_data=infer[0], infer_pattern=infer[1]) if infer else {}),
    **revision,
    schema=os.path.abspath(schema) if schema else None,
    beam_direct_running_mode=cfg.direct_running_mode(
      args.beam_direct_running_mode, source.images, args.beam_direct_num_workers, data_bytes
    ),
    csv_direct_running_mode=cfg.arrow_csv_running_mode(
      args.beam_direct_running_mode, args.beam_direct_num_workers, data_bytes
    )
    if kind == cfg.CSV
    else '',
    beam_engine_args=resolved_engine_args,
    **chosen_model,
  )


def config_from(args: argparse.Namespace, schema_default=None, **decided) -> cfg.PipelineConfig:
  """PipelineConfig from the parsed options (each flag's dest is a field), then `decided`."""
  fields = {f.name for f in dataclasses.fields(cfg.PipelineConfig)}
  given = {name: value for name, value in vars(args).items() if name in fields}
  if given.get('eval_percent', 0) is None:
    given['eval_percent'] = _DEFAULTS.eval_percent
  if hasattr(args, 'image_size'):
    given.update(image_height=args.image_size[0], image_width=args.image_size[1])
  if hasattr(args, 'no_cache'):
    given['enable_cache'] = not args.no_cache
  given['statistics_in_process_below_bytes'] = cfg.statistics_in_process_below(  # the executor
    getattr(args, 'beam_direct_running_mode', _DEFAULTS.beam_direct_running_mode),  # measures
    getattr(args, 'beam_direct_num_workers', _DEFAULTS.beam_direct_num_workers),  # the shards
  )
  given.update(decided)
  if not given.get('schema') and schema_default:
    given['schema'] = schema_default
  return cfg.PipelineConfig(**given)
