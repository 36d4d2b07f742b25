"""The model's answers on the first eval records, gathered for the run report
(report_facts.ReportFacts.eval_predictions) so that reporting/ draws them and reads no TFRecords
or models itself: image data's first eval records and the candidate's top class for each (the
sample grid, the misclassified images); a regression model's predictions and the labels they are
scored against (the predictions chart)."""

import os
from typing import List, NamedTuple, Optional

import numpy as np

from contracts import serving
from utils import saved_model_ops

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
  import tensorflow as tf

  serve = saved_model_ops.load(model_dir).signatures[serving.SERVING_DEFAULT]
  return [int(i) for i in serve(examples=tf.constant(records))[serving.CLASS_IDS].numpy()]


def predicted_and_actual(model_dir: str, records: list, label: str = ''):
  """(predicted, actual): float arrays of a regression model's PREDICTION (its serving_default
  signature) and the label it is scored against (its TRANSFORM signature's EVAL_LABEL_KEY, as
  TFMA reads it) on serialized eval records; label units. A module file's model: its only
  output, and the raw `label`'s transformed output (serving.transformed_label)."""
  import tensorflow as tf

  signatures = saved_model_ops.load(model_dir).signatures  # a --model gbt model: TF-DF's op
  examples = tf.constant(records)
  answers = signatures[serving.SERVING_DEFAULT](examples=examples)
  predicted = answers.get(serving.PREDICTION, answers[sorted(answers)[0]])
  labels = signatures[serving.TRANSFORM](examples=examples)
  actual = labels.get(serving.EVAL_LABEL_KEY)
  if actual is None:
    actual = labels[serving.transformed_label(labels, label)]
  return (
    np.reshape(predicted.numpy(), [-1]).astype(float),
    np.reshape(actual.numpy(), [-1]).astype(float),
  )


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
  predicted, actual = predicted_and_actual(model_dir, records, label)
  return EvalPredictions([], None, predicted, actual)
