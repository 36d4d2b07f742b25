"""A tiny regression SavedModel with the signatures trainer/signatures.py saves for one
(contracts/serving.py): prediction = 2 * fare + len(payment_type) (a missing fare: 0) from
serving_default (records), predict_columns (fare float64, payment_type string) and
bulk_inference ([batch, 1]); transform_features returns the label `tips`; assets/task.txt says
'regression' and assets/labels.txt is empty."""

import math
import os
from typing import Optional

from contracts import serving, trainer_options

LABEL = 'tips'


def expected(fare: Optional[float], payment_type: str = '') -> float:
  """What the model predicts for one row."""
  fare = 0.0 if fare is None or math.isnan(fare) else fare
  return 2 * fare + len(payment_type.encode())


def record(
  fare: Optional[float] = None, payment_type: Optional[str] = None, tips: Optional[float] = None
) -> bytes:
  """A serialized tf.Example with the given cells (None: absent)."""
  import tensorflow as tf

  example = tf.train.Example()
  for key, value in (('fare', fare), (LABEL, tips)):
    if value is not None:
      example.features.feature[key].float_list.value.append(value)
  if payment_type is not None:
    example.features.feature['payment_type'].bytes_list.value.append(payment_type.encode())
  return example.SerializeToString()


def save(folder: str) -> str:
  """Saves the model into `folder` (created); returns it."""
  import tensorflow as tf

  def number(fare, payment_type):
    fare = tf.where(tf.math.is_nan(fare), tf.zeros_like(fare), fare)
    return 2 * fare + tf.cast(tf.strings.length(payment_type), tf.float32)

  def parsed(examples, with_label=False):
    spec = {
      'fare': tf.io.FixedLenFeature([], tf.float32, default_value=math.nan),
      'payment_type': tf.io.FixedLenFeature([], tf.string, default_value=''),
    }
    if with_label:
      spec[LABEL] = tf.io.FixedLenFeature([], tf.float32, default_value=0.0)
    return tf.io.parse_example(examples, spec)

  examples_spec = tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)

  class Regression(tf.Module):
    @tf.function(input_signature=[examples_spec])
    def serve_examples(self, examples):
      features = parsed(examples)
      return {serving.PREDICTION: number(features['fare'], features['payment_type'])}

    @tf.function(input_signature=[examples_spec])
    def bulk(self, examples):
      return {serving.PREDICTION: self.serve_examples(examples)[serving.PREDICTION][:, None]}

    @tf.function(input_signature=[examples_spec])
    def transform(self, examples):
      return {serving.EVAL_LABEL_KEY: parsed(examples, with_label=True)[LABEL]}

    @tf.function(
      input_signature=[
        {
          'fare': tf.TensorSpec([None], tf.float64, name='fare'),
          'payment_type': tf.TensorSpec([None], tf.string, name='payment_type'),
        }
      ]
    )
    def columns(self, values):
      return {
        serving.PREDICTION: number(tf.cast(values['fare'], tf.float32), values['payment_type'])
      }

  module = Regression()
  return save_module(
    module,
    folder,
    {
      serving.SERVING_DEFAULT: module.serve_examples,
      serving.BULK_INFERENCE: module.bulk,
      serving.TRANSFORM: module.transform,
      serving.COLUMNS: module.columns,
    },
  )


def save_module(module, folder: str, signatures: dict) -> str:
  """Saves a tf.Module with `signatures` and a regression model's assets into `folder`."""
  import tensorflow as tf

  os.makedirs(folder, exist_ok=True)
  assets = os.path.join(folder, '..', f'{os.path.basename(folder)}-assets')
  os.makedirs(assets, exist_ok=True)
  for name, text in (
    (serving.TASK_ASSET, trainer_options.REGRESSION + '\n'),
    (serving.CLASS_NAMES_ASSET, ''),
  ):
    with open(os.path.join(assets, name), 'w') as f:
      f.write(text)
  module.task_asset = tf.saved_model.Asset(os.path.join(assets, serving.TASK_ASSET))
  module.class_names_asset = tf.saved_model.Asset(os.path.join(assets, serving.CLASS_NAMES_ASSET))
  tf.saved_model.save(module, folder, signatures=signatures)
  return folder
