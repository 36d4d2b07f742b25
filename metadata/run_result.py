"""A pipeline run's outcome: what the summary prints, the report shows and `last_run.json` holds.

A field left None is a fact the run did not reach (its key is absent from the JSON); the few
facts that are null when reached (an accuracy not measured, a model not pushed) sit in a nested
dataclass that is None when not reached. Imports nothing heavy: `cli/unchanged.py` reads it back
without TFX.
"""

import dataclasses
import json
from typing import Dict, List, Optional

from utils import atomic


@dataclasses.dataclass
class Evaluation:
  """The Evaluator's figures on the whole eval split."""

  accuracy: Optional[float] = None
  serving_accuracy: Optional[float] = None  # the serving model's, when one was compared
  class_recall: Dict[str, Optional[float]] = dataclasses.field(default_factory=dict)
  # A regression model's figures by contracts/evaluation.py's names (MAE_KEY, …, BASELINE_MAE_KEY,
  # IMPROVEMENT_KEY): the candidate's, and the serving model's when one was compared; {} for a
  # classifier.
  figures: Dict[str, float] = dataclasses.field(default_factory=dict)
  serving_figures: Dict[str, float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Push:
  """What the Pusher did: where it pushed (None: not pushed), or the serving version it kept."""

  destination: Optional[str] = None
  already_serving: Optional[str] = None


# Facts kept in the JSON under their own names (the nested and flag fields are handled apart).
_NESTED_OR_FLAGS = ('evaluation', 'push', 'report', 'interrupted', 'not_started')


@dataclasses.dataclass
class RunResult:
  """What a run did and found; `to_json` / `from_json` convert to and from `last_run.json`."""

  wall_seconds: float = 0.0  # the components' own time
  components: Dict[str, str] = dataclasses.field(default_factory=dict)  # id → state
  executed: List[str] = dataclasses.field(default_factory=list)
  cached: List[str] = dataclasses.field(default_factory=list)
  batch_capped: Optional[dict] = None  # {'asked', 'train_examples'}
  training: Optional[dict] = None  # {'label', 'model', 'hyperparameters', 'tuned', 'weights',
  # 'phases', 'seed', 'task', 'loss', 'leakage': trainer/leakage.unjudged's columns}
  input_check: Optional[dict] = None  # {'verdict', 'stall_fraction', 'cache'}
  examples_per_split: Optional[Dict[str, int]] = None
  # {split: [records read, records recorded]} where the Trainer read fewer than the ExampleGen
  # recorded (damaged shards: records.damage)
  trainer_read: Optional[Dict[str, List[int]]] = None
  excluded_files: Optional[int] = None
  excluded_report: Optional[str] = None
  turned_upright: Optional[int] = None
  repeated_headers: Optional[int] = None  # CSV rows repeating the header, skipped by ExampleGen
  non_finite_cells: Optional[int] = None  # CSV cells inf / nan, read as missing by ExampleGen
  # CSV columns of numbers written as text, read as numbers by ExampleGen:
  # {column: {'placeholders': cells, 'other': cells}} (their cells read as missing)
  numbers_from_text: Optional[Dict[str, dict]] = None  # (and 'forms': text_numbers.FORMS)
  # CSV text columns whose cells are mostly numbers no rule reads: {column: [cells shown]}
  numbers_unread: Optional[Dict[str, list]] = None
  csv_dialect: Optional[str] = None  # the CSV files' dialect when not plain commas
  examples_uri: Optional[str] = None
  duplicates: Optional[dict] = None  # summary.duplicate_facts
  id_columns: Optional[List[str]] = None  # detected by ExampleGen (components/id_columns.py)
  span: Optional[int] = None
  schema_uri: Optional[str] = None
  anomalies: Optional[List[str]] = None
  evaluation: Optional[Evaluation] = None
  transform_cache: Optional[dict] = (
    None  # Transform read the last analyzer cache: transform_cache.used
  )
  tuning: Optional[list] = None  # TFX's tuner_results.json: finished trials, best first
  blessed: Optional[bool] = None
  missed_classes: Optional[Dict[str, dict]] = None  # class name → {'examples', 'judged'}
  blessing: Optional[str] = None  # why (not) blessed
  predicts: Optional[str] = None  # a module file's model: what it was judged as predicting
  serving_check: Optional[dict] = None  # serving_check.json
  push: Optional[Push] = None
  inferred: Optional[dict] = None  # run --infer-data: predictions.csv, inputs, skipped files
  before_components_seconds: Optional[float] = None
  run_id: Optional[str] = None
  data_revision: Optional[dict] = None  # data_revisions/revision.py's data_* properties
  why_executed: Optional[Dict[str, str]] = None  # component id → why the cache had nothing
  input_damage: Optional[dict] = None  # a damaged TFRecord --data read through intact copies
  log: Optional[str] = None
  error: Optional[str] = None
  interrupted: bool = False
  stop_signal: Optional[str] = None  # what interrupted it: 'SIGINT' (Ctrl-C) or 'SIGTERM'
  not_started: bool = False  # interrupted before the first component
  unusable_data: Optional[bool] = None
  anomalies_stop: Optional[bool] = None
  report: Optional[str] = None  # report.html's path; '' when writing it failed
  runs_page: Optional[str] = None  # runs.html's path (every run of the output); '' not written
  report_seconds: Optional[float] = None  # writing it, after process_seconds was taken
  process_seconds: Optional[float] = None  # the whole command's time
  unchanged: Optional[dict] = None  # {'seconds'}: nothing ran, this is an earlier run's result

  @property
  def eval_accuracy(self) -> Optional[float]:
    return self.evaluation.accuracy if self.evaluation else None

  @property
  def regression(self) -> Dict[str, float]:
    """The regression figures on the eval split by name; {} for a classifier."""
    return self.evaluation.figures if self.evaluation else {}

  @property
  def class_recall(self) -> Dict[str, Optional[float]]:
    return self.evaluation.class_recall if self.evaluation else {}

  @property
  def pushed_to(self) -> Optional[str]:
    return self.push.destination if self.push else None

  def to_json(self) -> dict:
    """The JSON object of `last_run.json`."""
    found = {}
    for field in dataclasses.fields(self):
      value = getattr(self, field.name)
      if field.name not in _NESTED_OR_FLAGS and value is not None:
        found[field.name] = value
    if self.evaluation is not None:
      found.update(
        eval_accuracy=self.evaluation.accuracy,
        serving_accuracy=self.evaluation.serving_accuracy,
        class_recall=self.evaluation.class_recall,
      )
      if self.evaluation.figures:
        found['regression'] = self.evaluation.figures
      if self.evaluation.serving_figures:
        found['serving_regression'] = self.evaluation.serving_figures
    if self.push is not None:
      found['pushed_to'] = self.push.destination
      if self.push.already_serving:
        found['already_serving'] = self.push.already_serving
    if self.report is not None:
      found['report'] = self.report or None
    found.update({flag: True for flag in ('interrupted', 'not_started') if getattr(self, flag)})
    return found

  @classmethod
  def from_json(cls, found: dict) -> 'RunResult':
    """The result `to_json` wrote (keys it does not know, from another version, left out)."""
    plain = {
      field.name: found[field.name]
      for field in dataclasses.fields(cls)
      if field.name not in _NESTED_OR_FLAGS and field.name in found
    }
    evaluation = (
      Evaluation(
        found.get('eval_accuracy'),
        found.get('serving_accuracy'),
        found['class_recall'],
        found.get('regression') or {},
        found.get('serving_regression') or {},
      )
      if 'class_recall' in found
      else None
    )
    push = Push(found['pushed_to'], found.get('already_serving')) if 'pushed_to' in found else None
    return cls(
      **plain,
      evaluation=evaluation,
      push=push,
      report=(found['report'] or '') if 'report' in found else None,
      interrupted=bool(found.get('interrupted')),
      not_started=bool(found.get('not_started')),
    )

  def write(self, path: str) -> None:
    """`last_run.json`."""
    atomic.write(path, json.dumps(self.to_json(), indent=2))
