"""TFX's Evaluator executor, with the run's values written into eval_config first (a
classifier's: the `min_accuracy` parameter and the candidate model's class ids,
eval_config.with_parameters; a regression model's (`task`): the train split's label figures from the
Trainer's training.json, eval_config.with_train_labels), and the project's rules around it:
- a serving model of another task than the candidate's (a classifier serving, a regression
  model trained, or the reverse) is not compared, and the blessing names its task (SERVING_TASK);
- a candidate that is the serving model itself (a cached model evaluated again after its push) is
  evaluated alone rather than against itself, and its blessing says so (CANDIDATE_IS_SERVING);
  so is one whose serving model cannot be scored on this data (comparable.py), its blessing
  saying why (NOT_COMPARED);
- a serving model whose class list (its saved class names, in order) is not the candidate's is
  not compared either: the eval split's labels are the candidate's class ids, which would score
  the serving model by the wrong classes; the candidate is judged on its own thresholds and the
  blessing names the serving model's classes (SERVING_CLASSES);
- a classifier that never predicts a class of the eval split is not blessed, where that class is
  judged (class_coverage.py), unless `allow_missed_classes` (MISSED_CLASSES on the blessing
  names the classes missed, UNEVALUATED_CLASSES those no eval example holds);
- no model is blessed on fewer eval examples than `min_eval_examples`, nor a classifier on fewer
  than `min_eval_class_examples` of one of its classes (eval_size.py; EVAL_TOO_SMALL on the
  blessing says what was too small).
"""

import json
import os
import shutil
import tempfile

from tensorflow.core.protobuf import saved_model_pb2
import tensorflow_model_analysis as tfma
from tfx.components.evaluator import constants
from tfx.components.evaluator import executor as evaluator_executor
from tfx.dsl.io import fileio
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import io_utils, path_utils, proto_utils

from components import beam_progress, read_examples
from components.blessing_evaluator import (
  class_coverage,
  comparable,
  eval_config,
  eval_size,
  user_model,
)
from contracts import artifacts, evaluation, serving, splits, trainer_options
from contracts.errors import UnusableModel
from utils import saved_model_ops

MODEL_RUN_KEY = 'model_run'  # the Trainer's ModelRun: its training.json (train_labels)
REGRESSION_CONFIG_KEY = 'regression_eval_config'  # a module file's model that regresses: its config
# The files in model_run holding the train labels' figures: the project's run_fn's, a module file's.
FILES_WITH_LABEL_FIGURES = (artifacts.TRAINING_FILE, artifacts.LABEL_FIGURES_FILE)
LABEL_KEY = 'label'  # the raw label column (a module file's model: what its label is read from)


def num_classes(saved_model_dir: str) -> int:
  """The width of serving_default's probabilities, read from saved_model.pb (no model load)."""
  saved = saved_model_pb2.SavedModel()
  with fileio.open(os.path.join(saved_model_dir, 'saved_model.pb'), 'rb') as f:
    saved.ParseFromString(f.read())
  signature = saved.meta_graphs[0].signature_def[serving.SERVING_DEFAULT]
  if serving.PROBABILITIES not in signature.outputs:  # a module file's model (user_model.py)
    return user_model.describe(saved_model_dir, '').classes
  return signature.outputs[serving.PROBABILITIES].tensor_shape.dim[-1].size


def class_list(saved_model_dir: str) -> list:
  """The model's class names in the order of its class ids (assets/labels.txt); the ids as
  text for a model saved without them."""
  return serving.class_names(saved_model_dir) or [
    str(i) for i in range(num_classes(saved_model_dir))
  ]


def withhold(blessing, reason: str, facts) -> None:
  """Turns a blessing into a refusal (as TFX's Evaluator writes one: the NOT_BLESSED file and the
  `blessed` property the Pusher reads), `facts` as JSON in its `reason` property (MISSED_CLASSES,
  EVAL_TOO_SMALL)."""
  blessed_file = os.path.join(blessing.uri, constants.BLESSED_FILE_NAME)
  if fileio.exists(blessed_file):
    fileio.remove(blessed_file)
  io_utils.write_string_file(os.path.join(blessing.uri, constants.NOT_BLESSED_FILE_NAME), '')
  blessing.set_int_custom_property(
    constants.ARTIFACT_PROPERTY_BLESSED_KEY, constants.NOT_BLESSED_VALUE
  )
  blessing.set_string_custom_property(reason, json.dumps(facts))


def eval_files(input_dict) -> list:
  """The shard files of the eval split TFMA reads (TFX's default example_splits)."""
  examples = input_dict[standard_component_specs.EXAMPLES_KEY]
  uri = artifact_utils.get_split_uri(examples, splits.EVAL)
  return sorted(fileio.glob(os.path.join(uri, '*')))


# training.json's label figures (trainer/label_figures.py) → regression_metrics.TRAIN_FIGURES.
_TRAIN_FIGURES = {
  'label_mean': 'train_mean',
  'label_median': 'train_median',
  'label_min': 'train_min',
  'label_max': 'train_max',
  'label_mape_floor': 'mape_floor',
}


def train_labels(input_dict) -> dict:
  """The train split's label figures the Trainer recorded in its model_run (training.json; a
  module file's run_fn: LABEL_FIGURES_FILE), by regression_metrics.TRAIN_FIGURES' names: what the
  baselines predict, the range predictions are held to, MAPE's floor; {} when it recorded none."""
  model_runs = input_dict.get(MODEL_RUN_KEY) or []
  paths = (
    [os.path.join(model_runs[0].uri, n) for n in FILES_WITH_LABEL_FIGURES] if model_runs else []
  )
  path = next((path for path in paths if fileio.exists(path)), '')
  if not path:
    return {}
  with fileio.open(path) as f:
    training = json.load(f)
  tail = training.get('label_tail') or {}  # judged on the ordinary rows, within its fences
  fences = {'train_low': tail['low'], 'train_high': tail['high']} if tail else {}
  return dict(
    {
      name: float(training[key])
      for key, name in _TRAIN_FIGURES.items()
      if training.get(key) is not None
    },
    **fences,
  )


def why_not_compared(model_dir: str, serving_dir: str, regression: bool) -> tuple:
  """(not_compared, serving_classes, serving_task): why the serving model cannot be compared with
  the candidate, first found first: its task (the other one's name), its class list (a
  classifier's, when not the candidate's), its columns (comparable.py's reason); ('', None, '')
  when it can."""
  if user_model.is_user_model(serving_dir) != user_model.is_user_model(model_dir):
    made = ('a module file', "the project's model contract")
    if not user_model.is_user_model(model_dir):
      made = made[::-1]
    return f'the serving model was made by {made[1]}, this one by {made[0]}', None, ''
  if serving.task(serving_dir) != serving.task(model_dir):
    return '', None, serving.task(serving_dir)
  if not regression and class_list(serving_dir) != class_list(model_dir):
    return '', class_list(serving_dir), ''
  return comparable.not_comparable(model_dir, serving_dir), None, ''


def _configured(input_dict, exec_properties, model_dir: str, regression: bool):
  """exec_properties with the run's values written into eval_config (a regression model's: the
  train split's label figures; a classifier's: min_accuracy and its class ids), and its classes
  (0 for a regression model)."""
  key = standard_component_specs.EVAL_CONFIG_KEY
  if regression:
    configured = eval_config.with_train_labels(exec_properties[key], train_labels(input_dict))
    return dict(exec_properties, **{key: configured}), 0
  classes = num_classes(model_dir)
  min_accuracy = exec_properties.get('min_accuracy')
  configured = eval_config.with_parameters(
    exec_properties[key], float(min_accuracy) if min_accuracy is not None else None, classes
  )
  return dict(exec_properties, **{key: configured}), classes


def user_configured(exec_properties, model: user_model.UserModel, regression: bool) -> dict:
  """exec_properties whose eval_config reads a module file's model as TFX's templates do: the
  classifier's config or, for a model that predicts a number, REGRESSION_CONFIG_KEY's."""
  key = standard_component_specs.EVAL_CONFIG_KEY
  built = exec_properties.get(REGRESSION_CONFIG_KEY) if regression else exec_properties[key]
  if not built:
    raise UnusableModel(
      "the module file's model predicts a number, and this pipeline's Evaluator was built "
      'without a regression configuration'
    )
  config = user_model.configured(proto_utils.json_to_proto(built, tfma.EvalConfig()), model)
  return dict(exec_properties, **{key: proto_utils.proto_to_json(config)})


def with_logits(exec_properties, user: user_model.UserModel, compared, regression: bool) -> dict:
  """exec_properties whose eval_config reads the one-wide logits of the candidate (`user`) and of
  the serving model it is compared with (`compared`: [] or [its Model], a module file's too) as
  logits."""
  logits = [evaluation.CANDIDATE] if user.logit(regression) else []
  for baseline in compared:
    serving_dir = path_utils.serving_model_path(baseline.uri)
    if user_model.describe(serving_dir, exec_properties.get(LABEL_KEY) or '').logit(regression):
      logits.append(evaluation.BASELINE)
  key = standard_component_specs.EVAL_CONFIG_KEY
  return dict(exec_properties, **{key: eval_config.with_logit_models(exec_properties[key], logits)})


def check_task(model_dir: str, regression: bool) -> None:
  """UnusableModel in one line when the model predicts what this Evaluator was not configured to
  judge (a pipeline compiled with --task auto on data compile could not read, whose label
  turned out to be a number)."""
  if (serving.task(model_dir) == trainer_options.REGRESSION) != regression:
    saved = serving.task(model_dir)
    raise UnusableModel(
      f"the Trainer made a {saved} model, but this pipeline's Evaluator judges "
      f'{"a number" if regression else "classes"}: compile it with --task {saved}'
    )


class Executor(evaluator_executor.Executor):
  def Do(self, input_dict, output_dict, exec_properties):
    # TFMA loads the models here (in_memory) or in Beam's workers
    self._beam_pipeline_args = saved_model_ops.with_beam_args(self._beam_pipeline_args)
    model = artifact_utils.get_single_instance(input_dict[standard_component_specs.MODEL_KEY])
    model_dir = path_utils.serving_model_path(model.uri)
    regression = exec_properties.get('task') == trainer_options.REGRESSION
    user = None
    if user_model.is_user_model(model_dir):  # --module-file: decided from the model itself
      user = user_model.describe(model_dir, exec_properties.get(LABEL_KEY) or '')
      regression = user.regression(regression)
      exec_properties = user_configured(exec_properties, user, regression)
    else:
      check_task(model_dir, regression)
    exec_properties, classes = _configured(input_dict, exec_properties, model_dir, regression)
    baselines = input_dict.get(standard_component_specs.BASELINE_MODEL_KEY) or []
    is_serving = any(baseline.uri == model.uri for baseline in baselines)
    not_compared, serving_classes, serving_task = (
      why_not_compared(model_dir, path_utils.serving_model_path(baselines[0].uri), regression)
      if baselines and not is_serving
      else ('', None, '')
    )
    if is_serving or not_compared or serving_classes is not None or serving_task:
      input_dict = dict(input_dict, **{standard_component_specs.BASELINE_MODEL_KEY: []})
    if user:
      compared = input_dict.get(standard_component_specs.BASELINE_MODEL_KEY) or []
      exec_properties = with_logits(exec_properties, user, compared[:1], regression)
    scratch = tempfile.mkdtemp(prefix='evaluator-salvaged-')
    try:
      examples = artifact_utils.get_single_instance(
        input_dict[standard_component_specs.EXAMPLES_KEY]
      )
      limit = exec_properties.get('max_damaged_percent')
      read = read_examples.readable(
        examples, eval_files(input_dict), limit, scratch, 'evaluation stopped'
      )
      input_dict = dict(input_dict, **{standard_component_specs.EXAMPLES_KEY: [read]})
      records = lambda: artifacts.record_count(eval_files(input_dict))
      # Not exact: TFMA's combiners count without a bundle's end to flush at.
      with beam_progress.watch(
        self, 'Evaluator', records, 'eval examples evaluated', exact=False, outputs=output_dict
      ):
        super().Do(input_dict, output_dict, exec_properties)
    finally:
      shutil.rmtree(scratch, ignore_errors=True)

    blessing = artifact_utils.get_single_instance(
      output_dict[standard_component_specs.BLESSING_KEY]
    )
    if is_serving:
      blessing.set_int_custom_property(evaluation.CANDIDATE_IS_SERVING, 1)
    if user:
      task = trainer_options.REGRESSION if regression else trainer_options.CLASSIFICATION
      blessing.set_string_custom_property(evaluation.MODEL_TASK, task)
      blessing.set_string_custom_property(evaluation.MODEL_LABEL, user.label_key)
      blessing.set_string_custom_property(evaluation.MODEL_READING, user.reading(regression))
    if not_compared:
      blessing.set_string_custom_property(evaluation.NOT_COMPARED, not_compared)
    if serving_classes is not None:
      blessing.set_string_custom_property(evaluation.SERVING_CLASSES, json.dumps(serving_classes))
    if serving_task:
      blessing.set_string_custom_property(evaluation.SERVING_TASK, serving_task)
    evaluated = artifact_utils.get_single_uri(output_dict[standard_component_specs.EVALUATION_KEY])
    sizes = None
    if not regression:
      rows = evaluation.confusion_rows(evaluated)
      _judge_classes(exec_properties, blessing, rows, classes)
      sizes = eval_size.class_sizes(rows, classes)
    judge_size(exec_properties, blessing, evaluation.example_count(evaluated), sizes)


def judge_size(exec_properties, blessing, examples: int, class_sizes) -> None:
  """The size rule: an eval split with fewer examples than min_eval_examples, or (class_sizes: a
  classifier's, per class id) fewer of a class than min_eval_class_examples, withholds the
  blessing; what was too small is named on it either way."""
  small = eval_size.too_small(
    examples,
    int(exec_properties.get('min_eval_examples') or 0),
    class_sizes,
    int(exec_properties.get('min_eval_class_examples') or 0),
  )
  if small is None:
    return
  if blessing.get_int_custom_property(constants.ARTIFACT_PROPERTY_BLESSED_KEY):
    withhold(blessing, evaluation.EVAL_TOO_SMALL, small)
  else:
    blessing.set_string_custom_property(evaluation.EVAL_TOO_SMALL, json.dumps(small))


def _judge_classes(exec_properties, blessing, rows, classes: int) -> None:
  """The class rule on a classifier's evaluation (rows: its confusion matrix): a judged class
  never predicted withholds the blessing unless allow_missed_classes; the classes missed and
  unevaluated named on it."""
  missed = class_coverage.missed_classes(rows)
  unevaluated = class_coverage.unevaluated_classes(rows, classes) if rows else []
  if unevaluated:
    blessing.set_string_custom_property(evaluation.UNEVALUATED_CLASSES, json.dumps(unevaluated))
  blessed = blessing.get_int_custom_property(constants.ARTIFACT_PROPERTY_BLESSED_KEY)
  if missed and blessed == constants.BLESSED_VALUE:
    judged = any(c['judged'] for c in missed)
    if judged and not exec_properties.get('allow_missed_classes'):
      withhold(blessing, evaluation.MISSED_CLASSES, missed)
    else:
      blessing.set_string_custom_property(evaluation.MISSED_CLASSES, json.dumps(missed))
