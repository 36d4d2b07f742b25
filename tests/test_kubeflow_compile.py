"""`pipeline.py compile`: the local pipeline compiled offline for Kubeflow Pipelines v2."""
import json

import pipeline

COMPONENTS = {'ImageExampleGen', 'StatisticsGen', 'SchemaGen', 'ExampleValidator', 'AnomalyGate',
              'Trainer', 'Evaluator', 'Pusher'}


def test_compiled_job_has_every_component_on_the_requested_image(tmp_path, capsys):
  output = tmp_path / 'pipeline.json'
  code = pipeline.main(['compile', '--pipeline-root', 'gs://bucket/root', '--data',
                        'gs://bucket/images', '--image', 'example.org/tfrp:1', '--output',
                        str(output), '--no-cache'])
  assert code == 0 and str(output) in capsys.readouterr().out
  job = json.loads(output.read_text())
  spec = job['pipelineSpec']
  assert job['runtimeConfig']['gcsOutputDirectory'] == 'gs://bucket/root'
  tasks = spec['root']['dag']['tasks']
  assert set(tasks) == COMPONENTS
  assert {e['container']['image'] for e in spec['deploymentSpec']['executors'].values()} == {
      'example.org/tfrp:1'}
  assert not any(t.get('cachingOptions', {}).get('enableCache') for t in tasks.values())
  assert 'Trainer' in tasks['Evaluator'].get('dependentTasks', [])
  assert 'AnomalyGate' in tasks['Trainer'].get('dependentTasks', [])
  assert 'trainer.task.run_fn' in json.dumps(tasks['Trainer'])
  assert not list(tmp_path.glob('_wheels'))  # module path, no module_file wheel
