"""The compiled KFP v2 spec runs: every task's own container command, in order, on this machine."""

import glob
import json
import os
import sys

import pytest

from cli import main as cli_main
from contracts import artifacts
from kubeflow import local_launcher
from tests.conftest import SMALL_EVAL, write_digits_subset


@pytest.fixture(scope='module')
def compiled_local(tmp_path_factory):
  """300 digits and a spec compiled against them with a local pipeline root."""
  folder = tmp_path_factory.mktemp('kfp')
  data = write_digits_subset(str(folder / 'digits'), per_class=30)
  template = folder / 'pipeline.json'
  assert (
    cli_main.main(
      [
        'compile',
        '--pipeline-root',
        str(folder / 'root'),
        '--data',
        data,
        '--schema',
        'schema/digits/schema.pbtxt',
        '--out',
        str(template),
        '--train-steps',
        '200',
        *SMALL_EVAL,  # 300 images: a few eval images of a class
        # Beam in one process here (worker processes cost ~6 s per Beam task);
        # the later flag wins over the compiled default.
        '--beam-arg=--direct_running_mode=in_memory',
      ]
    )
    == 0
  )
  return folder, template


def test_task_order_puts_producers_first(compiled_local):
  _, template = compiled_local
  tasks = json.loads(template.read_text())['pipelineSpec']['root']['dag']['tasks']
  order = local_launcher.task_order(tasks)
  assert sorted(order) == sorted(tasks)
  for name, task in tasks.items():
    for upstream in task.get('dependentTasks', []):
      assert order.index(upstream) < order.index(name)
  assert order.index('AnomalyGate') < order.index('Trainer') < order.index('Pusher')


def test_executor_input_carries_parameters_upstream_artifacts_and_output_uris(compiled_local):
  _, template = compiled_local
  spec = json.loads(template.read_text())['pipelineSpec']
  examples = {
    'name': 'r/ImageExampleGen/examples',
    'uri': '/root/r/ImageExampleGen/examples',
    'type': {'instanceSchema': 'title: tfx.Examples\n'},
    'metadata': {'split_names': '["train", "eval"]'},
  }
  schema = {'name': 'r/ImportSchemaGen/schema', 'uri': '/s', 'type': {'schemaTitle': 'x'}}
  produced = {'ImageExampleGen': {'examples': examples}, 'ImportSchemaGen': {'schema': schema}}
  built = local_launcher.executor_input(
    'Trainer',
    spec['root']['dag']['tasks']['Trainer'],
    spec['components']['Trainer'],
    produced,
    '/root/r/Trainer',
    'r',
    {'train_steps': 7, 'learning_rate': 0.5},
  )
  assert built['inputs']['artifacts']['examples']['artifacts'] == [examples]
  values = built['inputs']['parameterValues']  # pipeline spec 2.1: plain values
  assert values['run_fn'] == 'trainer.task.run_fn'
  assert values['train_steps'] == 7 and values['learning_rate'] == 0.5  # pipeline parameters
  model = built['outputs']['artifacts']['model']['artifacts'][0]
  assert model['uri'] == '/root/r/Trainer/model' and 'tfx.Model' in model['type']['instanceSchema']
  assert built['outputs']['outputFile'] == '/root/r/Trainer/executor_output.json'


@pytest.mark.slow
def test_compiled_pipeline_runs_to_a_pushed_model_with_parameters_set(compiled_local, capsys):
  folder, template = compiled_local
  assert (
    local_launcher.main(
      ['--template', str(template), '--param', 'train_steps=150', '--param', 'min_accuracy=0.5']
    )
    == 0
  )
  out = capsys.readouterr().out
  assert 'min_accuracy=0.5, train_steps=150' in out and '[12/12] Pusher done' in out
  assert 'serving_model-model-resolver resolved nothing' in out  # no earlier blessed model
  (run,) = glob.glob(str(folder / 'root' / 'run-*'))

  def reported(task, key):
    with open(os.path.join(run, task, 'executor_output.json')) as f:
      return json.load(f)['artifacts'][key]['artifacts'][0]

  examples = reported('ImageExampleGen', 'examples')
  counts = [
    len(list(glob.glob(os.path.join(examples['uri'], f'Split-{s}', 'data-*'))))
    for s in ('train', 'eval')
  ]
  assert counts == [1, 1] and json.loads(examples['metadata']['split_names']) == ['train', 'eval']
  with open(os.path.join(reported('Trainer', 'model_run')['uri'], artifacts.TRAINING_FILE)) as f:
    assert json.load(f)['train_steps'] == 150  # compiled: 200
  assert reported('Evaluator', 'blessing')['metadata']['blessed'] == 1
  assert reported('ServingCheck', 'infra_blessing')['metadata']['blessed'] == 1  # it serves
  pushed = reported('Pusher', 'pushed_model')['metadata']
  assert pushed['pushed'] == 1
  assert pushed['pushed_destination'].startswith(str(folder / 'root' / 'serving'))
  assert os.path.isfile(os.path.join(pushed['pushed_destination'], 'saved_model.pb'))


@pytest.mark.slow
def test_a_failing_task_is_one_line_naming_its_log(tmp_path, capsys):
  template = tmp_path / 'pipeline.json'
  assert (
    cli_main.main(
      [
        'compile',
        '--pipeline-root',
        str(tmp_path / 'root'),
        '--data',
        str(tmp_path / 'missing'),
        '--out',
        str(template),
      ]
    )
    == 0
  )
  capsys.readouterr()
  assert local_launcher.main(['--template', str(template)]) == 2
  err = capsys.readouterr().err
  assert err.startswith('error: ImageExampleGen ') and err.count('\n') == 1
  assert os.path.isfile(err.split('(log: ')[1].rstrip(')\n'))


def test_remote_pipeline_root_is_refused(capsys):
  assert local_launcher.main([]) == 2  # the committed example's root is gs://
  assert 'pass a local --pipeline-root' in capsys.readouterr().err


def test_a_parameter_out_of_range_is_refused_before_any_task(tmp_path, capsys):
  args = ['--pipeline-root', str(tmp_path), '--param', 'min_accuracy=2']
  assert local_launcher.main(args) == 2
  assert capsys.readouterr().err == 'error: --param min_accuracy=2: must be between 0 and 1\n'
  assert os.listdir(tmp_path) == []


def _produced(root, run, blessed):
  folder = root / run
  folder.mkdir(parents=True)
  model = {'uri': f'/{run}/model', 'type': {'instanceSchema': 'title: tfx.Model\ntype: object\n'}}
  blessing = {
    'uri': f'/{run}/blessing',
    'type': {'instanceSchema': 'title: tfx.ModelBlessing\ntype: object\n'},
    'metadata': {'blessed': blessed},
  }
  (folder / local_launcher.PRODUCED_FILE).write_text(
    json.dumps({'Trainer': {'model': model}, 'Evaluator': {'blessing': blessing}})
  )
  return model, blessing


def test_resolvers_answer_with_the_newest_earlier_blessed_model(tmp_path):
  queries = {
    'model_blessing': {'filter': 'schema_title="tfx.ModelBlessing" AND state=LIVE'},
    'model': {'filter': 'schema_title="tfx.Model" AND state=LIVE'},
  }
  resolver = {'outputArtifactQueries': queries}
  assert local_launcher.resolve('r', resolver, str(tmp_path), 'run-3') == {}  # a first run
  model, blessing = _produced(tmp_path, 'run-1', blessed=1)
  _produced(tmp_path, 'run-2', blessed=0)  # newer, not blessed
  _produced(tmp_path, 'run-4', blessed=1)  # later than the run asking
  assert local_launcher.resolve('r', resolver, str(tmp_path), 'run-3') == {
    'model_blessing': blessing,
    'model': model,
  }
  with pytest.raises(local_launcher.LaunchError, match='latest-blessed-model'):
    local_launcher.resolve(
      'r', {'outputArtifactQueries': {'x': {'filter': 'schema_title="tfx.Examples"'}}}, '', 'r'
    )


def test_a_task_container_mounts_the_existing_paths_its_parameters_name(tmp_path):
  root, data = tmp_path / 'root', tmp_path / 'data'
  root.mkdir(), data.mkdir()
  (data / 'rows.csv').write_text('a\n')
  inputs = {
    'parameterValues': {
      'input_base': str(data),
      'custom_config': json.dumps({'weights': str(data / 'rows.csv'), 'out': str(root / 'x')}),
      'missing': str(tmp_path / 'nothing-here'),
      'module': 'trainer.task.run_fn',
    },
    'artifacts': {'examples': {'artifacts': [{'uri': str(root / 'run' / 'examples')}]}},
  }
  assert local_launcher.named_paths(inputs, str(root)) == [str(data), str(data / 'rows.csv')]
  command = local_launcher.container_command(
    'img:tag', 'r-task', str(root / 'steps.json'), str(root), [str(data)]
  )
  assert command[:3] == ['docker', 'run', '--rm'] and '--network=none' in command
  assert f'--volume={root}:{root}' in command and f'--volume={data}:{data}:ro' in command
  assert f'--label={local_launcher.CONTAINER_LABEL}' in command
  assert command[command.index('img:tag') :] == [
    'img:tag',
    '-m',
    'kubeflow.task_steps',
    str(root / 'steps.json'),
  ]


def test_task_steps_run_in_order_and_stop_at_the_first_failure(tmp_path):
  from kubeflow import task_steps

  marker = tmp_path / 'ran'
  steps = tmp_path / 'steps.json'
  touch = [sys.executable, '-c', f'open({str(marker)!r}, "a").write("x")']
  fail = [sys.executable, '-c', 'raise SystemExit(3)']
  steps.write_text(json.dumps([touch, fail, touch]))
  assert task_steps.main([str(steps)]) == 3
  assert marker.read_text() == 'x'  # the third step did not run
