"""TFX Tuner entry point, referenced as `tuner_fn='trainer.tuning.tuner_fn'`: KerasTuner's random
search over the model file's search_space(hp), every trial trained for --tune-steps on the
input the Trainer reads (trainer/setup.prepare_input), scored on the eval split.

custom_config is a contracts.trainer_options.TunerOptions: the Trainer's options and max_trials. TFX's Tuner
executor writes the best trial's values (best_hyperparameters.txt, which the Trainer trains
with) and every finished trial with its score (tuner_results.json, which the summary and the
run report show). A model with a pretrained backbone is tuned in its first phase (head only).
"""

import contextlib
import io
import logging
import tempfile

import keras
import keras_tuner
from tfx.components.trainer.fn_args_utils import FnArgs
from tfx.components.tuner.component import TunerFnResult

from contracts.trainer_options import TunerOptions
from trainer import distribution, fine_tune, model, setup, task, trees

OBJECTIVE = 'val_sparse_categorical_accuracy'
# Regression: the validation loss, minimised (keras_tuner reads the direction from the name).
REGRESSION_OBJECTIVE = 'val_loss'
SEED = 0  # the same trials for the same inputs: a rerun is served from TFX's cache anyway


class RandomSearch(keras_tuner.RandomSearch):
  """KerasTuner's random search whose summaries, which it prints, go to the run's log."""

  def search_space_summary(self, extended: bool = False) -> None:
    self._logged(super().search_space_summary, extended)

  def results_summary(self, num_trials: int = 10) -> None:
    self._logged(super().results_summary, num_trials)

  @staticmethod
  def _logged(summary, *args) -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
      summary(*args)
    logging.info('tuner: %s', printed.getvalue())


def tuner_fn(fn_args: FnArgs) -> TunerFnResult:
  options = TunerOptions.from_custom_config(fn_args.custom_config)
  plan = distribution.plan(options)
  keras.mixed_precision.set_global_policy(plan.mixed_precision)
  scratch = tempfile.mkdtemp(prefix='tuner-scratch-')  # removed with the run's temporary folder
  prepared = setup.prepare_input(fn_args, options, plan, scratch)
  ready = prepared.setup
  regression = getattr(ready.spec, 'regression', False)
  objective = REGRESSION_OBJECTIVE if regression else OBJECTIVE
  if model.model_name(options) == trees.NAME:
    search = trees.TreesSearch(fn_args, ready.spec, prepared.guard, objective, options, SEED)
    return TunerFnResult(tuner=search, fit_kwargs={})
  chosen = task.model_file(options, ready.spec, scratch)
  space = model.hyperparameters(chosen.module, chosen.name, options.learning_rate)
  loss = model.regression_loss(chosen.module, chosen.name, options.loss) if regression else ''

  def build(hp: keras_tuner.HyperParameters) -> keras.Model:
    trained = task.model_for(chosen, options, hp, fn_args.train_steps)
    first = trained.phases[0]
    fine_tune.prepare(trained.model, first)
    return model.compile_model(
      trained.model, hp.get(model.LEARNING_RATE), plan.jit_compile, options.xla is True, loss
    )

  build(space.copy())  # a model file that does not fit fails here, in one line, not per trial
  tuner = RandomSearch(
    build,
    objective=objective,
    max_trials=options.max_trials,
    hyperparameters=space,
    seed=SEED,
    directory=fn_args.working_dir,
    project_name='trials',
    overwrite=True,
  )
  return TunerFnResult(
    tuner=tuner,
    fit_kwargs=dict(
      x=ready.train,
      validation_data=ready.evaluation,
      steps_per_epoch=fn_args.train_steps,
      validation_steps=fn_args.eval_steps or None,
      epochs=1,
      verbose=0,
    ),
  )
