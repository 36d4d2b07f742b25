"""metadata/lineage: each model's evaluations as candidate or as the serving baseline, each with
its own figures, and the data named as --data named it; on a small ML Metadata store built here
(real runs: tests/e2e/test_blessing.py, tests/e2e/test_pipeline.py)."""

import json

from ml_metadata.proto import metadata_store_pb2
import pytest

from contracts import evaluation as evaluation_names
from metadata import artifact_reader, connection, lineage
from reporting import lineage_text

INPUT, OUTPUT = metadata_store_pb2.Event.INPUT, metadata_store_pb2.Event.OUTPUT
# TFMA's overall accuracy per evaluation artifact's uri: {TFMA model name: accuracy}
ACCURACIES = {
  'eval/first': {evaluation_names.CANDIDATE: 0.91},
  'eval/second': {evaluation_names.CANDIDATE: 0.93, evaluation_names.BASELINE: 0.92},
  'eval/refused': {evaluation_names.CANDIDATE: 0.4828, evaluation_names.BASELINE: 0.9301},
  'eval/again': {evaluation_names.CANDIDATE: 0.935},
}


class _Store:
  """A store with artifacts and executions linked as TFX links them (event keys)."""

  def __init__(self, path):
    self.store = connection.open_or_create(path)
    self.types = {}

  def _type(self, name, put, proto):
    if name not in self.types:
      self.types[name] = put(proto(name=name))
    return self.types[name]

  def artifact(self, kind, uri, **properties):
    type_id = self._type(kind, self.store.put_artifact_type, metadata_store_pb2.ArtifactType)
    artifact = metadata_store_pb2.Artifact(
      type_id=type_id, uri=uri, state=metadata_store_pb2.Artifact.LIVE
    )
    for name, value in properties.items():
      field = 'int_value' if isinstance(value, int) else 'string_value'
      setattr(artifact.custom_properties[name], field, value)
    [artifact_id] = self.store.put_artifacts([artifact])
    return artifact_id

  def execution(self, kind, inputs, outputs, **properties):
    type_id = self._type(kind, self.store.put_execution_type, metadata_store_pb2.ExecutionType)
    execution = metadata_store_pb2.Execution(type_id=type_id)
    for name, value in properties.items():
      execution.custom_properties[name].string_value = value
    node = metadata_store_pb2.Context(
      type_id=self._type('node', self.store.put_context_type, metadata_store_pb2.ContextType),
      name=f'pipeline.{kind}-{len(self.store.get_executions())}',
    )
    [execution_id] = self.store.put_executions([execution])
    [node_id] = self.store.put_contexts([node])
    self.store.put_attributions_and_associations(
      [], [metadata_store_pb2.Association(context_id=node_id, execution_id=execution_id)]
    )
    events = {}
    for kind_of_event, keys in ((INPUT, inputs), (OUTPUT, outputs)):
      for key, artifact_id in keys.items():
        event = events.setdefault(
          (kind_of_event, artifact_id),
          metadata_store_pb2.Event(
            artifact_id=artifact_id, execution_id=execution_id, type=kind_of_event
          ),
        )
        event.path.steps.add().key = key  # one artifact under two keys: one event, both keys
        event.path.steps.add().index = 0
    self.store.put_events(list(events.values()))


def _evaluate(made, examples, model, baseline, uri, blessed, is_serving=False):
  blessing = made.artifact(
    'ModelBlessing',
    uri + '/blessing',
    blessed=int(blessed),
    **({evaluation_names.CANDIDATE_IS_SERVING: 1} if is_serving else {}),
  )
  evaluation = made.artifact('ModelEvaluation', uri)
  inputs = {'examples': examples, 'model': model}
  if baseline is not None:
    inputs['baseline_model'] = baseline
  made.execution('Evaluator', inputs, {'blessing': blessing, 'evaluation': evaluation})


@pytest.fixture
def pushed_pushed_refused(tmp_path, monkeypatch):
  """Runs pushed, pushed, refused, then the serving model evaluated again alone; the refused
  evaluation also cached (linked once more). Returns (store path, model ids)."""
  monkeypatch.setattr(artifact_reader, 'accuracies', lambda evaluation: ACCURACIES[evaluation.uri])
  path = str(tmp_path / 'metadata.sqlite')
  made = _Store(path)
  examples = made.artifact('Examples', '/o/CsvExampleGen/examples/1')
  config = {'splits': [{'name': 'single_split', 'pattern': 'rows.csv'}]}
  made.execution(
    'CsvExampleGen',
    {},
    {'examples': examples},
    input_base='/data',
    input_config=json.dumps(config),
  )
  images = made.artifact('Examples', '/o/ImageExampleGen/examples/2')
  made.execution('ImageExampleGen', {}, {'examples': images}, input_base='/photos', pattern='*/*')
  models = []
  for name in ('first', 'second', 'refused'):
    models.append(made.artifact('Model', f'/o/Trainer/model/{name}'))
    made.execution('Trainer', {'examples': examples}, {'model': models[-1]})
  first, second, refused = models
  _evaluate(made, examples, first, None, 'eval/first', blessed=True)
  _evaluate(made, examples, second, first, 'eval/second', blessed=True)
  for _ in range(2):
    _evaluate(made, examples, refused, second, 'eval/refused', blessed=False)
  _evaluate(made, examples, second, second, 'eval/again', blessed=True, is_serving=True)
  for model, version in ((first, 1), (second, 2)):
    pushed = made.artifact(
      'PushedModel', f'/o/serving/{version}', pushed=1, pushed_destination=f'/o/serving/{version}'
    )
    made.execution('Pusher', {'model': model}, {'pushed_model': pushed})
  return path, models


def test_a_serving_model_is_credited_only_with_its_own_figures(pushed_pushed_refused):
  path, (first, second, refused) = pushed_pushed_refused
  models = {m['model_id']: m for m in lineage.trace(path)['models']}
  candidate, baseline = evaluation_names.CANDIDATE, evaluation_names.BASELINE
  assert models[second]['evaluations'] == [
    {
      'role': candidate,
      'evaluated_on': 1,
      'accuracy': 0.93,
      'blessed': True,
      'against': first,
      'against_blessed': None,
    },
    {
      'role': baseline,
      'evaluated_on': 1,
      'accuracy': 0.9301,  # its own accuracy in the refused run, not the candidate's 0.4828
      'blessed': None,
      'against': refused,
      'against_blessed': False,
    },
    {  # evaluated again after its push: alone, not as its own baseline
      'role': candidate,
      'evaluated_on': 1,
      'accuracy': 0.935,
      'blessed': True,
      'against': None,
      'against_blessed': None,
    },
  ]
  assert [(e['role'], e['accuracy']) for e in models[first]['evaluations']] == [
    (candidate, 0.91),
    (baseline, 0.92),
  ]
  (only,) = models[refused]['evaluations']  # the cached repeat is the same evaluation
  assert only['role'] == candidate and only['accuracy'] == 0.4828 and only['blessed'] is False
  assert models[second]['pushed_to'] == ['/o/serving/2'] and models[refused]['pushed_to'] == []


def test_lineage_lines_say_candidate_or_baseline_with_the_models_own_accuracy(
  pushed_pushed_refused,
):
  path, (first, second, refused) = pushed_pushed_refused
  lines = lineage_text.render(lineage.trace(path))
  (serving,) = [line for line in lines if line.startswith(f'  model #{second} ')]
  assert f'evaluated on #1 against model #{first}: accuracy 0.9300, blessed' in serving
  assert f'baseline on #1 against model #{refused} (not blessed): accuracy 0.9301' in serving
  assert '0.4828' not in serving and serving.endswith(
    'accuracy 0.9350, blessed; pushed to /o/serving/2'
  )
  (rejected,) = [line for line in lines if line.startswith(f'  model #{refused} ')]
  assert f'against model #{second}: accuracy 0.4828, not blessed; pushed to nowhere' in rejected


def test_a_csv_file_given_as_data_is_named_not_its_folder(pushed_pushed_refused):
  path, _ = pushed_pushed_refused
  versions = lineage.trace(path)['data_versions']
  assert [(v['source'], v['input_base']) for v in versions] == [
    ('/data/rows.csv', '/data'),
    ('/photos', '/photos'),  # a pattern of many files: the folder
  ]
  assert 'from /data/rows.csv ' in lineage_text.render({'data_versions': versions, 'models': []})[1]


def test_a_serving_model_the_evaluator_did_not_compare_is_no_baseline_there(tmp_path, monkeypatch):
  monkeypatch.setattr(artifact_reader, 'accuracies', lambda evaluation: {'candidate': 0.9})
  path = str(tmp_path / 'metadata.sqlite')
  made = _Store(path)
  examples = made.artifact('Examples', '/o/ImageExampleGen/examples/1')
  made.execution('ImageExampleGen', {}, {'examples': examples}, input_base='/p', pattern='*/*')
  served, other = (made.artifact('Model', f'/o/Trainer/model/{n}') for n in ('a', 'b'))
  blessing = made.artifact(
    'ModelBlessing', '/o/blessing', blessed=1, **{evaluation_names.SERVING_CLASSES: '["0", "1"]'}
  )
  evaluation = made.artifact('ModelEvaluation', '/o/evaluation')
  inputs = {'examples': examples, 'model': other, 'baseline_model': served}
  made.execution('Evaluator', inputs, {'blessing': blessing, 'evaluation': evaluation})
  models = {m['model_id']: m for m in lineage.trace(path)['models']}
  assert models[served]['evaluations'] == []  # given to the Evaluator, not compared
  (alone,) = models[other]['evaluations']
  assert alone['against'] is None and alone['blessed'] is True


def test_a_regression_models_evaluations_say_its_own_mae(pushed_pushed_refused, monkeypatch):
  path, (first, second, refused) = pushed_pushed_refused
  monkeypatch.setattr(artifact_reader, 'accuracies', lambda evaluation: {})
  figures = {
    uri: {
      model: {evaluation_names.MAE_KEY: 6000.4 + 100 * accuracy}
      for model, accuracy in found.items()
    }
    for uri, found in ACCURACIES.items()
  }
  monkeypatch.setattr(
    artifact_reader, 'regression_figures', lambda evaluation: figures[evaluation.uri]
  )
  report = lineage.trace(path)
  lines = lineage_text.render(report)
  (serving,) = [line for line in lines if line.startswith(f'  model #{second} ')]
  assert f'evaluated on #1 against model #{first}: MAE 6,093, blessed' in serving
  assert f'baseline on #1 against model #{refused} (not blessed): MAE 6,093' in serving
  models = {m['model_id']: m for m in report['models']}
  assert [e['accuracy'] for e in models[second]['evaluations']] == [None] * 3
