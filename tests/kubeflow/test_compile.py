"""`pipeline.py compile`: the local pipeline compiled offline for Kubeflow Pipelines v2 / Vertex."""

import json
import os
import re

import pytest

from cli import main as cli_main
from kubeflow import compiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPONENTS = {
  'ImageExampleGen',
  'StatisticsGen',
  'SchemaGen',
  'ExampleValidator',
  'AnomalyGate',
  'ShardCheck',
  'Trainer',
  'Evaluator',
  'ServingCheck',
  'Pusher',
  # The serving_model Resolver (LatestBlessedModelStrategy) compiles to two resolver tasks.
  'serving_model-model-blessing-resolver',
  'serving_model-model-resolver',
}
BEAM_STEPS = ('ImageExampleGen', 'StatisticsGen', 'SchemaGen', 'ExampleValidator', 'Evaluator')
IMAGE = 'example.org/tfrp:1'


def _compile(tmp_path, *extra, fmt='json'):
  output = tmp_path / f'pipeline.{fmt}'
  code = cli_main.main(
    [
      'compile',
      '--pipeline-root',
      str(tmp_path / 'root'),
      '--data',
      'gs://bucket/images',
      '--image',
      IMAGE,
      '--out',
      str(output),
      '--format',
      fmt,
      *extra,
    ]
  )
  assert code == 0
  return output


def _executor(spec, task):
  return spec['deploymentSpec']['executors'][f'{task}_executor']['container']


def _tasks(path) -> dict:
  """The tasks, by name, of the job compiled to `path`."""
  return json.loads(path.read_text())['pipelineSpec']['root']['dag']['tasks']


def _constant(task: dict, name: str):
  """A task's constant parameter, decoded from its JSON."""
  return json.loads(task['inputs']['parameters'][name]['runtimeValue']['constant'])


def test_compiled_job_has_every_component_on_the_requested_image(tmp_path, capsys):
  output = _compile(tmp_path, '--no-cache')
  assert str(output) in capsys.readouterr().out
  job = json.loads(output.read_text())
  spec = job['pipelineSpec']
  assert job['runtimeConfig']['gcsOutputDirectory'] == str(tmp_path / 'root')
  assert not (tmp_path / 'root').exists()  # compiling writes nothing to the pipeline root
  tasks = spec['root']['dag']['tasks']
  assert set(tasks) == COMPONENTS
  executors = spec['deploymentSpec']['executors'].values()
  assert {e['container']['image'] for e in executors if 'container' in e} == {IMAGE}
  assert sum('resolver' in e for e in executors) == 2  # the serving model's two queries
  assert not any(t.get('cachingOptions', {}).get('enableCache') for t in tasks.values())
  assert 'Trainer' in tasks['Evaluator'].get('dependentTasks', [])
  assert 'Evaluator' in tasks['ServingCheck'].get('dependentTasks', [])
  assert 'ServingCheck' in tasks['Pusher'].get('dependentTasks', [])
  assert {'AnomalyGate', 'ShardCheck'} <= set(tasks['Trainer'].get('dependentTasks', []))
  parameters = tasks['Trainer']['inputs']['parameters']
  assert parameters['run_fn']['runtimeValue']['constant'] == 'trainer.task.run_fn'
  # Pipeline parameters (pipeline spec 2.1), defaulting to the compiled values.
  assert parameters['train_steps'] == {'componentInputParameter': 'train_steps'}
  assert spec['root']['inputDefinitions']['parameters']['train_steps'] == {
    'parameterType': 'NUMBER_INTEGER',
    'defaultValue': 600,
  }
  assert not list(tmp_path.glob('**/*.whl'))  # module path, no module_file wheel
  # ImageExampleGen is a FileBasedExampleGen: KFP v2 runs TFX's driver (fingerprint, span) first.
  driver = _executor(spec, 'ImageExampleGen')['lifecycle']['preCacheCheck']
  assert driver['command'][-1] == 'tfx.orchestration.kubeflow.v2.file_based_example_gen.driver'
  # Default: Beam runs inside each step, the Trainer in its own step.
  assert not any('DataflowRunner' in a for a in _executor(spec, 'StatisticsGen')['args'])
  assert 'components.recording_trainer.executor.Executor' in _executor(spec, 'Trainer')['args']


def test_the_kubernetes_serving_check_is_tfx_infra_validator_with_tensorflow_serving(tmp_path):
  spec = json.loads(_compile(tmp_path, '--serving-check', 'kubernetes').read_text())
  spec = spec['pipelineSpec']
  assert (
    'tfx.components.infra_validator.executor.Executor' in _executor(spec, 'ServingCheck')['args']
  )
  check = spec['root']['dag']['tasks']['ServingCheck']
  serving_spec = _constant(check, 'serving_spec')
  assert serving_spec == {'tensorflow_serving': {'tags': ['2.16.1']}, 'kubernetes': {}}
  request_spec = _constant(check, 'request_spec')
  assert request_spec['tensorflow_serving']['signature_names'] == ['serving_default']
  assert request_spec['split_name'] == 'eval'
  inputs = spec['root']['dag']['tasks']['Pusher']['inputs']['artifacts']
  assert inputs['infra_blessing']['taskOutputArtifact'] == {
    'producerTask': 'ServingCheck',
    'outputArtifactKey': 'blessing',
  }


def test_dataflow_vertex_training_labels_and_service_account(tmp_path):
  output = _compile(
    tmp_path,
    '--beam-runner',
    'DataflowRunner',
    '--project',
    'proj',
    '--region',
    'europe-west4',
    '--temp-location',
    'gs://bucket/tmp',
    '--max-workers',
    '8',
    '--vertex-training',
    '--accelerator-type',
    'NVIDIA_TESLA_T4',
    '--accelerator-count',
    '2',
    '--job-label',
    'team=vision',
    '--service-account',
    'runner@proj.iam.gserviceaccount.com',
    '--pipeline-name',
    'digits-prod',
  )
  job = json.loads(output.read_text())
  spec = job['pipelineSpec']
  assert job['labels']['team'] == 'vision' and job['labels']['tfx_runner'] == 'kubeflow_v2'
  assert job['serviceAccount'] == 'runner@proj.iam.gserviceaccount.com'
  assert spec['pipelineInfo']['name'] == 'digits-prod'
  for task in BEAM_STEPS:
    args = _executor(spec, task)['args']
    for flag in (
      '--runner=DataflowRunner',
      '--project=proj',
      '--region=europe-west4',
      '--temp_location=gs://bucket/tmp',
      '--max_num_workers=8',
      f'--sdk_container_image={IMAGE}',
    ):
      assert flag in args, (task, flag)
  trainer = _executor(spec, 'Trainer')
  assert (
    'components.recording_trainer.vertex_executor.Executor'
    in trainer['args']  # TFX's, after the fold
  )
  custom = json.loads(
    spec['root']['dag']['tasks']['Trainer']['inputs']['parameters']['custom_config'][
      'runtimeValue'
    ]['constant']
  )
  assert custom['ai_platform_enable_vertex'] is True
  assert custom['ai_platform_vertex_region'] == 'europe-west4'
  pool = custom['ai_platform_training_args']['worker_pool_specs'][0]
  assert pool['machine_spec'] == {
    'machine_type': 'n1-standard-8',
    'accelerator_type': 'NVIDIA_TESLA_T4',
    'accelerator_count': 2,
  }
  assert pool['container_spec']['image_uri'] == IMAGE
  assert custom['batch_size'] == 64  # the run_fn's own settings travel alongside


def test_yaml_loads_with_the_kfp_sdk(tmp_path):
  from kfp import components

  output = _compile(tmp_path, fmt='yaml')
  assert compiler.is_compiled(str(output))  # compiled again into it: replaced without --overwrite
  loaded = components.load_component_from_file(str(output))
  assert loaded.name == 'tfrecord-pipeline'
  assert set(loaded.pipeline_spec.root.dag.tasks) == COMPONENTS
  assert (
    loaded.pipeline_spec.deployment_spec['executors']['Trainer_executor']['container']['image']
    == IMAGE
  )


def test_json_is_accepted_by_aiplatform_pipeline_job_offline(tmp_path):
  from google.auth.credentials import AnonymousCredentials
  from google.cloud import aiplatform

  output = _compile(tmp_path, '--job-label', 'team=vision')
  assert compiler.is_compiled(str(output))
  (tmp_path / 'other.json').write_text('{"displayName": "a hand-written job"}')
  assert not compiler.is_compiled(str(tmp_path / 'other.json'))
  job = aiplatform.PipelineJob(
    display_name='offline',
    template_path=str(output),
    project='proj',
    location='us-central1',
    credentials=AnonymousCredentials(),
    enable_caching=False,
  )
  resource = job._gca_resource
  assert resource.runtime_config.gcs_output_directory == str(tmp_path / 'root')
  assert set(resource.pipeline_spec['root']['dag']['tasks']) == COMPONENTS
  assert not any(
    t['cachingOptions'].get('enableCache')
    for t in resource.pipeline_spec['root']['dag']['tasks'].values()
  )


@pytest.mark.parametrize(
  'extra,message',
  [
    (['--beam-runner', 'DataflowRunner'], 'Dataflow needs --project and --region'),
    (
      ['--beam-runner', 'DataflowRunner', '--project', 'p', '--region', 'r'],
      'Dataflow needs --temp-location',
    ),
    (['--vertex-training'], 'Vertex AI Training needs --project and --region'),
    (['--accelerator-type', 'NVIDIA_TESLA_T4'], 'need --vertex-training'),
    (['--job-label', 'Team=x'], "--label 'Team=x'"),
    (['--job-label', 'novalue'], 'want KEY=VALUE'),
    (['--data', 'gs://b/rows.csv', '--data-kind', 'images'], 'csv data, but --data-kind is images'),
  ],
)
def test_bad_options_exit_2_with_one_line(tmp_path, capsys, extra, message):
  output = tmp_path / 'p.json'
  code = cli_main.main(
    ['compile', '--pipeline-root', 'gs://b/r', '--data', 'gs://b/d', '--out', str(output), *extra]
  )
  err = capsys.readouterr().err
  assert code == 2 and err.count('\n') == 1 and err.startswith('error: ') and message in err
  assert not output.exists()


# A file's digest inside a code fingerprint, in the compiled JSON (escaped once or twice).
_DIGEST = re.compile(r'(\.(?:py|lock|pbtxt)\\*":\\*")[0-9a-f]{16}')


def test_committed_example_is_what_compile_produces_today(tmp_path):
  """Code fingerprints aside: they change with every edit (kubeflow/README.md)."""
  with open(os.path.join(ROOT, 'kubeflow', 'example.args')) as f:
    args = f.read().split()
  committed = args[args.index('--out') + 1]
  args[args.index('--out') + 1] = str(tmp_path / 'pipeline.json')
  assert cli_main.main(['compile', *args]) == 0
  with open(os.path.join(ROOT, committed)) as f:
    committed_text = f.read()
  fresh_text = (tmp_path / 'pipeline.json').read_text()
  assert _DIGEST.search(fresh_text), 'the compiled spec carries no code fingerprint'
  assert json.loads(_DIGEST.sub(r'\1', committed_text)) == json.loads(
    _DIGEST.sub(r'\1', fresh_text)
  ), 'kubeflow/pipeline.json is stale: run `make compile`'


def test_compiled_steps_carry_the_code_fingerprints_of_a_local_run(tmp_path):
  """Kubeflow's and Vertex's caches key on the same fingerprints as a local run."""
  spec = tmp_path / 'pipeline.json'
  assert (
    cli_main.main(
      [
        'compile',
        '--pipeline-root',
        'gs://b/root',
        '--data',
        'gs://b/images',
        '--schema',
        'schema/digits/schema.pbtxt',
        '--out',
        str(spec),
      ]
    )
    == 0
  )
  tasks = _tasks(spec)
  for task in ('ImageExampleGen', 'ImportSchemaGen', 'AnomalyGate', 'ShardCheck'):
    assert 'requirements.lock' in _constant(tasks[task], 'code_fingerprint')
  custom_config = _constant(tasks['Trainer'], 'custom_config')
  assert 'trainer/model.py' in json.loads(custom_config['code_fingerprint'])


def test_data_versions_compile_with_a_pinned_span_and_the_drift_check(tmp_path):
  output = _compile(
    tmp_path,
    *('--data-kind', 'csv', '--data-pattern', 'span-{SPAN}/*.csv', '--span', '2'),
    *('--task', 'classification'),
  )
  tasks = _tasks(output)
  assert {'CsvExampleGen', 'previous_statistics', 'DriftCheck'} <= set(tasks)
  example_gen = tasks['CsvExampleGen']
  assert _constant(example_gen, 'input_config')['splits'][0]['pattern'] == 'span-{SPAN}/*.csv'
  assert _constant(example_gen, 'range_config')['static_range'] == {
    'start_span_number': 2,
    'end_span_number': 2,
  }
  assert 'DriftCheck' in tasks['Trainer'].get('dependentTasks', [])


def test_a_data_file_compiles_to_its_folder_and_name_and_its_kind(tmp_path):
  output = _compile(
    tmp_path, '--data', 'gs://bucket/tables/rows.csv', '--label', 'tips', '--task', 'regression'
  )
  job = json.loads(output.read_text())
  tasks = job['pipelineSpec']['root']['dag']['tasks']
  assert 'CsvExampleGen' in tasks and 'ImageExampleGen' not in tasks  # by the name
  parameters = tasks['CsvExampleGen']['inputs']['parameters']
  assert parameters['input_base'] == {'componentInputParameter': 'data'}
  assert job['runtimeConfig']['parameterValues']['data'] == 'gs://bucket/tables'
  assert _constant(tasks['CsvExampleGen'], 'input_config')['splits'][0]['pattern'] == 'rows.csv'


def test_infer_data_compiles_to_the_bulk_inferrer_on_the_blessed_model(tmp_path):
  output = _compile(
    tmp_path,
    *('--data-kind', 'csv', '--label', 'tips', '--task', 'classification'),
    *('--infer-data', 'gs://bucket/new/rows.csv'),
  )
  tasks = _tasks(output)
  assert {'InferExampleGen', 'BulkInferrer', 'PredictionCsv'} <= set(tasks)
  parameters = tasks['InferExampleGen']['inputs']['parameters']
  assert parameters['input_base']['runtimeValue']['constant'] == 'gs://bucket/new'
  assert _constant(tasks['InferExampleGen'], 'input_config')['splits'] == [
    {'name': 'infer', 'pattern': 'rows.csv'}
  ]
  inferrer = tasks['BulkInferrer']['inputs']
  assert inferrer['artifacts']['model']['taskOutputArtifact']['producerTask'] == 'Trainer'
  assert inferrer['artifacts']['model_blessing']['taskOutputArtifact']['producerTask'] == (
    'Evaluator'
  )
  model_spec = _constant(tasks['BulkInferrer'], 'model_spec')
  assert model_spec['model_signature_name'] == ['bulk_inference']  # contracts/serving.py
  assert 'BulkInferrer' in tasks['PredictionCsv'].get('dependentTasks', [])
  # A folder of images: every image below it (any depth), unlabeled, in the same one split.
  tasks = _tasks(_compile(tmp_path, '--infer-data', 'gs://bucket/photos/'))
  parameters = tasks['InferExampleGen']['inputs']['parameters']
  assert parameters['input_base']['runtimeValue']['constant'] == 'gs://bucket/photos'
  assert parameters['unlabeled_split']['runtimeValue']['constant'] == 'infer'
  assert _constant(tasks['InferExampleGen'], 'input_config')['splits'] == [
    {'name': 'images', 'pattern': '*'}
  ]
  assert tasks['ImageExampleGen']['inputs']['parameters']['unlabeled_split'] == {
    'runtimeValue': {'constant': ''}
  }


def _assert_one_line_error(tmp_path, capsys, message: str, *flags: str) -> None:
  """`compile` with `flags` refuses in one line naming `message`, exit 2."""
  code = cli_main.main(
    ['compile', '--pipeline-root', 'gs://b/r', '--data', 'gs://b/d']
    + ['--out', str(tmp_path / 'p.json'), *flags]
  )
  err = capsys.readouterr().err
  assert code == 2 and err.count('\n') == 1 and err.startswith('error: ') and message in err


@pytest.mark.parametrize(
  'extra,message',
  [
    (
      ['--data-kind', 'text', '--text-column', 'review', '--infer-data', 'gs://b/new'],
      'only images, CSV and TFRecord (tf.Example) data are scored',
    ),
    (
      ['--data-kind', 'csv', '--infer-data', 'gs://b/new.tfrecord'],
      'tfrecords data, but --data-kind is csv',
    ),
  ],
)
def test_bad_infer_data_is_one_line(tmp_path, capsys, extra, message):
  _assert_one_line_error(tmp_path, capsys, message, *extra)


def test_tuning_compiles_to_tfx_vertex_tuner_with_parallel_trials_feeding_the_trainer(tmp_path):
  flags = ['--tune-trials', '6', '--tune-steps', '50', '--vertex-tuning']
  flags += ['--tune-parallel-trials', '3', '--project', 'p', '--region', 'europe-west4']
  spec = json.loads(_compile(tmp_path, *flags, '--model', 'resnet50').read_text())['pipelineSpec']
  tuner = _executor(spec, 'Tuner')
  assert tuner['args'][tuner['args'].index('--executor_class_path') + 1] == (
    'tfx.extensions.google_cloud_ai_platform.tuner.executor.Executor'
  )
  parameters = spec['root']['dag']['tasks']['Tuner']['inputs']['parameters']
  constant = lambda name: parameters[name]['runtimeValue']['constant']  # noqa: E731
  assert constant('tuner_fn') == 'trainer.tuning.tuner_fn'
  assert json.loads(constant('tune_args')) == {'num_parallel_trials': 3}
  assert json.loads(constant('train_args')) == {'num_steps': 50}
  custom_config = json.loads(constant('custom_config'))
  assert custom_config['max_trials'] == 6 and custom_config['model'] == 'resnet50'
  assert custom_config['ai_platform_enable_vertex'] is True
  assert custom_config['ai_platform_vertex_region'] == 'europe-west4'
  tuning = custom_config['ai_platform_tuning_args']
  assert tuning['project'] == 'p'
  assert tuning['job_spec']['worker_pool_specs'][0]['container_spec']['image_uri'] == IMAGE
  trainer_inputs = spec['root']['dag']['tasks']['Trainer']['inputs']['artifacts']
  assert trainer_inputs['hyperparameters']['taskOutputArtifact'] == {
    'producerTask': 'Tuner',
    'outputArtifactKey': 'best_hyperparameters',
  }


@pytest.mark.parametrize(
  'flags,message',
  [
    (['--vertex-tuning', '--project', 'p', '--region', 'r'], '--vertex-tuning needs --tune-trials'),
    (['--tune-trials', '2', '--tune-parallel-trials', '2'], 'above 1 only with --vertex-tuning'),
    (
      ['--data-kind', 'csv', '--task', 'regression', '--model', 'resnet50'],
      'a model for image data; this data is tabular',
    ),
  ],
)
def test_bad_tuning_and_model_flags_are_one_line(tmp_path, capsys, flags, message):
  _assert_one_line_error(tmp_path, capsys, message, *flags)


@pytest.mark.parametrize('kind', ['csv', 'tfrecords'])
def test_a_table_compile_cannot_read_needs_its_task_named(tmp_path, capsys, kind):
  """The Evaluator is built for one task: `auto` left to the Trainer could train a regressor
  that a classes-judging Evaluator refuses."""
  _assert_one_line_error(
    tmp_path,
    capsys,
    '--task auto: --data gs://b/d is not read here, and the Evaluator is built for one task; '
    'give --task classification or --task regression',
    *('--data-kind', kind, '--label', 'y'),
  )


def test_flink_runner_arguments_resolved_once_travel_into_every_beam_step(tmp_path, monkeypatch):
  """compile resolves FlinkRunner's arguments as run does (engines.flink_args, stubbed here: the
  real cluster is tests/engines/) and every Beam step carries them; the local launcher then
  runs the spec against that cluster (docs/operations.md: Flink)."""
  from engines import flink_args

  resolved = ['--runner=FlinkRunner', '--flink_master=fl:8081', '--job_endpoint=fl:8099']
  asked = []
  monkeypatch.setattr(flink_args, 'flink_args', lambda *args: asked.append(args) or list(resolved))
  spec = json.loads(
    _compile(
      tmp_path,
      '--beam-runner',
      'FlinkRunner',
      '--flink-master',
      'fl:8081',
      '--beam-parallelism',
      '2',
      '--beam-arg=--max_bundle_size=50',
    ).read_text()
  )['pipelineSpec']
  assert asked == [('fl:8081', 2)]
  for task in BEAM_STEPS:
    args = _executor(spec, task)['args']
    for flag in resolved + ['--max_bundle_size=50']:
      assert flag in args, (task, flag)
    assert not any('direct_running_mode' in arg for arg in args), task


def test_module_file_compiles_transform_feeding_the_trainer(tmp_path):
  """compile takes --module-file: TFX's Transform after the gates, its outputs the Trainer's."""
  from tests.support.tfx_data import TAXI_MODULE

  flags = ['--data', 'gs://bucket/taxi', '--data-kind', 'csv', '--label', 'tips']
  tasks = _tasks(_compile(tmp_path, *flags, '--module-file', TAXI_MODULE))
  transform = tasks['Transform']
  parameters = transform['inputs']['parameters']
  assert parameters['preprocessing_fn']['runtimeValue']['constant'] == (
    'trainer.module_file.preprocessing_fn'
  )
  assert _constant(transform, 'custom_config')['module_file'] == TAXI_MODULE
  assert 'AnomalyGate' in transform['dependentTasks']
  trainer = tasks['Trainer']
  assert trainer['inputs']['artifacts']['transform_graph']['taskOutputArtifact'] == {
    'outputArtifactKey': 'transform_graph',
    'producerTask': 'Transform',
  }
  assert trainer['inputs']['parameters']['run_fn']['runtimeValue']['constant'] == (
    'trainer.module_file.run_fn'
  )
  raw = trainer['inputs']['artifacts']['raw_examples']['taskOutputArtifact']  # leakage's
  assert raw['outputArtifactKey'] == 'examples' and raw['producerTask'] != 'Transform'
