"""Every run of an output folder across time and every model version pushed to its serving folder,
gathered from ML Metadata in one pass: what `pipeline.py runs` and `models` print and the runs page
(runs.html) draws, as plain JSON-able values (reporting/runs_page.py draws them, reading nothing).

A run's exit code is not in ML Metadata: it is derived from what is (a failed component 1, an
interrupted one 130, not blessed 3, blessed but not serving 4, else 0; bad input found before the
first component leaves no run).
"""

import datetime
import json
import os
from typing import Dict, List, Optional

from contracts import evaluation as evaluation_names
from metadata import rollback_record, run_facts, run_reader, summary
from metadata.run_reader import property_value

REPORTS_FOLDER = 'reports'  # <local dir>/reports/<run id>.html: every run's report, kept


def _time(milliseconds: int) -> str:
  return datetime.datetime.fromtimestamp(milliseconds / 1000).isoformat(sep=' ', timespec='seconds')


def report_file(run_id: str) -> str:
  """A run's kept report under the local folder: reports/<run id>.html (':' kept out)."""
  return os.path.join(REPORTS_FOLDER, run_id.replace(':', '-') + '.html')


def exit_code(states: Dict[str, str], built) -> int:
  """The exit code `pipeline.py run` gave, as far as ML Metadata tells (cli/run.finish)."""
  if 'CANCELED' in states.values():
    return 130
  if 'FAILED' in states.values():
    return 1
  if built.blessed is False:
    return 3
  if (built.serving_check or {}).get('serves') is False:
    return 4
  return 0


def _data(nodes: dict, built) -> dict:
  """What the run read: where, how many rows (every split), the data revision when recorded."""
  producer = next(
    (
      n
      for n in nodes.values()
      if 'examples' in n.outputs and n.node_id != summary.INFER_EXAMPLE_GEN
    ),
    None,
  )
  if producer is None:
    return {}
  examples = producer.outputs['examples']
  counts = built.examples_per_split or json.loads(property_value(examples, 'split_counts') or '{}')
  return {
    'path': run_reader.data_source(producer.execution) if producer.execution else None,
    'rows': sum(counts.values()) if counts else None,
    'span': property_value(examples, 'span'),
    'examples_id': examples.id,
    'revision': {
      name: property_value(examples, name)
      for name in sorted(examples.custom_properties)
      if name.startswith(run_facts.REVISION_PREFIX)
    },
  }


def _baseline(store, nodes: dict) -> Optional[int]:
  """The serving model's id the Evaluator compared the run's model with (None: none)."""
  from ml_metadata.proto import metadata_store_pb2

  evaluator = next((n for n in nodes.values() if 'blessing' in n.outputs), None)
  if evaluator is None or evaluator.execution is None:
    return None
  for event in store.get_events_by_execution_ids([evaluator.execution.id]):
    keys = [step.key for step in event.path.steps if step.HasField('key')]
    if event.type == metadata_store_pb2.Event.INPUT and 'baseline_model' in keys:
      return event.artifact_id
  return None


def run_entry(store, pipeline_name: str, run, local_dir: str) -> dict:
  """One run's row: when, how long, the data, task and model, the headline figure, the blessing
  and push, the exit code, and which components executed and why."""
  nodes = run_reader.run_nodes(store, run)
  built = summary.build(nodes, 0.0)
  ends = [n.execution.last_update_time_since_epoch for n in nodes.values() if n.execution]
  pusher = next((n for n in nodes.values() if 'pushed_model' in n.outputs), None)
  pushed = pusher.outputs['pushed_model'] if pusher else None
  model = next((n.outputs['model'] for n in nodes.values() if 'model' in n.outputs), None)
  report = report_file(run.name)
  return {
    'run_id': run.name,
    'started': _time(run.create_time_since_epoch),
    'wall_seconds': round((max(ends) - run.create_time_since_epoch) / 1000, 1) if ends else None,
    'data': _data(nodes, built),
    'task': run_facts.task_of(built),
    'model': (built.training or {}).get('model'),
    'model_id': model.id if model is not None else None,
    'accuracy': built.eval_accuracy,
    'mae': built.regression.get(evaluation_names.MAE_KEY),
    'baseline_model_id': _baseline(store, nodes),
    'blessed': built.blessed,
    'blessing': built.blessing,
    'pushed_to': built.pushed_to,
    'version': os.path.basename(built.pushed_to.rstrip('/')) if built.pushed_to else None,
    'pushed_model_id': pushed.id if pushed is not None and built.pushed_to else None,
    'already_serving': built.push.already_serving if built.push else None,
    'exit_code': exit_code(built.components, built),
    'executed': built.executed,
    'cached': built.cached,
    'why_executed': run_reader.why_executed(store, pipeline_name, nodes),
    'report': report if os.path.isfile(os.path.join(local_dir, report)) else None,
  }


def serving_versions(serving_dir: str) -> List[str]:
  """The numbered version folders under a local serving folder, oldest first."""
  if not os.path.isdir(serving_dir):
    return []
  names = [n for n in os.listdir(serving_dir) if n.isdigit()]
  return sorted(names, key=int)


def model_versions(runs: List[dict], rollbacks: List[dict], on_disk: List[str]) -> List[dict]:
  """Every version under serving/, oldest first: pushed by which run (or a rollback, with its
  reason), the model, its data and figures, whether it is serving now (the highest number)."""
  found: Dict[str, dict] = {}
  for run in sorted(runs, key=lambda r: r['started']):
    if run['version'] and run['version'] not in found:
      found[run['version']] = {
        'version': run['version'],
        'path': run['pushed_to'],
        'pushed': run['started'],
        'run_id': run['run_id'],
        'rollback': None,
        **{key: run[key] for key in ('model_id', 'task', 'model', 'data', 'accuracy', 'mae')},
      }
  for rollback in rollbacks:
    source = found.get(rollback['from_version'], {})
    found[rollback['version']] = {
      **source,
      'version': rollback['version'],
      'path': rollback['path'],
      'pushed': rollback['when'],
      'run_id': None,
      'rollback': rollback,
    }
  for name in on_disk:
    found.setdefault(name, {'version': name, 'path': None, 'pushed': None, 'run_id': None})
  serving = on_disk[-1] if on_disk else None
  return [
    dict(entry, serving=name == serving, present=name in on_disk)
    for name, entry in sorted(found.items(), key=lambda item: int(item[0]))
  ]


def gather(metadata_path: str, pipeline_name: str, serving_dir: str, local_dir: str) -> dict:
  """{'runs': newest first, 'rollbacks', 'versions', 'serving'}: the output folder's history."""
  store = run_reader.open_store(metadata_path)
  runs = [
    run_entry(store, pipeline_name, run, local_dir)
    for run in run_facts.runs_of(store, pipeline_name)
  ]
  rollbacks = rollback_record.rollbacks(store)
  on_disk = serving_versions(serving_dir)
  versions = model_versions(runs, rollbacks, on_disk)
  return {
    'output': local_dir,
    'runs': runs[::-1],
    'rollbacks': rollbacks,
    'versions': versions,
    'serving': on_disk[-1] if on_disk else None,
  }
