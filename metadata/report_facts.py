"""What the run report (reporting/report.py) shows, gathered in one pass from ML Metadata and the
artifacts the run used or produced: the run's result, statistics and label counts, the excluded
files and duplicates, training.json, the Tuner's trials, the input damage, TFMA's metrics per
class and slice with the confusion matrix, and the lineage of the run's data and model.
Plain values (dicts, lists, TFDV's statistics protos); the page is drawn from them alone.
"""

import csv
import io
import json
import os
from typing import Dict, List, NamedTuple, Optional, Sequence

from contracts import artifacts, image_record
from contracts import evaluation as evaluation_names
from metadata import artifact_reader, lineage, transform_facts
from metadata import eval_predictions as predictions
from metadata.run_result import RunResult


class Statistics(NamedTuple):
  """StatisticsGen's output: every split's features, and the label's counts."""

  features: Dict[str, Dict[str, object]]  # split (train first) → name → FeatureNameStatistics
  label: Optional[str]  # the label feature (artifact_reader.label_counts)
  label_counts: Dict[str, list]  # split → [(value, count)]
  exact: bool  # counts per value (a string label), or a numeric label's histogram buckets
  uri: Optional[str] = None  # the statistics artifact (published: its content never changes)


class Evaluation(NamedTuple):
  """The Evaluator's output; empty without one."""

  metrics: Dict[str, float]  # artifact_reader.overall_metrics
  per_class: Dict[str, Dict[str, list]]  # artifact_reader.per_class
  confusion: Dict[int, Dict[int, float]]  # evaluation_names.confusion_rows
  slices: Dict[str, dict]  # artifact_reader.slice_metrics


class Lineage(NamedTuple):
  """This run's data version and model as metadata/lineage.trace found them."""

  data_versions: List[dict]
  models: List[dict]


class ReportFacts(NamedTuple):
  result: RunResult
  statistics: Statistics
  image_encoding: str  # the examples' image encoding (image_meta.json); '' for other data
  excluded: Optional[List[dict]]  # the exclusion report's rows; None without one
  duplicates: Optional[dict]  # duplicates.json's listing; None when nothing was grouped
  training: Optional[dict]  # training.json
  model_run_uri: Optional[str]  # TensorBoard's logs
  tuner_trials: Optional[list]  # tuner_results.json, best first; None without a Tuner
  damage: Optional[dict]  # the Trainer's input damage
  evaluation: Evaluation
  model_dir: Optional[str]  # the trained model's serving SavedModel
  lineage: Optional[Lineage]  # None when no examples were produced
  transform: Optional[transform_facts.TransformFacts] = None  # a module file's Transform
  eval_predictions: predictions.EvalPredictions = predictions.NONE  # what the
  # report draws of the eval split: image records and the candidate's classes, regression's numbers


def statistics(nodes, label_keys: Sequence[str]) -> Statistics:
  """The run's statistics; label_keys: the label's candidate names, first found wins."""
  found = artifact_reader.split_statistics(nodes)
  label, counts, exact = artifact_reader.label_counts(found, label_keys)
  source = artifact_reader.output(nodes, 'statistics')
  return Statistics(
    {split: artifact_reader.features_by_name(dataset) for split, dataset in found.items()},
    label,
    counts,
    exact,
    source.uri if source is not None else None,
  )


def evaluation(nodes) -> Evaluation:
  artifact = artifact_reader.output(nodes, 'evaluation')
  if artifact is None:
    return Evaluation({}, {}, {}, {})
  return Evaluation(
    artifact_reader.overall_metrics(artifact),
    artifact_reader.per_class(artifact),
    evaluation_names.confusion_rows(artifact.uri),
    artifact_reader.slice_metrics(artifact),
  )


def _text(path: str) -> Optional[str]:
  """The file's text; None when there is no such file."""
  from tfx.dsl.io import fileio

  if not path or not fileio.exists(path):
    return None
  with fileio.open(path, 'r') as f:
    return f.read()


def _image_encoding(examples_uri: Optional[str]) -> str:
  found = _text(os.path.join(examples_uri, artifacts.IMAGE_META_FILE)) if examples_uri else None
  return json.loads(found)['encoding'] if found is not None else ''


def _excluded(path: Optional[str]) -> Optional[List[dict]]:
  found = _text(path)
  return list(csv.DictReader(io.StringIO(found))) if found is not None else None


def _duplicates(facts: Optional[dict]) -> Optional[dict]:
  """duplicates.json's conflicts and largest groups, where the grouping found any."""
  found = _text(facts.get('report')) if facts else None
  return json.loads(found) if found is not None else None


def _model_dir(nodes) -> Optional[str]:
  model = artifact_reader.output(nodes, 'model')
  if model is None:
    return None
  from tfx.utils import path_utils

  return path_utils.serving_model_path(model.uri)


def _lineage(nodes, metadata_path: str) -> Optional[Lineage]:
  examples = next(
    (
      n.outputs['examples']
      for n in nodes.values()
      if n.node_id.endswith('ExampleGen') and 'examples' in n.outputs
    ),
    None,
  )
  if examples is None:
    return None
  trace = lineage.trace(metadata_path)
  model = artifact_reader.output(nodes, 'model')
  return Lineage(
    [v for v in trace['data_versions'] if v['examples_id'] == examples.id],
    [m for m in trace['models'] if model is not None and m['model_id'] == model.id],
  )


def gather(nodes, result: RunResult, metadata_path: str, label: str) -> ReportFacts:
  """Everything the report shows of the run whose nodes (run_reader.run_nodes) and result
  (summary.build) are given; label: the label column of table data."""
  model_run = artifact_reader.output(nodes, 'model_run')
  encoding, evaluated, model_dir = (
    _image_encoding(result.examples_uri),
    evaluation(nodes),
    _model_dir(nodes),
  )
  return ReportFacts(
    result=result,
    statistics=statistics(nodes, [image_record.LABEL_NAME_KEY, label, image_record.LABEL_KEY]),
    image_encoding=encoding,
    excluded=_excluded(result.excluded_report),
    duplicates=_duplicates(result.duplicates),
    training=artifact_reader.output_json(nodes, 'model_run', artifacts.TRAINING_FILE),
    model_run_uri=model_run.uri if model_run is not None else None,
    tuner_trials=artifact_reader.output_json(nodes, 'tuner_results', artifacts.TUNER_RESULTS_FILE),
    damage=artifact_reader.output_json(nodes, 'model_run', artifacts.DAMAGE_FILE),
    evaluation=evaluated,
    model_dir=model_dir,
    lineage=_lineage(nodes, metadata_path),
    transform=transform_facts.gather(nodes),
    eval_predictions=predictions.gather(
      result.examples_uri,
      model_dir,
      bool(encoding),
      bool(result.regression),
      bool(evaluated.metrics),
      label,
    ),
  )
