"""The model's answers on the first eval records, gathered for the run report
(report_facts.ReportFacts.eval_predictions) so that reporting/ draws them and reads no TFRecords
or models itself: image data's first eval records and the candidate's top class for each (the
sample grid, the misclassified images); a regression model's predictions and the labels they are
scored against (the predictions chart), as model_answers.py reads them."""

import os
from typing import List, NamedTuple, Optional

import numpy as np

from metadata import model_answers

MAX_PREDICTED = 512  # eval records the model is asked about


class EvalPredictions(NamedTuple):
  records: List[bytes]  # image data: the first MAX_PREDICTED serialized eval records; else []
  class_ids: Optional[List[int]]  # image data: the candidate's top class of each record
  predicted: Optional[np.ndarray]  # regression: serving_default's number on the first records
  actual: Optional[np.ndarray]  # regression: the label each is scored against


NONE = EvalPredictions([], None, None, None)


def first_eval_records(examples_uri: str, limit: int = MAX_PREDICTED) -> list:
  """The first `limit` serialized eval records, in shard order."""
  import tensorflow as tf

  shards = sorted(tf.io.gfile.glob(os.path.join(examples_uri, 'Split-eval', '*')))
  if not shards:
    return []
  compression = 'GZIP' if shards[0].endswith('.gz') else ''
  return [
    r.numpy() for r in tf.data.TFRecordDataset(shards, compression_type=compression).take(limit)
  ]


def class_ids(model_dir: str, records: list) -> List[int]:
  """The classifier's top class (serving_default's CLASS_IDS) of each serialized record."""
  answers = model_answers.load(model_dir, regression=False)
  return [int(i) for i in model_answers.predicted(answers, records)]


def gather(
  examples_uri: Optional[str],
  model_dir: Optional[str],
  image_data: bool,
  regression: bool,
  evaluated: bool,
  label: str,
) -> EvalPredictions:
  """What the report draws of the eval split: image data's first records (with the candidate's
  classes once it was `evaluated`), a regression model's predictions; NONE for neither."""
  if not examples_uri or not (image_data or regression):
    return NONE
  records = first_eval_records(examples_uri)
  if not records:
    return NONE
  if image_data:
    classes = class_ids(model_dir, records) if model_dir and evaluated else None
    return EvalPredictions(records, classes, None, None)
  if not model_dir:
    return NONE
  scored = model_answers.scored(model_dir, records, True, label)
  if scored is None:  # a module file's model without its label's transformed output
    return NONE
  return EvalPredictions([], None, *scored)
