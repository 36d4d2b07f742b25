"""The compiled pipeline with every task in its own container of the project's image, as KFP
runs it: one container per task, nothing but the pipeline root and the data mounted, and the
same records and figures as `pipeline.py run` on the same CSV: a regression pipeline (issue 58),
the diabetes data's disease progression, integers that compile decides are a number."""

import glob
import json
import os
import subprocess
import time
import types

import pytest
import tensorflow as tf

from cli import main as cli_main
import config as cfg
from contracts import evaluation as evaluation_names
from contracts import serving
from kubeflow import local_launcher
from metadata import artifact_reader
from tests.conftest import run_pipeline
from tests.support import runs
from tests.support.containers import project_image  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('containers')]
STEPS = '150'  # conftest.FAST's, so both runs train alike
SEEDED = ('--seed', '0')  # and from the same initial weights


def write_diabetes_csv(path: str) -> str:
  """scikit-learn's diabetes data (442 rows): ten columns and `progression`, whole numbers."""
  from sklearn.datasets import load_diabetes

  data = load_diabetes()
  rows = [','.join([*(f'{v:g}' for v in x), f'{y:g}']) for x, y in zip(data.data, data.target)]
  with open(path, 'w') as f:
    f.write(','.join([*data.feature_names, 'progression']) + '\n' + '\n'.join(rows) + '\n')
  return path


@pytest.fixture(scope='module')
def container_run(project_image, tmp_path_factory):  # noqa: F811
  """The spec compiled for the image on a CSV, run by the launcher with --image: (folder, the
  names of the containers started, the produced artifacts)."""
  folder = tmp_path_factory.mktemp('containers')
  (folder / 'data').mkdir()
  data = write_diabetes_csv(str(folder / 'data' / 'diabetes.csv'))
  root, spec = str(folder / 'root'), str(folder / 'spec.json')
  compiled = cli_main.main(
    [
      'compile', '--data', data, '--data-kind', 'csv', '--label', 'progression', *SEEDED,
      '--pipeline-root', root, '--image', project_image, '--out', spec,
      '--train-steps', STEPS, '--beam-arg=--direct_running_mode=in_memory',
    ]
  )  # fmt: skip
  assert compiled == 0
  since = int(time.time()) - 1  # docker events takes whole seconds
  code = local_launcher.main(
    ['--template', spec, '--pipeline-root', root, '--image', project_image]
  )
  assert code == 0
  events = subprocess.run(
    [
      'docker', 'events', '--since', str(since), '--until', str(int(time.time()) + 1),
      '--filter', 'event=start', '--filter', f'label={local_launcher.CONTAINER_LABEL}',
      '--format', '{{.Actor.Attributes.name}}',
    ],
    capture_output=True, text=True, check=True,
  )  # fmt: skip
  (run,) = glob.glob(os.path.join(root, 'run-*'))
  with open(os.path.join(run, local_launcher.PRODUCED_FILE)) as f:
    produced = json.load(f)
  started = [name for name in events.stdout.split() if name.startswith(os.path.basename(run))]
  return folder, started, produced, data


def records(examples_uri: str):
  """{split: sorted deterministic serializations of its examples}."""
  found = {}
  for split_folder in sorted(glob.glob(os.path.join(examples_uri, 'Split-*'))):
    files = sorted(glob.glob(os.path.join(split_folder, '*')))
    gzip = 'GZIP' if files[0].endswith('.gz') else ''
    serialized = []
    for record in tf.data.TFRecordDataset(files, compression_type=gzip):
      example = tf.train.Example.FromString(record.numpy())
      serialized.append(example.SerializeToString(deterministic=True))
    found[os.path.basename(split_folder)] = sorted(serialized)
  return found


def test_one_container_per_task_and_a_pushed_model(container_run):
  folder, started, produced, _ = container_run
  with open(folder / 'spec.json') as f:
    spec = json.load(f)['pipelineSpec']
  executors = spec['deploymentSpec']['executors']
  tasks = spec['root']['dag']['tasks']
  in_containers = {
    name
    for name, task in tasks.items()
    if 'container' in executors[spec['components'][task['componentRef']['name']]['executorLabel']]
  }
  assert len(started) == len(in_containers) >= 10
  assert sorted(started) == sorted(set(started))  # one each
  pushed = produced['Pusher']['pushed_model']['metadata']
  assert pushed['pushed'] == 1
  assert os.path.isfile(os.path.join(pushed['pushed_destination'], 'saved_model.pb'))
  assert pushed['pushed_destination'].startswith(str(folder / 'root'))


def test_the_task_containers_saw_only_the_pipeline_root_and_the_data(container_run):
  folder, _, _, data = container_run
  (run,) = glob.glob(str(folder / 'root' / 'run-*'))
  with open(glob.glob(os.path.join(run, 'logs', '*ExampleGen.log'))[0]) as f:
    command = f.readline()
  data_folder = os.path.dirname(data)  # compiled as the CSV's folder and its name
  assert f'--volume={folder / "root"}:{folder / "root"} ' in command
  assert f'--volume={data_folder}:{data_folder}:ro ' in command and '--network=none' in command
  assert command.count('--volume=') == 2


def test_records_and_figures_match_a_local_run(container_run, tmp_path):
  folder, _, produced, data = container_run
  with open(folder / 'spec.json') as f:
    assert '\\"task\\": \\"regression\\"' in f.read()  # decided by compile, in custom_config
  code, result = run_pipeline(data, str(tmp_path / 'out'), '--label', 'progression', *SEEDED)
  assert code == 0
  nodes = runs.latest_run(str(tmp_path / 'out'), cfg.PIPELINE_NAME)
  local_examples = artifact_reader.output(nodes, 'examples')
  local = records(local_examples.uri)
  in_containers = records(produced['CsvExampleGen']['examples']['uri'])
  assert sorted(local) == ['Split-eval', 'Split-train']
  assert in_containers == local
  figures = artifact_reader.regression_figures(
    types.SimpleNamespace(uri=produced['Evaluator']['evaluation']['uri'])
  )[evaluation_names.CANDIDATE]
  local_mae = result['regression'][evaluation_names.MAE_KEY]
  assert figures[evaluation_names.MAE_KEY] == pytest.approx(local_mae, rel=0.05)
  pushed = produced['Pusher']['pushed_model']['metadata']['pushed_destination']
  assert serving.task(pushed) == 'regression'


def test_a_module_file_s_spec_runs_one_container_per_task(project_image, tmp_path):  # noqa: F811
  """Issue 67: compiled with TFX's taxi module file (copied as it is), the spec runs through the
  launcher with --image: Transform and the Trainer load the file at its path (mounted read-only,
  as a parameter names it), the model is evaluated and pushed."""
  import shutil

  from tests.support.tfx_data import TAXI_CSV, TAXI_MODULE

  (tmp_path / 'data').mkdir()
  with open(TAXI_CSV) as f:
    rows = [line for _, line in zip(range(401), f)]
  data = tmp_path / 'data' / 'taxi.csv'
  data.write_text(''.join(rows))
  module = shutil.copy(TAXI_MODULE, tmp_path / 'taxi_utils_native_keras.py')
  root, spec = str(tmp_path / 'root'), str(tmp_path / 'spec.json')
  compiled = cli_main.main(
    [
      'compile', '--data', str(data), '--data-kind', 'csv', '--label', 'tips',
      '--module-file', str(module), '--pipeline-root', root, '--image', project_image,
      '--out', spec, '--train-steps', '20', '--eval-steps', '5', '--min-accuracy', '0',
      '--allow-missed-classes',  # 20 steps: a model that may predict one class only
      '--beam-arg=--direct_running_mode=in_memory',
    ]
  )  # fmt: skip
  assert compiled == 0
  code = local_launcher.main(
    ['--template', spec, '--pipeline-root', root, '--image', project_image]
  )
  assert code == 0
  (run,) = glob.glob(os.path.join(root, 'run-*'))
  with open(os.path.join(run, local_launcher.PRODUCED_FILE)) as f:
    produced = json.load(f)
  assert os.path.isdir(produced['Transform']['transform_graph']['uri'])
  with open(glob.glob(os.path.join(run, 'logs', '*Transform.log'))[0]) as f:
    assert f'--volume={module}:{module}:ro ' in f.readline()  # the module file, read-only
  pushed = produced['Pusher']['pushed_model']['metadata']
  assert pushed['pushed'] == 1
  assert os.path.isfile(os.path.join(pushed['pushed_destination'], 'saved_model.pb'))
