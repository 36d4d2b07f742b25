"""Every option the commands share, declared once with its default from config.py (each flag's
`dest` is the field it sets, of PipelineConfig or of its TrainerOptions, so
cli/config_builder.py copies them by name); cli/flag_groups.py declares them on a command's
parser."""

from cli import output_folder
from cli.inputs import csv_input
import config as cfg
from contracts import dates, trainer_options
from trainer import models

DEFAULTS = cfg.PipelineConfig(data='', data_kind='', output='')  # each field's default

DATA_HELP = (
  'a class-per-folder image tree, a CSV file or folder, or TFRecord file(s) '
  '(*.tfrecord, *.tfrecord.gz); default: embedded digits'
)

# flag → add_argument keywords; `dest` names the PipelineConfig or TrainerOptions field it sets.
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
    default=output_folder.DEFAULT_OUTPUT,
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
  '--keep-reports': dict(
    type=int,
    default=DEFAULTS.keep_reports,
    metavar='N',
    help='keep the reports of the newest N runs as <output>/reports/<run id>.html '
    "(default: %(default)s, every run's; report.html is always the latest)",
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
    default=DEFAULTS.label,
    help='CSV/TFRecord data: the label column or context feature (default: %(default)s); '
    'numbers regress (--task), --label-threshold T makes two classes of them',
  ),
  '--text-column': dict(
    default='',
    metavar='COLUMN',
    help='CSV: convert COLUMN (free text) and the label into SequenceExamples of token ids '
    '(vocabulary from the train split). Default: detected, when the only column besides the '
    f'label has >= {csv_input.MIN_TEXT_WORDS} words per row on median',
  ),
  '--tokens-key': dict(
    default=DEFAULTS.trainer.tokens_key,
    metavar='KEY',
    help='SequenceExample TFRecords: the feature list holding the tokens (default: the first)',
  ),
  '--label-threshold': dict(
    type=float,
    default=DEFAULTS.trainer.label_threshold,
    metavar='T',
    help='the label trains as two classes, (value > T), instead of a number to regress (a '
    'float label) or its values as classes (integers)',
  ),
  '--task': dict(
    choices=trainer_options.TASKS,
    default=DEFAULTS.trainer.task,
    help='tables: what the model learns: classes, or a number (regression). Default auto: a '
    'label of numbers, not all integers, or of many integers most held by a row or two, '
    'regresses; class ids and names are classes; --label-threshold T makes two classes',
  ),
  '--loss': dict(
    choices=trainer_options.LOSSES,
    default=DEFAULTS.trainer.loss,
    help="regression: the loss, on the label standardized with the train split's mean and "
    "deviation (default: huber, or the model file's LOSS; docs/models.md says why)",
  ),
  '--label-default': dict(
    default=DEFAULTS.trainer.label_default,
    metavar='VALUE',
    help='CSV and TFRecord columns: the label of rows that have none (empty, nan, NA, …): a '
    'class id, a float or a class name, as the label column holds. Default: such rows stop the '
    'run',
  ),
  '--date-order': dict(
    choices=dates.ORDERS,
    default=DEFAULTS.trainer.date_order,
    help='CSV: the order of dates written with slashes when no field above 12 decides it '
    '(05/03/2024): dmy (day first) or mdy (month first). Default: such a column stops the run',
  ),
  '--eval-percent': dict(
    type=int,
    default=None,  # None: the default, and Split-* TFRecords keep their splits
    help='share of examples in the eval split, by a hash of their content (default: '
    f'{DEFAULTS.eval_percent}); with Split-* TFRecords: re-split them (duplicates grouped)',
  ),
  '--duplicates': dict(
    choices=('group', 'keep-conflicts', 'off'),
    default=DEFAULTS.duplicates,
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
    "compared for duplicates and of the model's inputs, copied next to its predictions; "
    'without it, integer and string columns unique in every row are taken as ids (and named)',
  ),
  '--encoding': dict(
    choices=('encoded', 'raw'),
    default=DEFAULTS.encoding,
    help='images: keep JPEG/PNG bytes or store raw uint8 pixels (default: %(default)s)',
  ),
  '--compression': dict(
    choices=('none', 'gzip'),
    default=DEFAULTS.compression,
    help='images and CSV: shard compression (default: %(default)s; GZIP reads 4-8x slower)',
  ),
  '--csv-reader': dict(
    choices=cfg.CSV_READERS,
    default=DEFAULTS.csv_reader,
    help="CSV: the project's Arrow ExampleGen or TFX's CsvExampleGen (the same records; "
    'default: %(default)s)',
  ),
  '--shard-size-mb': dict(
    type=float,
    default=DEFAULTS.shard_size_mb,
    help='images: target shard size (default: %(default)s)',
  ),
  '--max-image-side': dict(
    type=int,
    default=DEFAULTS.max_image_side,
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
    default=DEFAULTS.span,
    help='data laid out by version, <data>/span-<N>/[version-<M>/]<class folders, CSV or '
    'TFRecord files>: the span to read (default: the latest span; within a span the '
    'latest version is read)',
  ),
  '--beam-runner': dict(
    default=DEFAULTS.beam_runner,
    choices=(cfg.DIRECT_RUNNER, cfg.DATAFLOW_RUNNER, cfg.FLINK_RUNNER, cfg.SPARK_RUNNER),
    help='Beam runner of the data components (default: %(default)s); the others need '
    '--beam-arg flags (docs/operations.md: Scaling out)',
  ),
  '--flink-master': dict(
    dest='flink_master',
    default=DEFAULTS.flink_master,
    metavar='HOST:PORT',
    help='with --beam-runner FlinkRunner: the Flink REST address, e.g. localhost:8081 for '
    "`make flink-up`'s cluster (its job server and SDK worker pool are then used)",
  ),
  '--spark-master': dict(
    dest='spark_master',
    default=DEFAULTS.spark_master,
    metavar='spark://HOST:PORT',
    help='with --beam-runner SparkRunner: the Spark master, e.g. spark://localhost:7077 for '
    "`make spark-up`'s cluster (its job server and SDK worker pool are then used)",
  ),
  '--beam-parallelism': dict(
    dest='beam_parallelism',
    type=int,
    default=DEFAULTS.beam_parallelism,
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
    default=DEFAULTS.beam_direct_running_mode,
    choices=(cfg.BEAM_AUTO, 'in_memory', 'multi_processing', 'multi_threading'),
    help='DirectRunner running mode (default: %(default)s: in_memory, with no worker processes '
    f'to start, for fewer than {cfg.IN_MEMORY_BELOW_IMAGES:,} images or CSV / TFRecord files '
    f'under {cfg.IN_MEMORY_BELOW_BYTES >> 20} MB, else multi_processing; StatisticsGen without Beam '
    f'below {cfg.STATISTICS_IN_PROCESS_BELOW_BYTES >> 20} MB of shards)',
  ),
  '--beam-workers': dict(
    dest='beam_direct_num_workers',
    type=int,
    default=DEFAULTS.beam_direct_num_workers,
    help='DirectRunner worker processes; 0 = one per core (default: %(default)s)',
  ),
  '--model': dict(
    default=DEFAULTS.trainer.model,
    metavar='NAME|FILE.py',
    help='what trains: a model file defining build_model(spec, hp) (docs/models.md), or a '
    f'built-in: {", ".join(models.BUILT_IN)} (default: {models.DEFAULT[trainer_options.IMAGE]} '
    f'for images, {models.DEFAULT[trainer_options.TABULAR]} for columns, '
    f'{models.DEFAULT[trainer_options.SEQUENCE]} for text and sequences)',
  ),
  '--module-file': dict(
    default=DEFAULTS.trainer.module_file,
    metavar='FILE.py',
    help="a TFX module file, unmodified: its preprocessing_fn runs in TFX's Transform, its "
    "run_fn trains as TFX's Trainer calls it, its tuner_fn tunes with --tune-trials "
    '(docs/design/module_files.md); a file with build_model only is a model file (--model)',
  ),
  '--weights': dict(
    default=DEFAULTS.trainer.weights,
    metavar='imagenet|none|FILE',
    help='the backbone models: start from ImageNet weights (the default; fetched once into '
    '~/.keras/models), from random ones (none), or from a Keras weights file of the same '
    'backbone (for machines without internet access; docs/models.md)',
  ),
  '--fine-tune-steps': dict(
    type=int,
    default=DEFAULTS.trainer.fine_tune_steps,
    metavar='N',
    help='with pretrained weights: after --train-steps with the backbone frozen, N steps with '
    'its top --fine-tune-layers unfrozen at a tenth of the learning rate (default: half of '
    '--train-steps; 0: the backbone stays frozen)',
  ),
  '--fine-tune-layers': dict(
    type=int,
    default=DEFAULTS.trainer.fine_tune_layers,
    metavar='N',
    help='backbone layers (with weights, BatchNormalization excluded) unfrozen for fine-tuning, '
    'counted from the top (default: %(default)s)',
  ),
  '--tune-trials': dict(
    type=int,
    default=DEFAULTS.tune_trials,
    metavar='N',
    help="search the model's search_space(hp) with TFX's Tuner (KerasTuner, random search) "
    'over N trials before training; the Trainer trains with the best values (default: 0, no '
    'tuning)',
  ),
  '--tune-steps': dict(
    type=int,
    default=DEFAULTS.tune_steps,
    metavar='S',
    help='training steps of each tuning trial (default: %(default)s)',
  ),
  '--train-steps': dict(
    type=int, default=DEFAULTS.train_steps, help='training steps (default: %(default)s)'
  ),
  '--eval-steps': dict(
    type=int,
    default=DEFAULTS.eval_steps,
    help='validation steps during training; 0 = the whole eval split',
  ),
  '--batch-size': dict(type=int, default=DEFAULTS.trainer.batch_size),
  '--learning-rate': dict(type=float, default=DEFAULTS.trainer.learning_rate),
  '--mixed-precision': dict(
    default=DEFAULTS.trainer.mixed_precision,
    choices=('auto', 'float32', 'mixed_float16', 'mixed_bfloat16'),
    help='Keras dtype policy (default auto: mixed_float16 on GPUs, mixed_bfloat16 on TPUs, '
    'float32 on CPUs)',
  ),
  '--xla': dict(
    default=DEFAULTS.trainer.xla,
    choices=tuple(trainer_options.XLA),
    help='XLA-compile the train step (default auto: on with GPUs/TPUs)',
  ),
  '--tpu': dict(
    default=DEFAULTS.trainer.tpu,
    help='train with TPUStrategy on this TPU (default: $TPU_NAME if set). Several workers: '
    'set TF_CONFIG (MultiWorkerMirroredStrategy); GPUs are found alone',
  ),
  '--seed': dict(
    type=int,
    default=DEFAULTS.trainer.seed,
    metavar='N',
    help='train reproducibly: the same data, code, options and N give the same model and '
    "metrics (random seeds set to N, TensorFlow's ops deterministic, the input check skipped; "
    'docs/operations.md; default: unseeded)',
  ),
  '--augment': dict(
    action='store_true',
    help='images: random left-right flips and shifts of up to 1/8 while training (off by '
    'default: digits and text are not mirror-invariant)',
  ),
  '--input-cache': dict(
    default=DEFAULTS.trainer.input_cache,
    choices=('auto', 'memory', 'off'),
    help='hold the decoded training input in memory, decoded once for every epoch (default auto: when '
    'the decoded train and eval splits fit a quarter of memory)',
  ),
  '--input-accessor': dict(
    default=DEFAULTS.trainer.input_accessor,
    choices=trainer_options.INPUT_ACCESSORS,
    help="a module file's fn_args.data_accessor: tuned (default: the project's input pipeline, "
    "TFXIO's results faster) or tfx (TFXIO's own)",
  ),
  '--tabular-stats': dict(
    default=DEFAULTS.trainer.tabular_stats,
    choices=trainer_options.TABULAR_STATS,
    help="tables, the project's models: the numbers' moments and the categories' ids from "
    'sample (default: the first 4,096 train rows; categories hashed) or transform (a full pass '
    "of TFX's Transform: vocabularies with OOV buckets; docs/models.md)",
  ),
  '--image-size': dict(
    type=int,
    nargs=2,
    metavar=('HEIGHT', 'WIDTH'),
    default=(DEFAULTS.trainer.image_height, DEFAULTS.trainer.image_width),
    help='model input size; default: the most common size in the data',
  ),
  '--image-channels': dict(
    type=int,
    choices=(0, 1, 3),
    default=DEFAULTS.trainer.image_channels,
    help='model input channels; 0 = 1 for all-grayscale data, else 3',
  ),
  '--min-accuracy': dict(
    type=float,
    default=DEFAULTS.min_accuracy,
    help='eval accuracy needed to bless and push the model (default: %(default)s)',
  ),
  '--max-accuracy-drop': dict(
    type=float,
    default=DEFAULTS.max_accuracy_drop,
    help='bless only a model whose eval accuracy is at most this far below the serving '
    "(latest blessed) model's on the same eval split (default: %(default)s; the first model: "
    '--min-accuracy alone)',
  ),
  '--min-class-recall': dict(
    type=float,
    default=DEFAULTS.min_class_recall,
    help='bless only a model that finds at least this share of every class in the eval split '
    '(recall per class; default: %(default)s, not checked)',
  ),
  '--allow-missed-classes': dict(
    action='store_true',
    help='bless a model even when it never predicts some class of the eval split (by default '
    'such a model is not pushed: with 990:10 labels, always answering the majority class scores '
    'accuracy 0.99)',
  ),
  '--min-eval-examples': dict(
    type=int,
    default=DEFAULTS.min_eval_examples,
    metavar='N',
    help='bless no model judged on fewer eval examples than this (default: %(default)s: fewer '
    'cannot show accuracy 0.9 even when every one is right; 0: not checked)',
  ),
  '--min-eval-class-examples': dict(
    type=int,
    default=DEFAULTS.min_eval_class_examples,
    metavar='N',
    help='classifiers: bless no model with fewer eval examples than this of any of its classes '
    '(default: %(default)s; 0: not checked)',
  ),
  '--min-improvement': dict(
    type=float,
    default=DEFAULTS.min_improvement,
    metavar='SHARE',
    help='regression: bless only a model whose eval MAE is at least this share below the mean '
    "predictor's (the train split's mean label for every row; default: %(default)s, 10 %% lower)",
  ),
  '--max-mae': dict(
    type=float,
    default=DEFAULTS.max_mae,
    help="regression: bless only a model whose eval MAE is at most this, in the label's units "
    '(default: not checked)',
  ),
  '--max-rmse': dict(
    type=float,
    default=DEFAULTS.max_rmse,
    help="regression: bless only a model whose eval RMSE is at most this, in the label's units "
    '(default: not checked)',
  ),
  '--max-error-increase': dict(
    type=float,
    default=DEFAULTS.max_error_increase,
    metavar='SHARE',
    help='regression: bless only a model whose eval RMSE is at most this share above the serving '
    "(latest blessed) model's on the same eval split (default: %(default)s, 10 %%; the first "
    'model: the other thresholds alone)',
  ),
  '--allow-feature': dict(
    action='append',
    dest='allowed_features',
    default=[],
    metavar='COLUMN',
    help='tabular data: keep COLUMN though it alone gives the label for 99%% of the eval rows '
    '(by default the run stops before training: a copy of the label or a function of it; '
    'repeatable)',
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
    default=DEFAULTS.max_damaged_percent,
    help='stop the run when more than this share of the records an ExampleGen recorded is '
    'damaged or missing (ShardCheck and the Trainer before training, the BulkInferrer before '
    'inference; default: %(default)s)',
  ),
  '--no-cache': dict(action='store_true', help='re-run every component'),
  '--input-service': dict(
    default=DEFAULTS.trainer.input_service,
    metavar='grpc://HOST:PORT',
    help='train on input read and decoded by this tf.data service (docs/input_service.md)',
  ),
}
