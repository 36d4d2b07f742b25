"""BlessingEvaluator: min_accuracy is a parameter of its own and the class ids come from the
model; both are written into eval_config by the executor (eval_config.with_parameters)."""

import json

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_model_analysis as tfma
from tfx.orchestration.data_types import RuntimeParameter
from tfx.types import standard_artifacts
from tfx.types.channel import Channel
from tfx.utils import proto_utils

from components.blessing_evaluator import (
  class_coverage,
  comparable,
  eval_config,
  eval_size,
  executor,
)
from components.blessing_evaluator.component import BlessingEvaluator
from contracts import evaluation, serving


def _folded(built: tfma.EvalConfig, min_accuracy, classes: int) -> tfma.EvalConfig:
  json_config = eval_config.with_parameters(proto_utils.proto_to_json(built), min_accuracy, classes)
  return proto_utils.json_to_proto(json_config, tfma.EvalConfig())


def _metric(config: tfma.EvalConfig, class_name: str):
  (found,) = [m for s in config.metrics_specs for m in s.metrics if m.class_name == class_name]
  return found


def test_thresholds_hold_on_the_whole_eval_split_only():
  built = eval_config.build(0.9, 0.01, min_class_recall=0.5, slice_features=['payment_type'])
  assert [list(s.feature_keys) for s in built.slicing_specs] == [[], ['payment_type']]
  for class_name in (evaluation.ACCURACY_METRIC, evaluation.RECALL_METRIC):
    metric = _metric(built, class_name)
    assert not metric.HasField('threshold')
    (per_slice,) = metric.per_slice_thresholds
    assert list(per_slice.slicing_specs) == [tfma.SlicingSpec()]
  recall = _metric(built, evaluation.RECALL_METRIC).per_slice_thresholds[0].threshold
  assert recall.value_threshold.lower_bound.value == 0.5
  assert not _metric(eval_config.build(0.9, 0.01), evaluation.RECALL_METRIC).per_slice_thresholds
  tfma.utils.verify_eval_config(built)


def test_the_run_sets_min_accuracy_and_the_class_ids():
  folded = _folded(eval_config.build(0.9, 0.02), 0.25, classes=3)
  accuracy = _metric(folded, evaluation.ACCURACY_METRIC).per_slice_thresholds[0].threshold
  assert accuracy.value_threshold.lower_bound.value == 0.25
  assert accuracy.change_threshold.absolute.value == -0.02  # not touched
  per_class = [s for s in folded.metrics_specs if s.HasField('binarize')]
  assert [list(s.binarize.class_ids.values) for s in per_class] == [[0, 1, 2]]
  unchanged = _folded(eval_config.build(0.9, 0.02), None, classes=2)
  lower_bound = _metric(unchanged, evaluation.ACCURACY_METRIC).per_slice_thresholds[0]
  assert lower_bound.threshold.value_threshold.lower_bound.value == 0.9


def test_the_class_count_is_read_from_the_saved_signature(tmp_path):
  class Five(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def serve(self, x):
      return {serving.PROBABILITIES: tf.nn.softmax(tf.concat([x, x, x[:, :1]], axis=1))}

  model = Five()
  tf.saved_model.save(model, str(tmp_path), signatures={'serving_default': model.serve})
  assert executor.num_classes(str(tmp_path)) == 5


def test_min_accuracy_is_a_whole_parameter_a_compiled_spec_can_expose():
  examples = Channel(type=standard_artifacts.Examples)
  model = Channel(type=standard_artifacts.Model)
  parameter = RuntimeParameter(name='min_accuracy', ptype=float, default=0.9)
  evaluator = BlessingEvaluator(
    examples, model, None, eval_config.build(0.9, 0.01), parameter, 'fp'
  )
  assert evaluator.exec_properties['min_accuracy'] is parameter
  assert json.loads(evaluator.exec_properties['eval_config'])['metrics_specs']
  assert set(evaluator.outputs) == {'evaluation', 'blessing'}


def test_a_class_with_eval_examples_none_predicted_as_it_is_missed():
  rows = {  # true class: {predicted class: examples}; -1: a label the model has no class for
    0: {0: 190.0, 2: 4.0},
    1: {0: 6.0},  # the minority class, always answered as the majority
    2: {2: 3.0, 0: 1.0},
    -1: {0: 2.0},
  }
  assert class_coverage.missed_classes(rows) == [{'class_id': 1, 'examples': 6, 'judged': True}]
  assert class_coverage.missed_classes({0: {0: 5.0}, 1: {1: 1.0, 0: 9.0}}) == []


def test_one_missed_example_is_judged_only_for_a_minority_class():
  balanced = {0: {0: 4.0}, 1: {0: 1.0}, 2: {2: 3.0}}  # a tiny eval split: 1 example of class 1
  assert class_coverage.missed_classes(balanced) == [
    {'class_id': 1, 'examples': 1, 'judged': False}
  ]
  rare = {0: {0: 198.0}, 1: {0: 2.0}}  # 990:10 labels: 2 of the 10 in the eval split
  assert class_coverage.missed_classes(rare) == [{'class_id': 1, 'examples': 2, 'judged': True}]


def test_a_missed_class_withholds_a_blessing_as_the_evaluator_writes_one(tmp_path):
  from tfx.components.evaluator import constants

  blessing = standard_artifacts.ModelBlessing()
  blessing.uri = str(tmp_path)
  (tmp_path / constants.BLESSED_FILE_NAME).write_text('')
  blessing.set_int_custom_property(constants.ARTIFACT_PROPERTY_BLESSED_KEY, 1)
  executor.withhold(blessing, evaluation.MISSED_CLASSES, [{'class_id': 1, 'examples': 6}])
  assert sorted(p.name for p in tmp_path.iterdir()) == [constants.NOT_BLESSED_FILE_NAME]
  assert blessing.get_int_custom_property(constants.ARTIFACT_PROPERTY_BLESSED_KEY) == 0
  assert json.loads(blessing.get_string_custom_property(evaluation.MISSED_CLASSES)) == [
    {'class_id': 1, 'examples': 6}
  ]


def test_an_eval_split_below_the_minimum_sizes_is_too_small():
  # issue 59: --eval-percent 1 on 300 rows left 5 eval rows, accuracy 1.0, pushed
  assert eval_size.too_small(5, 30) == {'examples': 5, 'min_examples': 30}
  assert eval_size.too_small(30, 30) is None and eval_size.too_small(5, 0) is None
  rows = {0: {0: 40.0}, 1: {1: 3.0, 0: 1.0}, -1: {0: 2.0}}  # class 2 of the model: none
  sizes = eval_size.class_sizes(rows, 3)
  assert sizes == {0: 40.0, 1: 4.0, 2: 0}
  assert eval_size.too_small(46, 30, sizes, 5) == {
    'examples': 46,
    'min_examples': 30,
    'classes': [{'class_id': 1, 'examples': 4}, {'class_id': 2, 'examples': 0}],
    'min_class_examples': 5,
  }
  assert eval_size.too_small(46, 30, sizes, 4)['classes'] == [{'class_id': 2, 'examples': 0}]
  assert eval_size.too_small(46, 30, sizes, 0) is None  # not checked
  assert eval_size.too_small(46, 30, None, 5) is None  # a regression model: overall only


def _blessing(tmp_path, blessed: bool):
  from tfx.components.evaluator import constants

  blessing = standard_artifacts.ModelBlessing()
  blessing.uri = str(tmp_path)
  tmp_path.mkdir()
  name = constants.BLESSED_FILE_NAME if blessed else constants.NOT_BLESSED_FILE_NAME
  (tmp_path / name).write_text('')
  blessing.set_int_custom_property(constants.ARTIFACT_PROPERTY_BLESSED_KEY, int(blessed))
  return blessing


def test_a_blessing_on_too_few_eval_examples_is_withheld_and_says_what_was_too_few(tmp_path):
  from tfx.components.evaluator import constants

  limits = {'min_eval_examples': 30, 'min_eval_class_examples': 5}
  blessed = _blessing(tmp_path / 'a', True)
  executor.judge_size(limits, blessed, 5, {0: 3.0, 1: 2.0})
  assert blessed.get_int_custom_property(constants.ARTIFACT_PROPERTY_BLESSED_KEY) == 0
  assert [p.name for p in (tmp_path / 'a').iterdir()] == [constants.NOT_BLESSED_FILE_NAME]
  small = json.loads(blessed.get_string_custom_property(evaluation.EVAL_TOO_SMALL))
  assert small['examples'] == 5 and [c['class_id'] for c in small['classes']] == [0, 1]
  enough = _blessing(tmp_path / 'b', True)
  executor.judge_size(limits, enough, 300, {0: 150.0, 1: 150.0})
  assert enough.get_int_custom_property(constants.ARTIFACT_PROPERTY_BLESSED_KEY) == 1
  assert not enough.has_custom_property(evaluation.EVAL_TOO_SMALL)
  executor.judge_size({}, enough, 5, None)  # an older compiled spec: not checked
  assert enough.get_int_custom_property(constants.ARTIFACT_PROPERTY_BLESSED_KEY) == 1
  refused = _blessing(tmp_path / 'c', False)  # by TFMA: the size is named all the same
  executor.judge_size(limits, refused, 5, None)
  assert json.loads(refused.get_string_custom_property(evaluation.EVAL_TOO_SMALL)) == {
    'examples': 5,
    'min_examples': 30,
  }


def _derived_values(metric, sub_keys, examples) -> dict:
  """{key name or (name, class id): value} of a top_class_metrics metric on `examples`, through
  its TFMA computations (the confusion matrix's combiner, then the derived result)."""
  from tensorflow_model_analysis.metrics import metric_types

  computations = metric.computations(sub_keys=sub_keys)
  combiner = computations[0].combiner
  accumulator = combiner.create_accumulator()
  for labels, predictions in examples:
    accumulator = combiner.add_input(
      accumulator,
      metric_types.StandardMetricInputs(
        labels=np.array([labels]),
        predictions=np.array(predictions),
        example_weights=np.array([1.0]),
      ),
    )
  computed = combiner.extract_output(accumulator)
  values = {}
  for derived in computations[1:]:
    if isinstance(derived, metric_types.DerivedMetricComputation):
      for key, value in derived.result(computed).items():
        values[(key.name, key.sub_key.class_id) if key.sub_key else key.name] = value
  return values


def test_derived_metrics_equal_keras_accuracy_and_top_class_recall_and_precision():
  from sklearn.metrics import precision_score, recall_score
  from tensorflow_model_analysis.metrics import metric_types

  from components.blessing_evaluator import top_class_metrics

  rng = np.random.default_rng(3)
  labels = rng.integers(0, 3, 200)
  predictions = rng.dirichlet(np.ones(3), 200)
  predictions[labels == 2, 2] += 0.5  # class 2 mostly right, the others by chance
  predictions /= predictions.sum(axis=1, keepdims=True)
  examples = list(zip(labels, predictions))
  top = predictions.argmax(axis=1)
  sub_keys = [metric_types.SubKey(class_id=c) for c in range(3)]

  accuracy = _derived_values(top_class_metrics.TopClassAccuracy(), None, examples)
  keras = tf.keras.metrics.SparseCategoricalAccuracy()
  keras.update_state(labels, predictions)
  assert accuracy == {evaluation.ACCURACY_KEY: pytest.approx(float(keras.result()))}
  recall = _derived_values(top_class_metrics.TopClassRecall(), sub_keys, examples)
  precision = _derived_values(top_class_metrics.TopClassPrecision(), sub_keys, examples)
  for c, (r, p) in enumerate(
    zip(recall_score(labels, top, average=None), precision_score(labels, top, average=None))
  ):
    assert recall[(evaluation.RECALL_KEY, c)] == pytest.approx(r)
    assert precision[(evaluation.PRECISION_KEY, c)] == pytest.approx(p)
  assert recall[(evaluation.RECALL_KEY, 2)] > 0.8 > recall[(evaluation.RECALL_KEY, 0)]
  missing = _derived_values(
    top_class_metrics.TopClassRecall(), [metric_types.SubKey(class_id=5)], examples
  )
  assert np.isnan(missing[(evaluation.RECALL_KEY, 5)])  # no example of class 5: no recall


def test_progress_counts_the_candidates_examples_only():
  import os

  from components.blessing_evaluator import top_class_metrics
  from utils import progress

  with progress.CountsProgress('Evaluator', 9, lambda *_: '') as watch:
    for model in (evaluation.CANDIDATE, '', evaluation.BASELINE):  # '': no baseline in the config
      top_class_metrics.counted_label_prediction_and_weight(
        {'labels': np.array([1]), 'predictions': np.array([[0.2, 0.8]])}, model_name=model
      )
    progress.flush()
    assert watch.done() == 2, os.listdir(os.environ[progress.COUNTS_ENV])


def test_a_class_of_the_model_without_eval_examples_is_unevaluated():
  rows = {0: {0: 9.0}, 1: {1: 3.0, 0: 1.0}, -1: {0: 1.0}}  # class 2 is the model's, no eval row
  assert class_coverage.unevaluated_classes(rows, 3) == [2]
  assert class_coverage.unevaluated_classes({**rows, 2: {0: 0.0}}, 3) == [2]
  assert class_coverage.unevaluated_classes(rows, 2) == []


def _saved_columns(folder, columns=None) -> str:
  """A SavedModel folder holding only its columns asset (none when columns is None)."""
  (folder / 'assets').mkdir(parents=True)
  if columns is not None:
    (folder / 'assets' / serving.COLUMNS_ASSET).write_text(json.dumps(columns))
  return str(folder)


def test_a_serving_model_of_other_columns_is_not_comparable(tmp_path):
  served = _saved_columns(
    tmp_path / 'serving', {'x': 'float32', 'y': 'float32', 'n': 'int64', 'label': 'int64'}
  )
  same_and_more = _saved_columns(
    tmp_path / 'more',
    {'x': 'float32', 'y': 'float32', 'n': 'int64', 'label': 'int64', 'z': 'string'},
  )
  assert comparable.not_comparable(same_and_more, served) == ''  # extra columns: it reads its own
  other = _saved_columns(
    tmp_path / 'other', {'x': 'string', 'n': 'float32', 'colour': 'string', 'label': 'int64'}
  )
  assert comparable.not_comparable(other, served) == (
    'trained on other columns: it reads y, not in this data; n (int64, here float32), '
    'x (float32, here string) of another type; new here: colour'
  )
  unknown = _saved_columns(tmp_path / 'before', None)  # saved before columns were: not judged
  assert comparable.not_comparable(other, unknown) == ''
  assert comparable.not_comparable(unknown, served) == ''


def test_a_model_s_class_list_is_its_saved_names_else_its_class_ids(tmp_path):
  class Two(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def serve(self, x):
      return {serving.PROBABILITIES: tf.nn.softmax(x)}

  model = Two()
  tf.saved_model.save(model, str(tmp_path / 'ids'), signatures={'serving_default': model.serve})
  assert executor.class_list(str(tmp_path / 'ids')) == ['0', '1']
  (tmp_path / 'labels.txt').write_text('cat\ndog\n')
  model.class_names_asset = tf.saved_model.Asset(str(tmp_path / 'labels.txt'))
  tf.saved_model.save(model, str(tmp_path / 'names'), signatures={'serving_default': model.serve})
  assert executor.class_list(str(tmp_path / 'names')) == ['cat', 'dog']
