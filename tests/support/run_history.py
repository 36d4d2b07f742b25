"""Facts as metadata/runs.gather returns them, made by hand for the tests of what draws them."""


def run(number: int, **changed) -> dict:
  """The facts of run `number` (a pushed classification run unless `changed` says otherwise)."""
  entry = {
    'run_id': f'2026-12-07T18:0{number}:00.000000',
    'started': f'2026-12-07 18:0{number}:00',
    'wall_seconds': 20.0 + number,
    'data': {'path': '/data/digits', 'rows': 300, 'span': 0, 'examples_id': 1, 'revision': {}},
    'task': 'classification',
    'model': 'cnn',
    'model_id': 10 * number,
    'accuracy': 0.9 + number / 100,
    'mae': None,
    'baseline_model_id': None,
    'blessed': True,
    'blessing': 'accuracy fine',
    'pushed_to': f'/out/serving/{1000 + number}',
    'version': str(1000 + number),
    'pushed_model_id': 10 * number + 1,
    'already_serving': None,
    'exit_code': 0,
    'executed': ['Trainer'],
    'cached': ['ImageExampleGen'],
    'why_executed': {'Trainer': 'options changed (train_steps 1 → 2)'},
    'report': f'reports/2026-12-07T18-0{number}-00.000000.html',
  }
  entry.update(changed)
  return entry


REFUSED = dict(
  blessed=False,
  blessing='accuracy 0.5 below 0.9',
  pushed_to=None,
  version=None,
  pushed_model_id=None,
  exit_code=3,
)


def history(*runs: dict, rollbacks=(), on_disk=None) -> dict:
  """An output folder's facts: `runs` oldest first, their versions and `rollbacks`."""
  from metadata import runs as gathering

  versions = on_disk if on_disk is not None else [r['version'] for r in runs if r['version']]
  versions = sorted(set(versions) | {r['version'] for r in rollbacks}, key=int)
  return {
    'output': '/out',
    'runs': list(runs)[::-1],
    'rollbacks': list(rollbacks),
    'versions': gathering.model_versions(list(runs), list(rollbacks), versions),
    'serving': versions[-1] if versions else None,
  }
