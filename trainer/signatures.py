"""Serving signatures saved with the model.

- serving_default(examples): serialized tf.Examples as written by the project's ExampleGen
  (or CSV/TFRecord columns; SequenceExamples for sequence models): what the Evaluator and batch
  scoring call. Image records of any size are fitted to the model's input; a tabular record's
  NaN or inf number is missing, as in training (tabular_input.parse_tabular).
- predict_image_bytes(image_bytes): JPEG/PNG bytes straight from a client (image models only).
- predict_columns(<one input per column>): raw feature values by column name (tabular models):
  numbers as float64 [B] (a list column [B, N]; NaN or inf: missing; exact for every int up to
  2**53, so that a logged request keeps a large id such as a census tract), categories as
  strings ('': missing); a missing value gets what training fed for one (the column's mean, '').
- predict_text(text): raw strings (text models): TextExampleGen's tokenizer and the train split's
  vocabulary are inside the model (trainer/text_tokens.py).
- transform_features(examples): the label the model is scored against (TFMA's preprocessing
  function), so that a float column such as `tips` is compared as `tips > threshold`.
- bulk_inference(examples): serving_default with class_names as [batch, 1], for TFX's
  BulkInferrer (contracts/serving.py says why).
Every prediction of a classifier returns class probabilities, the top class id and its name; of a
regression model, the predicted number (`prediction`, the model's standardized output scaled
back with the train split's mean and deviation). The class names are also saved as
assets/labels.txt (line i: class i) for clients that show the top k; a regression model saves
assets/task.txt.

They are traced without AutoGraph: they branch on Python values only (the spec's), so the
graphs are the same, and a Keras 3 model's own call is not converted either way (one that
branches on a tensor cannot be saved with AutoGraph on); what AutoGraph still did cost 0.4 s of
CPU in a cold process's save (docs/benchmarks.md).
"""

import dataclasses
import json
import os
from typing import Callable, Dict, List, Union

import keras
import tensorflow as tf

from contracts import image_record, serving
from records import image_codec
from trainer import image_input, sequence_input, tabular_input, text_tokens
from trainer.data_spec import ImageSpec, SequenceSpec, TabularSpec

_EXAMPLES = tf.TensorSpec([None], tf.string, name=serving.EXAMPLES_INPUT)


def _signature(input_signature: list):
  """The tf.function decorator of a serving signature."""
  return tf.function(input_signature=input_signature, autograph=False)


def _predictions(
  model: keras.Model, inputs, class_names: Union[List[str], 'Regression']
) -> Dict[str, tf.Tensor]:
  """A classifier's probabilities, top class id and name; with `Regression` in place of the
  class names, the model's number in the label's units."""
  probabilities = model(inputs, training=False)
  if isinstance(class_names, Regression):
    return {serving.PREDICTION: class_names.restored(probabilities)}
  class_ids = tf.argmax(probabilities, axis=-1)
  return {
    serving.PROBABILITIES: probabilities,
    serving.CLASS_IDS: class_ids,
    serving.CLASS_NAMES: tf.gather(tf.constant(class_names), class_ids),
  }


@dataclasses.dataclass(frozen=True)
class Regression:
  """In place of the class names: the model predicts the standardized label, given back in the
  label's units."""

  mean: float
  deviation: float

  def restored(self, standardized: tf.Tensor) -> tf.Tensor:
    """[B, 1] or [B] → float32 [B], in the label's units."""
    standardized = tf.reshape(tf.cast(standardized, tf.float64), [-1])
    return tf.cast(standardized * self.deviation + self.mean, tf.float32)


def image_signatures(model: keras.Model, spec: ImageSpec) -> Dict[str, Callable]:
  image_fields = {k: v for k, v in image_codec.parse_spec().items() if k != image_record.LABEL_KEY}

  @_signature([_EXAMPLES])
  def serve_examples(examples):
    parsed = tf.io.parse_example(examples, image_fields)
    return _predictions(model, image_input.decode_any_size(parsed, spec), spec.labels)

  @_signature([tf.TensorSpec([None], tf.string, name=serving.IMAGE_BYTES_INPUT)])
  def serve_image_bytes(image_bytes):
    # Client bytes are JPEG/PNG of any size, whatever the training shards held.
    any_size = dataclasses.replace(spec, encoding=image_record.ENCODED, uniform=False)
    return _predictions(model, image_input.decode_encoded(image_bytes, any_size), spec.labels)

  @_signature([_EXAMPLES])
  def transform_features(examples):
    label_spec = {image_record.LABEL_KEY: tf.io.FixedLenFeature([], tf.int64)}
    return {
      serving.EVAL_LABEL_KEY: tf.io.parse_example(examples, label_spec)[image_record.LABEL_KEY]
    }

  return {
    serving.SERVING_DEFAULT: serve_examples,
    serving.IMAGE_BYTES: serve_image_bytes,
    serving.TRANSFORM: transform_features,
  }


def tabular_signatures(model: keras.Model, spec: TabularSpec) -> Dict[str, Callable]:
  class_names = Regression(spec.label_mean, spec.label_std) if spec.regression else spec.class_names
  only_label = dataclasses.replace(  # regression: the label as it is, not standardized
    spec, numeric=[], categorical=[], integer=[], label_mean=0.0, label_std=1.0
  )

  @_signature([_EXAMPLES])
  def serve_examples(examples):
    features = tabular_input.parse_tabular(examples, spec, with_label=False)
    return _predictions(model, features, class_names)

  @_signature([_EXAMPLES])
  def transform_features(examples):
    _, label = tabular_input.parse_tabular(examples, only_label)
    return {serving.EVAL_LABEL_KEY: label}

  columns = {  # a list column: float64 [B, N]
    key: tf.TensorSpec(
      [None, spec.list_lengths[key]] if key in spec.list_lengths else [None],
      tf.float64 if key in spec.numeric else tf.string,
      name=name,
    )
    for key, name in _column_inputs(spec).items()
  }

  @_signature([columns])
  def serve_columns(values):
    features = {  # NaN or inf: missing, fed as the Trainer feeds a missing value (its mean)
      key: tf.cast(
        tf.where(
          ~tf.math.is_finite(value),
          tf.cast(_missing(key, spec), tf.float64),
          value,
        ),
        tf.float32,
      )
      if key in spec.numeric
      else value
      for key, value in values.items()
      if key not in spec.dates
    }
    features.update(tabular_input.date_inputs({key: values[key] for key in spec.dates}, spec))
    return _predictions(model, tabular_input.model_columns(features, spec), class_names)

  return {
    serving.SERVING_DEFAULT: serve_examples,
    serving.COLUMNS: serve_columns,
    serving.TRANSFORM: transform_features,
  }


def _missing(key: str, spec: TabularSpec) -> tf.Tensor:
  """A numeric column's missing value as the input pipeline feeds it (rounded for integers; a
  list column's: one per position, as floats)."""
  dtype = tf.int64 if key in spec.integer and key not in spec.list_lengths else tf.float64
  found = tabular_input.missing_value(key, dtype, spec)
  return tf.zeros([], dtype) if found is None else found


def _column_inputs(spec: TabularSpec) -> Dict[str, str]:
  """Column → its input name in predict_columns (contracts/serving.column_input), unique."""
  given = [key for key in spec.numeric if key not in spec.date_inputs]
  names = {key: serving.column_input(key) for key in given + spec.categorical + list(spec.dates)}
  clashes = [n for n in set(names.values()) if list(names.values()).count(n) > 1]
  if clashes:
    raise ValueError(
      f'columns {sorted(k for k, n in names.items() if n in clashes)} share the '
      f'input name {clashes[0]!r} in {serving.COLUMNS}: rename one of them'
    )
  return names


def sequence_signatures(model: keras.Model, spec: SequenceSpec) -> Dict[str, Callable]:

  @_signature([_EXAMPLES])
  def serve_examples(examples):
    tokens = sequence_input.parse_sequences(examples, spec, with_label=False)
    return _predictions(model, tokens.to_tensor(), spec.labels)

  @_signature([_EXAMPLES])
  def transform_features(examples):
    _, labels = sequence_input.parse_sequences(examples, spec)
    return {serving.EVAL_LABEL_KEY: labels}

  served = {serving.SERVING_DEFAULT: serve_examples, serving.TRANSFORM: transform_features}
  if spec.vocabulary:  # the text route: raw strings in
    model.text_vocabulary = text_tokens.vocabulary_table(spec.vocabulary)  # saved with the model

    @_signature([tf.TensorSpec([None], tf.string, name=serving.TEXT_INPUT)])
    def serve_text(text):
      ids = text_tokens.token_ids(text, model.text_vocabulary)[:, : sequence_input.MAX_LENGTH]
      return _predictions(model, ids.to_tensor(), spec.labels)

    served[serving.TEXT] = serve_text
  return served


def bulk_inference(serve_examples: Callable) -> Callable:
  """serve_examples's answer with CLASS_NAMES as [batch, 1] (serving.BULK_INFERENCE)."""

  @_signature([_EXAMPLES])
  def bulk(examples):
    outputs = dict(serve_examples(examples))
    for key in (serving.CLASS_NAMES, serving.PREDICTION):
      if key in outputs:
        outputs[key] = outputs[key][:, None]
    return outputs

  return bulk


def attach_assets(
  model: keras.Model,
  class_names: List[str],
  id_columns: List[str],
  scratch: str,
  regression: bool = False,
) -> None:
  """Saves `class_names` with the model as assets/CLASS_NAMES_ASSET, the data's id columns,
  if any, as assets/ID_COLUMNS_ASSET, and a regression model's task as assets/TASK_ASSET
  (written under scratch)."""
  model.class_names_asset = _asset(class_names, os.path.join(scratch, serving.CLASS_NAMES_ASSET))
  if regression:
    model.task_asset = _asset(['regression'], os.path.join(scratch, serving.TASK_ASSET))
  if id_columns:
    model.id_columns_asset = _asset(id_columns, os.path.join(scratch, serving.ID_COLUMNS_ASSET))


def attach_columns(model: keras.Model, spec, scratch: str) -> None:
  """Saves, for a tabular model, the columns it parses and their dtypes as
  assets/COLUMNS_ASSET: the Evaluator scores a serving model on new data only when the data holds
  them (components/blessing_evaluator/comparable.py); a list column's dtype says its length
  (`float32[64]`)."""
  if isinstance(spec, TabularSpec):
    lists = spec.list_lengths
    parsed = {
      key: feature.dtype.name + (f'[{lists[key]}]' if key in lists else '')
      for key, feature in spec.parse_spec().items()
    }
    path = os.path.join(scratch, serving.COLUMNS_ASSET)
    model.columns_asset = _asset([json.dumps(parsed, sort_keys=True)], path)


def _asset(lines: List[str], path: str) -> tf.saved_model.Asset:
  with open(path, 'w', encoding='utf-8') as f:
    f.write(''.join(f'{line}\n' for line in lines))
  return tf.saved_model.Asset(path)
