"""metadata/report_facts: what the run report shows, gathered from hand-made artifacts of a run's
nodes (no pipeline run; the whole report of real runs: tests/reporting/test_report.py)."""

import json

from ml_metadata.proto import metadata_store_pb2

from contracts import artifacts, image_record
from contracts import evaluation as names
from metadata import lineage, report_facts, run_reader
from metadata.run_result import RunResult
from tests.support import evaluations

TRAINING = {'train_steps': 10, 'batch_size': 4, 'epochs': 1, 'history': {}, 'input_check': None}


def _artifact(uri: str, artifact_id: int = 0) -> metadata_store_pb2.Artifact:
  return metadata_store_pb2.Artifact(id=artifact_id, uri=uri)


def _statistics(folder) -> str:
  """StatisticsGen's Split-train/FeatureStats.pb: a string label of 3 'a' and 1 'b', a number."""
  from google.protobuf import text_format
  from tensorflow_metadata.proto.v0 import statistics_pb2

  found = text_format.Parse(
    'datasets { features { path { step: "label" } string_stats { rank_histogram { '
    'buckets { label: "b" sample_count: 1 } buckets { label: "a" sample_count: 3 } } } } '
    'features { name: "size" num_stats { mean: 2.5 } } }',
    statistics_pb2.DatasetFeatureStatisticsList(),
  )
  (folder / 'Split-train').mkdir(parents=True)
  (folder / 'Split-train' / 'FeatureStats.pb').write_bytes(found.SerializeToString())
  return str(folder)


def test_every_fact_of_the_report_is_gathered_from_the_runs_artifacts(tmp_path, monkeypatch):
  model_run = tmp_path / 'model_run'
  model_run.mkdir()
  (model_run / artifacts.TRAINING_FILE).write_text(json.dumps(TRAINING))
  (model_run / artifacts.DAMAGE_FILE).write_text(json.dumps({'corrupt': 2}))
  tuner = tmp_path / 'tuner'
  tuner.mkdir()
  (tuner / artifacts.TUNER_RESULTS_FILE).write_text(json.dumps([{'trial_id': '00', 'score': 1}]))
  examples = tmp_path / 'examples'
  examples.mkdir()
  (examples / artifacts.IMAGE_META_FILE).write_text(json.dumps({'encoding': 'png'}))
  (tmp_path / 'excluded.csv').write_text('path,reason\n3/broken.jpg,not an image\n')
  (tmp_path / 'duplicates.json').write_text(json.dumps({'conflicts': [{'path': '1/a.png'}]}))
  evaluation = evaluations.write_metrics(
    str(tmp_path / 'evaluation'),
    {(names.CANDIDATE, names.ACCURACY_KEY, False): 0.75},
    {('zone', 'north'): {names.ACCURACY_KEY: 0.5, names.EXAMPLE_COUNT_KEY: 2.0}},
  )
  nodes = {
    'ImageExampleGen': run_reader.NodeRun(
      'ImageExampleGen', 'COMPLETE', {'examples': _artifact(str(examples), 5)}
    ),
    'StatisticsGen': run_reader.NodeRun(
      'StatisticsGen', 'COMPLETE', {'statistics': _artifact(_statistics(tmp_path / 'stats'))}
    ),
    'Trainer': run_reader.NodeRun(
      'Trainer',
      'COMPLETE',
      {'model_run': _artifact(str(model_run)), 'model': _artifact(str(tmp_path / 'model'), 9)},
    ),
    'Tuner': run_reader.NodeRun('Tuner', 'COMPLETE', {'tuner_results': _artifact(str(tuner))}),
    'Evaluator': run_reader.NodeRun('Evaluator', 'COMPLETE', {'evaluation': _artifact(evaluation)}),
  }
  traced = {  # this run's examples #5 and model #9 among others of the output folder
    'data_versions': [{'examples_id': 4}, {'examples_id': 5}],
    'models': [{'model_id': 9}, {'model_id': 10}],
  }
  monkeypatch.setattr(lineage, 'trace', lambda path: traced if path == 'm.sqlite' else None)
  result = RunResult(
    wall_seconds=1.0,
    examples_uri=str(examples),
    excluded_report=str(tmp_path / 'excluded.csv'),
    duplicates={'report': str(tmp_path / 'duplicates.json')},
  )
  facts = report_facts.gather(nodes, result, 'm.sqlite', 'species')
  assert facts.result is result
  assert list(facts.statistics.features) == ['train']
  assert list(facts.statistics.features['train']) == ['label', 'size']  # by dotted path or name
  assert facts.statistics.features['train']['size'].num_stats.mean == 2.5
  assert facts.statistics.label == image_record.LABEL_KEY  # neither label_name nor species
  assert facts.statistics.label_counts == {'train': [('a', 3), ('b', 1)]}
  assert facts.statistics.exact
  assert facts.image_encoding == 'png'
  assert facts.excluded == [{'path': '3/broken.jpg', 'reason': 'not an image'}]
  assert facts.duplicates == {'conflicts': [{'path': '1/a.png'}]}
  assert facts.training == TRAINING and facts.damage == {'corrupt': 2}
  assert facts.model_run_uri == str(model_run)
  assert facts.tuner_trials == [{'trial_id': '00', 'score': 1}]
  assert facts.evaluation.metrics == {names.ACCURACY_KEY: 0.75}
  assert facts.evaluation.confusion == {}  # TFMA wrote no plot
  assert facts.evaluation.slices == {'zone = north': {'accuracy': 0.5, 'examples': 2}}
  assert facts.model_dir.startswith(str(tmp_path / 'model'))
  assert facts.lineage == report_facts.Lineage([{'examples_id': 5}], [{'model_id': 9}])


def test_a_run_that_left_no_artifacts_has_every_fact_absent(tmp_path):
  facts = report_facts.gather({}, RunResult(wall_seconds=1.0), str(tmp_path / 'm.sqlite'), 'y')
  assert facts.statistics == report_facts.Statistics({}, None, {}, True)
  assert facts.evaluation == report_facts.Evaluation({}, {}, {}, {})
  assert facts.image_encoding == ''
  assert facts.excluded is facts.duplicates is facts.training is facts.tuner_trials is None
  assert facts.damage is facts.model_run_uri is facts.model_dir is facts.lineage is None
