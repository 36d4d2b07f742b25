"""The summary's push line for a model already serving, and other lines of its own."""

import config as cfg
from contracts import input_check
from metadata import report_facts
from metadata.run_result import Push, RunResult
from reporting import report, summary_text


def test_a_model_already_serving_is_not_pushed_again_and_says_where_it_serves():
  result = RunResult(wall_seconds=1.0, push=Push(already_serving='/o/serving/17'))
  lines = summary_text.render(result)
  assert 'pushed to:  not again: already serving as /o/serving/17' in lines
  assert 'pushed to:  not pushed' in summary_text.render(RunResult(wall_seconds=1.0, push=Push()))


def test_id_columns_found_in_the_data_are_one_warning_line_that_names_them_and_the_flag():
  lines = summary_text.render(RunResult(wall_seconds=1.0, id_columns=['record_id', 'serial']))
  said = [line for line in lines if 'record_id' in line]
  assert len(said) == 1 and said[0].startswith('warning:')
  assert 'record_id, serial' in said[0] and '--id-column' in said[0] and '\n' not in said[0]
  assert not any('row id' in line for line in summary_text.render(RunResult(wall_seconds=1.0)))


def test_the_report_shows_the_summarys_wall_time_not_the_components_alone(tmp_path):
  result = RunResult(wall_seconds=21.3, process_seconds=28.3, before_components_seconds=7.0)
  config = cfg.PipelineConfig(data=str(tmp_path / 'a.csv'), data_kind=cfg.CSV, output=str(tmp_path))
  facts = report_facts.gather({}, result, config.metadata_path, config.label)  # no artifacts
  page = report.render(facts, config)
  shown = summary_text.render_wall(result)
  assert shown.startswith('28.3 s') and f'<td>{shown}</td>' in page
  assert f'wall time:  {shown}' in summary_text.render(result)
  result.report, result.report_seconds = '/out/report.html', 2.4  # written after the figure
  assert 'report:     /out/report.html (written in 2.4 s after)' in summary_text.render(result)


def test_the_input_check_line_leads_with_the_verdict_its_figures_give():
  figures = {'input_examples_per_second': 310639.0, 'step_seconds': 64 / 8769}
  check = dict(figures, stall_fraction=0.083)  # the default run's: a paced consumer waited
  verdict = input_check.of_check(check, 64).headline
  line = summary_text.render_input_check({'verdict': verdict, 'stall_fraction': 0.083})
  assert line == (
    'not input-bound: the input alone delivers 35.4x what the step takes; '
    'training waited for input 8.3% of the time'
  )


def _facts(**given) -> dict:
  facts = dict.fromkeys(('duplicates', 'near_duplicate_groups', 'label_conflicts'), 0)
  facts.update(across_splits=0, conflicts_kept=False, conflicts=[], across=[], report='d.json')
  return {**facts, **given}


def test_an_image_run_says_which_near_copies_it_does_not_catch_found_or_not():
  assert summary_text.render_duplicates(_facts()) == []  # rows: no near-copy check
  alone = summary_text.render_duplicates(_facts(near_copies_checked=True))
  assert alone == ['duplicates: ' + summary_text.NEAR_COPIES_MEASURED]
  assert 'not caught: crops of 5 % or more' in alone[0]
  found = summary_text.render_duplicates(_facts(near_duplicate_groups=2, near_copies_checked=True))
  assert found[0].startswith('duplicates: 2 group(s) of near-duplicate images')
  assert found[1] == ' ' * 12 + summary_text.NEAR_COPIES_MEASURED


def test_a_tables_label_is_said_before_the_model_and_an_images_is_not():
  training = {'model': 'mlp', 'hyperparameters': {'units': 64}}
  said = summary_text.render_training({**training, 'label': 'tips > 0 as two classes (x)'})
  assert said[0] == 'label:      tips > 0 as two classes (x)' and said[1].startswith('model: ')
  assert [line[:6] for line in summary_text.render_training(training)] == ['model:']
  note = "'lot_code' 100.0% right alone on 24 eval rows (fewer than 100: not judged); …"
  said = summary_text.render_training({**training, 'label': 'x as classes', 'leakage': note})
  assert said[1] == f'leakage?    {note}'  # trainer/leakage.unjudged: named, not silent


def test_the_columns_read_as_dates_are_said_after_the_label():
  dated = {'model': 'mlp', 'hyperparameters': {}, 'label': 'y', 'dates': "'d' (ISO, …) read as"}
  said = summary_text.render_training(dated)
  assert said[1] == "dates:      'd' (ISO, …) read as" and said[2].startswith('model: ')


def test_conflicts_too_many_for_mislabelled_copies_are_said_to_be_a_noisy_label():
  facts = dict(
    duplicates=0, near_duplicate_groups=0, label_conflicts=9909, across_splits=0, report='d.json'
  )
  facts['conflicts'] = [{'row': 'fare.csv: trip_miles=0', 'label': '1'}]
  noisy = summary_text.render_duplicates({**facts, 'conflicts_kept': True, 'label_noisy': True})
  assert noisy[0] == (
    'duplicates: 9909 example(s) whose content is filed under two labels, kept, each set in one '
    'split: too many for mislabelled copies (over 2% of the examples), so the label is noisy for '
    'these features: fare.csv: trip_miles=0 (1) and 9908 more (see d.json)'
  )
  unnamed = summary_text.render_duplicates({**facts, 'conflicts': [], 'label_noisy': True})
  assert 'for these features (see d.json)' in unnamed[0]
  rare = summary_text.render_duplicates({**facts, 'conflicts_kept': False, 'label_noisy': False})
  assert 'filed under two labels, left out of both splits' in rare[0]
  numbers = summary_text.render_duplicates({**facts, 'conflicts_kept': True}, regression=True)
  assert numbers[0] == (
    'duplicates: 9909 example(s) share their features with another of another label value, '
    "kept, each set in one split (the label's spread, not a conflict) (see d.json)"
  )
  lines = summary_text.render(
    RunResult(
      wall_seconds=1.0,
      duplicates={**facts, 'conflicts_kept': True, 'conflicts': []},
      training={'model': 'mlp', 'hyperparameters': {}, 'task': 'regression'},
    )
  )
  assert numbers[0] in lines and not any('two labels' in line for line in lines)


def test_records_the_trainer_read_are_shown_against_those_recorded_when_fewer():
  from metadata import summary
  from records import damage
  from records.scan import ShardReport

  found = damage.totals(
    [ShardReport('/ex/Split-train/a', good=51, truncated_bytes=34)], {'train': 241, 'eval': 49}
  )
  short = summary.trainer_read(found)
  assert short == {'train': [51, 241]}
  lines = summary_text.render(
    RunResult(wall_seconds=1.0, examples_per_split={'train': 241, 'eval': 49}, trainer_read=short)
  )
  assert (
    'examples:   train 241 (the Trainer read 51 of 241 recorded: 190 missing from damaged '
    'shards), eval 49'
  ) in lines
  whole = damage.totals([ShardReport('/ex/Split-train/a', good=241)], {'train': 241})
  assert summary.trainer_read(whole) is None and summary.trainer_read({}) is None


def test_the_model_line_names_the_seed_it_was_trained_with():
  training = {'model': 'cnn', 'hyperparameters': {'learning_rate': 0.001}, 'seed': 0}
  assert summary_text.render_training(training)[0] == (
    'model:      cnn; learning_rate 0.001; seed 0, deterministic ops'
  )
  unseeded = summary_text.render_training(dict(training, seed=None))[0]
  assert unseeded == 'model:      cnn; learning_rate 0.001'


def test_a_regression_run_prints_its_errors_against_the_median_predictor_not_an_accuracy():
  from contracts import evaluation as names
  from metadata.run_result import Evaluation

  figures = {
    names.MAE_KEY: 1.132,
    names.RMSE_KEY: 2.403,
    names.R2_KEY: 0.8812,
    names.MAPE_KEY: 12.3,
    names.MEAN_LABEL_KEY: 11.2,
    names.MEAN_PREDICTION_KEY: 11.1,
    names.BASELINE_MAE_KEY: 7.061,
  }
  evaluation = Evaluation(figures=figures, serving_figures={names.RMSE_KEY: 2.5})
  training = {
    'label': 'fare',
    'model': 'mlp',
    'hyperparameters': {'learning_rate': 0.001},
    'task': 'regression',
    'loss': 'huber',
  }
  trials = [{'trial_id': '01', 'score': 0.21, 'learning_rate': 0.001}]
  result = RunResult(wall_seconds=1.0, evaluation=evaluation, training=training, tuning=trials)
  lines = summary_text.render(result)
  assert (
    'eval:       MAE 1.132, RMSE 2.403, R² 0.8812, MAPE 12.3 % (eval split, label units)' in lines
  )
  assert (
    "baseline:   predicting the train median for every row: MAE 7.061; this model's is 84% lower"
    in lines
  )
  assert 'means:      mean label 11.2, mean prediction 11.1' in lines
  assert 'serving model: RMSE 2.5 (the same eval rows)' in lines
  assert 'model:      mlp; learning_rate 0.001; loss huber' in lines
  assert (
    'tuning:     best of 1 trials: trial 01, eval loss 0.2100 with learning_rate 0.001' in lines
  )
  assert not any('accuracy' in line for line in lines)
  worse = Evaluation(figures=dict(figures, **{names.MAE_KEY: 8.0}))
  lines = summary_text.render(RunResult(wall_seconds=1.0, evaluation=worse))
  assert any(line.endswith("this model's is 13% HIGHER") for line in lines)
  prices = Evaluation(figures={names.MAE_KEY: 6720.4, names.BASELINE_MAE_KEY: 46360.2})
  lines = summary_text.render(RunResult(wall_seconds=1.0, evaluation=prices))
  assert 'eval:       MAE 6,720 (eval split, label units); no MAPE: an eval label is 0' in lines
  assert any('MAE 46,360;' in line for line in lines)


def test_a_heavy_tailed_label_its_predictions_out_of_range_and_no_mape_are_said():
  from contracts import evaluation as names
  from metadata.run_result import Evaluation

  figures = {
    names.MAE_KEY: 1098.0,
    names.BASELINE_MAE_KEY: 815.0,
    names.BASELINE_RMSE_KEY: 41000.0,
    names.OUT_OF_RANGE_KEY: 31.0,
    names.OTHER_SIGN_KEY: 29.0,
    names.BEYOND_KEY: 1.0,
    names.SMALLEST_LABEL_KEY: 2.0,
    names.MAPE_FLOOR_KEY: 6.1,
  }
  training = {
    'model': 'mlp',
    'hyperparameters': {},
    'task': 'regression',
    'loss': 'huber',
    'label_min': 4.0,
    'label_max': 2900000.0,
    'label_tail': {
      'rows': 6,
      'of': 2400,
      'low': -1234.0,
      'high': 2302.0,
      'mean': 4785.0,
      'mean_without': 584.0,
      'median': 493.0,
    },
  }
  result = RunResult(wall_seconds=1.0, evaluation=Evaluation(figures=figures), training=training)
  lines = summary_text.render(result)
  assert (
    "eval:       MAE 1,098 (eval split, label units); 1 eval row(s) beyond the heavy tail's "
    'fences left out of these figures; no MAPE: labels near 0 (an eval |label| '
    "of 2, under 1% of the train split's median |label| 610): their percent errors would swamp "
    'it'
  ) in lines
  assert (
    "baseline:   predicting the train median for every row: MAE 815; this model's is 35% HIGHER "
    '(the train mean: RMSE 41,000)'
  ) in lines
  assert (
    "range:      31 eval prediction(s) outside the train labels' range [4, 2,900,000]; 29 "
    'below 0, where no train label is'
  ) in lines
  (tail,) = [line for line in lines if line.startswith('tail:')]
  assert tail.startswith(
    'tail:       the label is heavy-tailed: 6 of 2,400 train labels (0.25%) beyond [-1,234, '
    "2,302] (Tukey's far-out fences) pull the mean to 4,785 from 584 without them (median 493)"
  )
  assert '--loss mae or huber fits the bulk (this run: huber)' in tail
  plain = dict(training, label_tail=None)
  within = {k: v for k, v in figures.items() if k not in (names.OUT_OF_RANGE_KEY, names.BEYOND_KEY)}
  lines = summary_text.render(
    RunResult(wall_seconds=1.0, evaluation=Evaluation(figures=within), training=plain)
  )
  assert not any(line.startswith(('tail:', 'range:')) or 'fences' in line for line in lines)


def test_columns_of_numbers_written_as_text_are_one_line_with_their_cells_read_as_missing():
  facts = {'price': {'placeholders': 0, 'other': 3}, 'rate': {'placeholders': 10, 'other': 0}}
  said = [
    line
    for line in summary_text.render(RunResult(wall_seconds=1.0, numbers_from_text=facts))
    if line.startswith('numbers:')
  ]
  assert len(said) == 1 and said[0].startswith('numbers:    price, rate read as numbers from text')
  assert said[0].endswith(': price 3 cell(s) not numbers, rate 10 placeholder(s) read as missing')
  assert not any(
    line.startswith('numbers:') for line in summary_text.render(RunResult(wall_seconds=1.0))
  )


def test_the_numbers_line_says_each_column_s_forms_and_names_a_text_column_of_numbers_unread():
  facts = {
    'temp': {'placeholders': 0, 'other': 0, 'forms': ['minus signs −']},
    'revenue': {'placeholders': 0, 'other': 0, 'forms': ['k/M/B suffixes']},
  }
  unread = {'code': ['12~5', '7~1']}
  lines = summary_text.render(
    RunResult(wall_seconds=1.0, numbers_from_text=facts, numbers_unread=unread)
  )
  said = [line for line in lines if line.startswith('numbers:')]
  assert said[0] == (
    'numbers:    temp, revenue read as numbers from text (temp: minus signs −; revenue: k/M/B '
    'suffixes; predict and monitor read them alike)'
  )
  assert said[1].startswith(
    "numbers:    column 'code' looks numeric but is read as text: '12~5', '7~1', …"
  )


def test_a_csv_dialect_other_than_plain_commas_is_one_line_and_plain_commas_none():
  said = summary_text.render(RunResult(wall_seconds=1.0, csv_dialect='semicolon-separated'))
  assert [line for line in said if line.startswith('csv:')] == ['csv:        semicolon-separated']
  assert not any(
    line.startswith('csv:') for line in summary_text.render(RunResult(wall_seconds=1.0))
  )


def test_the_summary_ends_with_the_runs_page_beside_the_report():
  result = RunResult(wall_seconds=1.0, report='/out/report.html', runs_page='/out/runs.html')
  assert summary_text.render(result)[-2:] == [
    'report:     /out/report.html',
    'runs page:  /out/runs.html',
  ]
  result.runs_page = ''
  assert summary_text.render(result)[-1] == 'runs page:  not written (see the log)'


def test_a_module_files_model_says_what_it_was_judged_as_predicting():
  result = RunResult(blessed=True, predicts='2 classes (classification), scored against tips_xf')
  lines = summary_text.render(result)
  said = [line for line in lines if line.startswith('predicts:')]
  assert said and 'scored against tips_xf' in said[0]
  assert lines.index(said[0]) < next(
    i for i, line in enumerate(lines) if line.startswith('blessed:')
  )
  assert not [line for line in summary_text.render(RunResult()) if line.startswith('predicts:')]


def test_a_transform_that_read_the_last_analyzer_cache_says_how_much():
  cache = {'from': '/out/pipeline_root/Transform/updated_analyzer_cache/9', 'from_cache': 9}
  result = RunResult(transform_cache=dict(cache, computed=1))
  said = [line for line in summary_text.render(result) if line.startswith('transform:')]
  assert said == ["transform:  9 analyzers read from the last run's analyzer cache, 1 computed"]
  assert not [line for line in summary_text.render(RunResult()) if line.startswith('transform:')]
  again = RunResult.from_json(result.to_json())  # last_run.json keeps it
  assert again.transform_cache == result.transform_cache
