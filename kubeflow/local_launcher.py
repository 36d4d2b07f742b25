"""Runs a compiled KFP v2 pipeline on this machine, task by task, as the KFP v2 launcher would.

For each task, in dependency order, it builds the ExecutorInput the launcher sends (the task's
constant parameters, input artifacts as their producers reported them, output artifact URIs under
the pipeline root, an output metadata file, the pipeline parameters' values: compiled defaults
or `--param NAME=VALUE`), puts it in place of the `{{$}}` placeholder and runs
the task's own container command and arguments (TFX's container entrypoints, ExampleGen's
`preCacheCheck` driver first). With `--image`, each task runs in its own container of that image
(`docker run`), which sees what a pod would: the pipeline root (mounted at the same path, standing
in for the bucket) and, read-only, the local paths the task's parameters name (the data); no
network. Without it, a task runs as a subprocess here: the working directory and PYTHONPATH are
this checkout, as /pipeline is in kubeflow/Dockerfile's image.

Resolver tasks (TFX's LatestBlessedModelStrategy compiles to two) are answered from the earlier
runs under the same pipeline root: the newest run whose blessing says blessed, and its model, as
the KFP backend would find them in ML Metadata. Not reproduced: containers, caching, retries,
importer nodes, other resolver queries.

  .venv/bin/python -m kubeflow.local_launcher --template PIPELINE.json --pipeline-root DIR \
      [--image tfrecord-pipeline:local] [--param train_steps=800 ...]
"""

import argparse
import graphlib
import json
import os
import re
import subprocess
import sys
import time
from typing import Dict, List

from kubeflow import parameters as kfp_parameters

PRODUCED_FILE = 'produced.json'  # <pipeline root>/<run>/: every task's output artifacts
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLACEHOLDER = '{{$}}'
CONTAINER_LABEL = 'tfrecord-pipeline.task'  # on every task container (docker ps --filter label=)


class LaunchError(Exception):
  """A task could not be launched or failed; the message is one line."""


def task_order(tasks: Dict[str, dict]) -> List[str]:
  """Task names, producers before consumers (dependentTasks and artifact producers)."""
  graph = {}
  for name, task in tasks.items():
    producers = {
      a['taskOutputArtifact']['producerTask']
      for a in task.get('inputs', {}).get('artifacts', {}).values()
      if 'taskOutputArtifact' in a
    }
    graph[name] = set(task.get('dependentTasks', [])) | producers
  return list(graphlib.TopologicalSorter(graph).static_order())


def executor_input(
  name: str,
  task: dict,
  component: dict,
  produced: Dict[str, dict],
  task_root: str,
  run_id: str,
  pipeline_parameters: Dict[str, object],
) -> dict:
  """The ExecutorInput (as JSON) of one task; `produced[task][key]` are upstream artifacts,
  pipeline_parameters the values of the pipeline's parameters (kubeflow/parameters.py)."""
  parameters, parameter_values = {}, {}
  for key, source in task.get('inputs', {}).get('parameters', {}).items():
    if 'componentInputParameter' in source:
      value = pipeline_parameters[source['componentInputParameter']]
      definition = component.get('inputDefinitions', {}).get('parameters', {}).get(key, {})
      if 'parameterType' in definition:  # pipeline spec 2.1: a google.protobuf.Value
        parameter_values[key] = value
      else:  # pipeline spec 2.0: a kfp Value
        parameters[key] = kfp_parameters.kfp_value(value)
      continue
    runtime = source.get('runtimeValue')
    if runtime is None:
      raise LaunchError(f'{name}: parameter {key} is neither a constant nor a pipeline parameter')
    if 'constantValue' in runtime:  # pipeline spec 2.0: a kfp Value
      parameters[key] = runtime['constantValue']
    else:  # pipeline spec 2.1: a google.protobuf.Value
      parameter_values[key] = runtime['constant']
  artifacts = {}
  for key, source in task.get('inputs', {}).get('artifacts', {}).items():
    upstream = source.get('taskOutputArtifact')
    if upstream is None:
      raise LaunchError(f'{name}: input {key} does not come from a task')
    producer = produced[upstream['producerTask']]
    found = producer.get(upstream['outputArtifactKey'])  # a resolver may find nothing
    artifacts[key] = {'artifacts': [found] if found else []}
  outputs = {
    key: {
      'artifacts': [
        {
          'name': f'{run_id}/{name}/{key}',
          'type': definition['artifactType'],
          'uri': f'{task_root}/{key}',
        }
      ]
    }
    for key, definition in component.get('outputDefinitions', {}).get('artifacts', {}).items()
  }
  return {
    'inputs': {
      'parameters': parameters,
      'parameterValues': parameter_values,
      'artifacts': artifacts,
    },
    'outputs': {'artifacts': outputs, 'outputFile': f'{task_root}/executor_output.json'},
  }


def _run(command: List[str], log_path: str, what: str) -> None:
  """Runs one command here, `python` being this environment's, logging to log_path."""
  env = dict(
    os.environ,
    PYTHONPATH=HERE,
    PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get('PATH', '')]),
  )
  with open(log_path, 'a') as log:
    log.write(f'$ {" ".join(command)[:2000]}\n')
    log.flush()
    code = subprocess.call(command, cwd=HERE, env=env, stdout=log, stderr=subprocess.STDOUT)
  if code:
    with open(log_path) as log:
      last = [line.strip() for line in log if line.strip()][-1:]
    raise LaunchError(f'{what} exited with {code}: {last[0] if last else ""} (log: {log_path})')


def named_paths(value, pipeline_root: str) -> List[str]:
  """Existing local absolute paths named in a task's parameter values (JSON inside strings
  too), outside the pipeline root: what its container must see, read-only."""
  if isinstance(value, str):
    try:
      decoded = json.loads(value)
    except ValueError:
      decoded = None
    if isinstance(decoded, (dict, list)):
      return named_paths(decoded, pipeline_root)
    if not (value.startswith('/') and os.path.exists(value)):
      return []
    inside = os.path.commonpath([value, pipeline_root]) == pipeline_root
    return [] if inside else [value.rstrip('/') or '/']
  children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
  return sorted({path for child in children for path in named_paths(child, pipeline_root)})


def container_command(
  image: str, name: str, steps_file: str, pipeline_root: str, data_paths: List[str]
) -> List[str]:
  """`docker run` of one task: its steps (kubeflow/task_steps.py) in `image`, with the pipeline
  root read-write and the data read-only at their own paths, no network, this user's ids."""
  mounts = [f'--volume={pipeline_root}:{pipeline_root}']
  mounts += [f'--volume={path}:{path}:ro' for path in data_paths]
  return [
    'docker', 'run', '--rm', f'--name={name}', '--network=none',
    f'--user={os.getuid()}:{os.getgid()}', '--env=HOME=/tmp', f'--label={CONTAINER_LABEL}',
    *mounts, '--entrypoint=python', image, '-m', 'kubeflow.task_steps', steps_file,
  ]  # fmt: skip


def _run_in_container(
  image: str,
  name: str,
  commands: List[tuple],
  run_id: str,
  pipeline_root: str,
  invocation: str,
  log_path: str,
) -> None:
  """One task's (step, argv) commands in one container of `image`, as in its pod."""
  steps_file = os.path.join(os.path.dirname(log_path), f'{name}.steps.json')
  with open(steps_file, 'w') as f:
    json.dump([command for _, command in commands], f)
  data = named_paths(json.loads(invocation)['inputs'], pipeline_root)
  container_name = re.sub(r'[^a-zA-Z0-9_.-]', '-', f'{run_id}-{name}').lower()
  command = container_command(image, container_name, steps_file, pipeline_root, data)
  _run(command, log_path, f'{name} container')


def run(
  job: dict,
  pipeline_root: str,
  pipeline_parameters: Dict[str, object],
  run_id: str = '',
  report=print,
  image: str = '',
) -> Dict[str, dict]:
  """Runs every task of `job` (a compiled PipelineJob dict) with these parameter values, each
  in its own container of `image` when one is given; returns the produced artifacts."""
  spec = job['pipelineSpec']
  tasks = spec['root']['dag']['tasks']
  executors = spec['deploymentSpec']['executors']
  run_id = run_id or time.strftime('run-%Y%m%d-%H%M%S')
  log_folder = os.path.join(pipeline_root, run_id, 'logs')
  os.makedirs(log_folder, exist_ok=True)
  produced: Dict[str, dict] = {}
  order = task_order(tasks)
  for number, name in enumerate(order, 1):
    task = tasks[name]
    component = spec['components'][task['componentRef']['name']]
    executor = executors[component['executorLabel']]
    container = executor.get('container')
    if 'resolver' in executor:
      produced[name] = resolve(name, executor['resolver'], pipeline_root, run_id)
      found = ', '.join(sorted(produced[name])) or 'nothing'
      report(f'[{number}/{len(order)}] {name} resolved {found}')
      continue
    if container is None:
      raise LaunchError(f'{name}: only container and resolver tasks run locally')
    task_root = os.path.join(pipeline_root, run_id, name)
    invocation = json.dumps(
      executor_input(name, task, component, produced, task_root, run_id, pipeline_parameters)
    )
    unknown = [a for a in container.get('args', []) if '{{$' in a and a != PLACEHOLDER]
    if unknown:
      raise LaunchError(f'{name}: unsupported placeholder {unknown[0]}')
    os.makedirs(task_root, exist_ok=True)  # the launcher prepares outputs' parent folders too
    log_path = os.path.join(log_folder, f'{name}.log')
    report(f'[{number}/{len(order)}] {name} ...')
    started = time.monotonic()
    steps = []
    driver = container.get('lifecycle', {}).get('preCacheCheck')
    if driver:
      steps.append(('driver', driver))
    steps.append(('executor', container))
    commands = [
      (what, list(step['command']) + [invocation if a == PLACEHOLDER else a for a in step['args']])
      for what, step in steps
    ]
    if image:
      _run_in_container(image, name, commands, run_id, pipeline_root, invocation, log_path)
    else:
      for what, command in commands:
        _run(command, log_path, f'{name} {what}')
    with open(os.path.join(task_root, 'executor_output.json')) as f:
      reported = json.load(f).get('artifacts', {})
    planned = json.loads(invocation)['outputs']['artifacts']
    produced[name] = {
      key: {**value['artifacts'][0], **reported.get(key, {}).get('artifacts', [{}])[0]}
      for key, value in planned.items()
    }
    with open(os.path.join(pipeline_root, run_id, PRODUCED_FILE), 'w') as f:
      json.dump(produced, f)  # what later runs' resolvers look at
    report(f'[{number}/{len(order)}] {name} done in {time.monotonic() - started:.1f} s')
  return produced


def _title(artifact: dict) -> str:
  """'tfx.Model' from an artifact's type (an instance schema or a schema title)."""
  kind = artifact.get('type', {})
  schema = kind.get('instanceSchema', '')
  return schema.split('\n', 1)[0][len('title: ') :] if schema else kind.get('schemaTitle', '')


def latest_blessed(pipeline_root: str, run_id: str) -> Dict[str, dict]:
  """{'tfx.ModelBlessing': ..., 'tfx.Model': ...} of the newest earlier run under
  pipeline_root whose model was blessed; {} when none was."""
  for run_folder in sorted(os.listdir(pipeline_root), reverse=True):
    path = os.path.join(pipeline_root, run_folder, PRODUCED_FILE)
    if run_folder >= run_id or not os.path.isfile(path):
      continue
    with open(path) as f:
      outputs = [a for task in json.load(f).values() for a in task.values()]
    by_title = {_title(a): a for a in outputs}
    blessing = by_title.get('tfx.ModelBlessing', {})
    if blessing.get('metadata', {}).get('blessed') == 1 and 'tfx.Model' in by_title:
      return {'tfx.ModelBlessing': blessing, 'tfx.Model': by_title['tfx.Model']}
  return {}


def resolve(name: str, resolver: dict, pipeline_root: str, run_id: str) -> Dict[str, dict]:
  """A resolver task's outputs: its ModelBlessing / Model queries answered by latest_blessed."""
  wanted = {}
  for key, query in resolver.get('outputArtifactQueries', {}).items():
    title = re.search(r'schema_title="([^"]+)"', query.get('filter', ''))
    if title is None or title.group(1) not in ('tfx.Model', 'tfx.ModelBlessing'):
      raise LaunchError(f'{name}: only latest-blessed-model resolvers run locally')
    wanted[key] = title.group(1)
  found = latest_blessed(pipeline_root, run_id)
  return {key: found[title] for key, title in wanted.items() if title in found}


def check_image(job: dict, image: str) -> None:
  """Docker answers and has `image`; a warning line when the spec was compiled for another."""
  found = subprocess.run(['docker', 'image', 'inspect', image], capture_output=True, text=True)
  if found.returncode:
    reason = (found.stderr.strip().splitlines() or ['docker failed'])[-1]
    raise LaunchError(f'image {image}: {reason} (make image builds tfrecord-pipeline:local)')
  compiled = {
    executor['container']['image']
    for executor in job['pipelineSpec']['deploymentSpec']['executors'].values()
    if 'container' in executor
  }
  if compiled - {image}:
    print(f'warning: compiled for {", ".join(sorted(compiled))}; running {image}')
  print(f'each task in its own container of {image}')


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(
    prog='python -m kubeflow.local_launcher',
    description=__doc__,
    formatter_class=argparse.RawDescriptionHelpFormatter,
  )
  parser.add_argument(
    '--template',
    default=os.path.join(HERE, 'kubeflow', 'pipeline.json'),
    help='compiled PipelineJob JSON or pipeline spec YAML (default: kubeflow/pipeline.json)',
  )
  parser.add_argument(
    '--pipeline-root', default='', help='a local folder (default: the compiled pipeline root)'
  )
  parser.add_argument(
    '--param',
    action='append',
    default=[],
    metavar='NAME=VALUE',
    help='a pipeline parameter for this run (repeatable; default: the compiled values)',
  )
  parser.add_argument(
    '--image',
    default='',
    help='run each task in its own container of this image (docker run), e.g. the image '
    'compile --image named; default: each task as a subprocess here',
  )
  args = parser.parse_args(argv)
  from contracts.errors import UserError
  from kubeflow import submit

  try:
    job = submit.load_job(args.template)
    root = args.pipeline_root or job.get('runtimeConfig', {}).get('gcsOutputDirectory', '')
    if not root or '://' in root:
      raise UserError(
        f'pipeline root {root or "(none)"}: pass a local --pipeline-root (and '
        'compile with local --data and --pipeline-root)'
      )
    values = kfp_parameters.values(job, args.param)
    print('parameters: ' + ', '.join(f'{k}={v}' for k, v in sorted(values.items())))
    if args.image:
      check_image(job, args.image)
    run(job, os.path.abspath(root), values, image=args.image)
  except (UserError, LaunchError) as e:
    print(f'error: {e}', file=sys.stderr)
    return 2
  print(f'all tasks done; artifacts under {os.path.abspath(root)}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
