"""The one typed configuration shared by every runner (local, Kubeflow Pipelines, Vertex AI)."""

import dataclasses
import os
from typing import Dict, List, Optional, Tuple

from contracts import text_record, trainer_options
from contracts.trainer_options import TrainerOptions

IMAGES, CSV, TFRECORDS = 'images', 'csv', 'tfrecords'
TEXT = 'text'  # a CSV with a free-text column, converted to SequenceExamples
SEQUENCES = 'sequences'  # TFRecords of SequenceExamples
PIPELINE_NAME = 'tfrecord-pipeline'
METADATA_FILE = 'metadata.sqlite'  # ML Metadata's SQLite store, in the local folder
HERE = os.path.dirname(os.path.abspath(__file__))
WEIGHTS_NOT_A_FILE = ('', trainer_options.IMAGENET, trainer_options.NO_WEIGHTS)
DIGITS_SCHEMA = os.path.join(HERE, 'schema', 'digits', 'schema.pbtxt')  # the embedded data's
TEXT_SCHEMA = os.path.join(HERE, 'schema', 'text', 'schema.pbtxt')  # the text route's layout
TEXT_SCHEMA_IN_IMAGE = 'schema/text/schema.pbtxt'  # the same, in the image
COMPILED_EXAMPLE = os.path.join(HERE, 'kubeflow', 'pipeline.json')  # make compile writes it
REMOTE_PREFIXES = ('gs://', 's3://')  # object storage (utils/object_storage.py)
DIRECT_RUNNER, DATAFLOW_RUNNER = 'DirectRunner', 'DataflowRunner'
# The DirectRunner's running mode by default: Beam's worker processes cost ~16.6 s to start per
# Beam component on 2 cores and then save ~5 ms per camera-size photo (docs/benchmarks.md, photos
# prepared both ways), so one process (in_memory) finishes sooner below ~2,600 such photos, and
# further still for small images. `auto` is in_memory below IN_MEMORY_BELOW_IMAGES images.
BEAM_AUTO = 'auto'
IN_MEMORY_BELOW_IMAGES = 2000
# CSV and TFRecords: CsvExampleGen took the same 37-43 s on a 200,000-row, 17 MB CSV in one process
# and in worker processes (2 cores), so below this size the workers' start-up is all they add.
IN_MEMORY_BELOW_BYTES = 64 << 20
# CSV → tf.Examples: the project's Arrow ExampleGen (components/csv_example_gen: TFX's records,
# 10x faster or more, docs/benchmarks.md) or TFX's CsvExampleGen. Both run as 'CsvExampleGen'.
ARROW_CSV, STOCK_CSV = 'arrow', 'tfx'
CSV_READERS = (ARROW_CSV, STOCK_CSV)
# The Arrow one with `auto` keeps Beam in one process below this size whatever the rest of the
# pipeline does. Measured on 2 cores (bench.csv_example_gen, docs/benchmarks.md): in one process
# 2.4 s on 200,000 rows and 9.7 s on 1,000,000 (97 MB) at ~0.9 MB peak; with 2 worker processes
# 18.1 s and 23.3 s at 2.6 GB (each worker imports TensorFlow: ~17 s fixed, then 1.5x the rate),
# even at ~4.8 M rows (~470 MB).
ARROW_CSV_IN_MEMORY_BELOW_BYTES = 512 << 20
# StatisticsGen with `auto` computes TFDV's statistics in its own process, without Beam, below
# this size of tf.Example shards (components/statistics_gen). Measured on 2 cores
# (bench.statistics_and_evaluation, docs/benchmarks.md; two invocations): 200,000 CSV rows (37 MB)
# 2.2-2.4 s against TFX's 6.2-7.6 s in one Beam process; 1,000,000 rows (186 MB) 10.7-12.2 s at a
# 3.0 GB peak against 25.2-30.4 s with Beam's worker processes (what `auto` gives TFX's there).
# Larger data was not measured and its memory grows with it: the limit is just above 186 MB.
STATISTICS_IN_PROCESS_BELOW_BYTES = 200 << 20


def trainer_kind(data_kind: str) -> str:
  """The Trainer's kind of data (contracts/trainer_options.py) for a PipelineConfig.data_kind."""
  return {
    IMAGES: trainer_options.IMAGE,
    TEXT: trainer_options.SEQUENCE,
    SEQUENCES: trainer_options.SEQUENCE,
  }.get(data_kind, trainer_options.TABULAR)


def direct_running_mode(requested: str, images: int, workers: int, data_bytes: int = 0) -> str:
  """The DirectRunner mode: `requested` itself unless 'auto', which is 'in_memory' for fewer than
  IN_MEMORY_BELOW_IMAGES images or CSV / TFRecord files of fewer than IN_MEMORY_BELOW_BYTES (and
  no worker count asked for), else 'multi_processing'."""
  if requested != BEAM_AUTO:
    return requested
  small = 0 < images < IN_MEMORY_BELOW_IMAGES or 0 < data_bytes < IN_MEMORY_BELOW_BYTES
  return 'in_memory' if small and not workers else 'multi_processing'


def direct_num_workers(mode: str, requested: int) -> int:
  """The DirectRunner's worker count: `requested`, where 0 is one per core, except that
  'in_memory' runs in this process, where more than one worker only adds threads that wait for
  one another (the Evaluator on the embedded digits: 3.2 s with 2, 2.65 s with 1)."""
  return 1 if mode == 'in_memory' and not requested else requested


def arrow_csv_running_mode(requested: str, workers: int, data_bytes: int) -> str:
  """The Arrow CSV ExampleGen's DirectRunner mode: 'in_memory' for `auto` below
  ARROW_CSV_IN_MEMORY_BELOW_BYTES (no worker count asked for), else '' (the pipeline's)."""
  small = 0 < data_bytes < ARROW_CSV_IN_MEMORY_BELOW_BYTES
  return 'in_memory' if requested == BEAM_AUTO and small and not workers else ''


def statistics_in_process_below(requested: str, workers: int) -> int:
  """StatisticsGen's in-process limit in bytes: STATISTICS_IN_PROCESS_BELOW_BYTES for `auto`
  (no worker count asked for), else 0 (always TFX's Beam pipeline)."""
  return STATISTICS_IN_PROCESS_BELOW_BYTES if requested == BEAM_AUTO and not workers else 0


# The serving check before the Pusher: the project's ServingCheck (a fresh process in its step),
# or TFX's InfraValidator starting TensorFlow Serving as a pod (Kubeflow Pipelines on Kubernetes).
PROCESS_SERVING_CHECK, KUBERNETES_SERVING_CHECK = 'process', 'kubernetes'
FLINK_RUNNER, SPARK_RUNNER = 'FlinkRunner', 'SparkRunner'
# What each runner needs besides --runner (passed with --beam-arg); see docs/operations.md: Scaling out.
RUNNER_NEEDS = {
  DATAFLOW_RUNNER: ('--project', '--region', '--temp_location'),
}


# The DirectRunner's dependency flag: without one, a Beam executor of TFX builds an sdist of TFX
# for Beam's workers when it starts (~1.3 s, a 49 MB copy of TFX left under the temp folder).
LOCAL_ENVIRONMENT = '--sdk_container_image=local-environment'


@dataclasses.dataclass
class CloudConfig:
  """Where the compiled pipeline's steps run on Google Cloud (Kubeflow Pipelines / Vertex AI).

  Every step runs in `image`; Beam components use the DirectRunner inside their step unless
  `beam_runner` is DataflowRunner, and the Trainer runs in its step unless `vertex_training`.
  """

  image: str = 'tfrecord-pipeline:latest'
  project: str = ''
  region: str = ''
  beam_runner: str = DIRECT_RUNNER
  dataflow_temp_location: str = ''  # gs://… scratch space for Dataflow jobs
  dataflow_max_workers: int = 0  # 0: Dataflow's autoscaling default
  dataflow_machine_type: str = ''  # '': Dataflow's default
  vertex_training: bool = False  # Trainer as a Vertex AI custom job
  vertex_tuning: bool = False  # Tuner's trials as a Vertex AI custom job (TFX's Vertex Tuner)
  tune_parallel_trials: int = 1  # with vertex_tuning: trials at once (one worker each)
  trainer_machine_type: str = 'n1-standard-8'
  trainer_accelerator_type: str = ''  # e.g. NVIDIA_TESLA_T4; '': CPU only
  trainer_accelerator_count: int = 0
  serving_check: str = PROCESS_SERVING_CHECK  # or KUBERNETES_SERVING_CHECK
  tf_serving_tag: str = '2.16.1'  # tensorflow/serving image of the Kubernetes check (TF 2.16)

  @property
  def dataflow_args(self) -> List[str]:
    """Beam args of every Beam component when it runs on Dataflow, workers in `image`."""
    args = [
      '--runner=DataflowRunner',
      f'--project={self.project}',
      f'--region={self.region}',
      f'--temp_location={self.dataflow_temp_location}',
      f'--sdk_container_image={self.image}',
      '--experiments=use_runner_v2',
    ]
    if self.dataflow_max_workers:
      args.append(f'--max_num_workers={self.dataflow_max_workers}')
    if self.dataflow_machine_type:
      args.append(f'--machine_type={self.dataflow_machine_type}')
    return args

  @property
  def vertex_tuning_args(self) -> dict:
    """The CustomJob TFX's Vertex Tuner starts: one replica per parallel trial, in `image`."""
    pools = self.vertex_training_args['worker_pool_specs']
    return {'project': self.project, 'job_spec': {'worker_pool_specs': pools}}

  @property
  def vertex_training_args(self) -> dict:
    """The CustomJob spec TFX's Vertex Trainer extension submits: one worker in `image`."""
    machine = {'machine_type': self.trainer_machine_type}
    if self.trainer_accelerator_type:
      machine.update(
        accelerator_type=self.trainer_accelerator_type,
        accelerator_count=self.trainer_accelerator_count or 1,
      )
    return {
      'project': self.project,
      'worker_pool_specs': [
        {'machine_spec': machine, 'replica_count': 1, 'container_spec': {'image_uri': self.image}}
      ],
    }


@dataclasses.dataclass
class PipelineConfig:
  """Everything create_pipeline needs; paths may be local or remote (gs://)."""

  data: str  # image tree root, CSV file/folder, or TFRecord file/folder
  data_kind: str  # IMAGES, CSV, TFRECORDS, TEXT or SEQUENCES
  output: str  # artifacts and the serving model live below (local, gs://, s3://)
  local_dir: str = ''  # metadata.sqlite, logs, run report; '' : `output` (local)
  keep_reports: int = 0  # reports/<run id>.html kept: the newest this many (0: all)
  pipeline_root: str = ''  # '' : <output>/pipeline_root
  pipeline_name: str = PIPELINE_NAME
  data_pattern: str = '*'  # files under `data` (a file: its name; images: '*/*');
  # data versions: 'span-{SPAN}[/version-{VERSION}]/…'
  span: int = 0  # with {SPAN}: the span to read; 0 = the latest
  data_splits: Tuple[Tuple[str, str], ...] = ()  # TFRecords already split: (name, pattern)
  schema: Optional[str] = None  # curated schema.pbtxt; None: SchemaGen infers one
  label: str = TrainerOptions.label_key  # tabular label column (text: the CSV's label column)
  text_column: str = ''  # TEXT: the CSV column holding the text
  task_reason: str = ''  # why trainer.task is what it is (said at the start of a run)
  label_warning: str = ''  # columns holding the next row's label in file order (said likewise)
  encoding: str = 'encoded'  # images: 'encoded' (JPEG/PNG bytes) or 'raw' (uint8 pixels)
  compression: str = 'none'  # images and CSV: 'none' or 'gzip'
  csv_reader: str = ARROW_CSV  # CSV: ARROW_CSV or STOCK_CSV (CSV_READERS)
  eval_percent: int = 20
  duplicates: str = 'group'  # components/duplicates.py MODES: group, keep-conflicts, off
  id_columns: List[str] = dataclasses.field(default_factory=list)  # left out of row fingerprints
  shard_size_mb: float = 256.0
  max_image_side: int = 0  # images: stored with the longer side at most this (0: as they are)
  tune_trials: int = 0  # > 0: TFX's Tuner searches the model's search space first
  tune_steps: int = 100  # training steps per tuning trial
  train_steps: int = 600
  eval_steps: int = 0  # 0: the whole eval split
  # The Trainer's (and Tuner's) options, label threshold and default included; its data_kind and
  # label_key follow data_kind and label (__post_init__).
  trainer: TrainerOptions = dataclasses.field(default_factory=TrainerOptions)
  min_accuracy: float = 0.9  # Evaluator blessing threshold
  max_accuracy_drop: float = 0.01  # and at most this far below the serving (last blessed) model
  min_class_recall: float = 0.0  # and every class's eval recall at least this (0: not checked)
  allow_missed_classes: bool = False  # bless a model that never predicts some eval class
  # No model is blessed on fewer eval examples than this (0: not checked): below 30, even a
  # perfect score does not show an error rate under 0.1 (the rule of three: 0 errors in n leave
  # 3 / n as the 95 % upper bound), i.e. accuracy 0.9, min_accuracy's default.
  min_eval_examples: int = 30
  # Classifiers: nor on fewer eval examples of any class of the model (0: not checked); 5, as
  # class_coverage.ENOUGH_EXAMPLES: fewer tell nothing of a class's recall.
  min_eval_class_examples: int = 5
  # Regression, lower is better (components/blessing_evaluator/eval_config.build_regression):
  min_improvement: float = 0.1  # eval MAE at least this share below the mean predictor's
  max_mae: Optional[float] = None  # and at most this (None: not checked)
  max_rmse: Optional[float] = None  # and eval RMSE at most this (None: not checked)
  # and RMSE at most this share above the serving model's: the classifier's 0.01 accuracy drop at
  # accuracy 0.9 is a 10 % rise of its error rate, and a retrain of the same model with another
  # seed moved RMSE by up to 5.5 % (docs/design/evaluation.md), which must not refuse it
  max_error_increase: float = 0.1
  slice_features: List[str] = dataclasses.field(default_factory=list)  # tabular: metrics per value
  max_damaged_percent: float = 1.0  # ShardCheck, the Trainer: stop above this share of lost records
  enable_cache: bool = True
  beam_runner: str = DIRECT_RUNNER  # local runs: or Dataflow/Flink/Spark
  beam_direct_running_mode: str = BEAM_AUTO  # or 'in_memory', 'multi_processing', 'multi_threading'
  beam_direct_num_workers: int = 0  # 0: one per core
  csv_direct_running_mode: str = ''  # the Arrow CSV ExampleGen's own ('': the pipeline's)
  statistics_in_process_below_bytes: int = 0  # StatisticsGen without Beam below this (0: never)
  beam_extra_args: List[str] = dataclasses.field(default_factory=list)  # passed to Beam as is
  flink_master: str = ''  # FlinkRunner: the cluster's REST address (host:port)
  spark_master: str = ''  # SparkRunner: the master's URL (spark://host:port)
  beam_parallelism: int = 0  # Flink: parallelism of every Beam job (0: the cluster's default)
  # FlinkRunner's or SparkRunner's arguments as resolved against the cluster (engines.flink_args, spark_args: job server,
  # SDK environment, parallelism); set by the command line, which checks the cluster answers.
  beam_engine_args: List[str] = dataclasses.field(default_factory=list)
  data_rev: str = ''  # --data-rev: the git revision of a DVC repository data was staged from
  data_source: str = ''  # with data_rev: --data as given (data is its staged copy)
  infer_data: str = ''  # unlabeled data (CSV / TFRecords of data_kind) the blessed model scores
  infer_pattern: str = '*'  # files under infer_data (a file: its name)
  cloud: Optional[CloudConfig] = None  # set when compiling for Kubeflow / Vertex AI

  def __post_init__(self):
    self.pipeline_root = self.pipeline_root or os.path.join(self.output, 'pipeline_root')
    self.local_dir = self.local_dir or self.output
    label_key = text_record.LABEL_KEY if self.data_kind == TEXT else self.label
    self.trainer = dataclasses.replace(
      self.trainer,
      data_kind=trainer_kind(self.data_kind),
      label_key=label_key,
      max_damaged_percent=self.max_damaged_percent,
      min_eval_class_examples=self.min_eval_class_examples,
    )

  def read_patterns(self, unlabeled: bool = False) -> Tuple[str, ...]:
    """Globs under `data` (unlabeled: `infer_data`) of the files its ExampleGen reads, every
    span and version; () for images (the ExampleGen lists the whole tree)."""
    if self.data_kind == IMAGES:
      return ()
    patterns = [self.infer_pattern] if unlabeled else [self.data_pattern]
    patterns += [] if unlabeled else [pattern for _, pattern in self.data_splits]
    return tuple(p.replace('{SPAN}', '*').replace('{VERSION}', '*') for p in patterns)

  @property
  def input_files(self) -> Dict[str, str]:
    """{field: path} of the options besides the data that name a file the run reads: the curated
    schema, a weights file, a module file and the .py files beside it (TFX's user code). Their
    content enters the nothing-changed state (cli/unchanged.py) and the cache key of the
    component that reads them (pipeline.py); the model file's text is in model_source itself."""
    named = {
      'schema': self.schema or '',
      'weights': '' if self.trainer.weights in WEIGHTS_NOT_A_FILE else self.trainer.weights,
    }
    module = self.trainer.module_file
    if module and not is_remote(module) and os.path.isfile(module):
      folder = os.path.dirname(module)
      beside = sorted(name for name in os.listdir(folder) if name.endswith('.py'))
      named.update({f'module_file:{name}': os.path.join(folder, name) for name in beside})
    return {field: path for field, path in named.items() if path}

  @property
  def metadata_path(self) -> str:
    return os.path.join(self.local_dir, METADATA_FILE)

  @property
  def uses_s3(self) -> bool:
    return any(path.startswith('s3://') for path in (self.data, self.output))

  @property
  def serving_dir(self) -> str:
    return os.path.join(self.output, 'serving')

  @property
  def direct_beam(self) -> bool:
    """Beam components run on the DirectRunner (locally or in the step's container)."""
    dataflow = self.cloud is not None and self.cloud.beam_runner == DATAFLOW_RUNNER
    return self.beam_runner == DIRECT_RUNNER and not dataflow

  @property
  def beam_pipeline_args(self) -> List[str]:
    if self.cloud and self.cloud.beam_runner == DATAFLOW_RUNNER:
      return self.cloud.dataflow_args + self.beam_extra_args
    if self.beam_engine_args:
      return self.beam_engine_args + self.s3_beam_args + self.beam_extra_args
    if self.beam_runner != DIRECT_RUNNER:
      return [f'--runner={self.beam_runner}'] + self.s3_beam_args + self.beam_extra_args
    # Without a dependency flag TFX builds an sdist of itself for Beam workers before every
    # Beam component (~1.3 s each); the DirectRunner runs this very environment, so we name
    # the local environment instead and skip that build.
    mode = direct_running_mode(self.beam_direct_running_mode, 0, 0)  # 'auto' left: processes
    local = [
      f'--direct_running_mode={mode}',
      f'--direct_num_workers={direct_num_workers(mode, self.beam_direct_num_workers)}',
      LOCAL_ENVIRONMENT,
    ]
    return local + self.s3_beam_args + self.beam_extra_args

  @property
  def s3_beam_args(self) -> List[str]:
    if not self.uses_s3:
      return []
    from utils import object_storage

    return object_storage.beam_args()


def is_remote(path: str) -> bool:
  """gs://, s3://: read and written through tf.io.gfile and Beam's file systems, not os."""
  return path.startswith(REMOTE_PREFIXES)
