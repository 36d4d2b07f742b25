"""`pipeline.py compare`'s difference logic on fabricated run facts (metadata/compare.py's pure
layer), and its one-line refusals through the command line on tiny ML Metadata stores. Real runs
are compared in tests/e2e/test_code_aware_caching.py."""

import copy
import json
import os

from ml_metadata.metadata_store import metadata_store
from ml_metadata.proto import metadata_store_pb2
import pytest

from cli import main as cli_main
from contracts.errors import EXIT_BAD_INPUT
from metadata import compare, run_facts
from reporting import compare_page


def _facts(**changes) -> dict:
  """One run's facts as run_facts.run_facts returns them; `changes` replace whole keys."""
  facts = {
    'run_id': '2026-01-01T10:00:00.000000',
    'created': '2026-01-01 10:00:00',
    'metadata': '/o/metadata.sqlite',
    'components': {'executed': 10, 'cached': 0},
    'data': {
      'producer': 'ImageExampleGen',
      'source': '/data/images',
      'span': 0,
      'version': None,
      'input_fingerprint': 'split:images,num_files:100',
      'examples_id': 1,
      'examples_uri': '/o/pipeline_root/ImageExampleGen/examples/1',
      'data_git_commit': 'a' * 40,
      'data_git_dirty': 0,
    },
    'examples_per_split': {'train': 80, 'eval': 20},
    'label': 'label_name',
    'examples_per_class': {
      'train': {'cat': 40, 'dog': 40},
      'eval': {'cat': 10, 'dog': 10},
    },
    'statistics': {
      'id': 4,
      'uri': '/o/pipeline_root/StatisticsGen/statistics/4',
      'features': {'label_name': "top 'cat' 50%, 2 values", 'height': 'mean 8'},
    },
    'schema': {
      'id': 5,
      'uri': '/o/pipeline_root/SchemaGen/schema/5',
      'features': {'image': 'BYTES', 'height': 'INT', 'label_name': 'BYTES, 2 values'},
    },
    'code': {
      'Trainer': {'trainer/model.py': '1111', 'contracts/splits.py': '2222'},
      'ImageExampleGen': {'contracts/splits.py': '2222', 'requirements.lock': '3333'},
      'Evaluator': {},  # no project code
    },
    'options': {
      'Trainer': {'train_steps': 20, 'learning_rate': 0.001, 'label_key': 'label'},
      'Evaluator': {'min_accuracy': '0.9', 'label_key': 'label'},
    },
    'hyperparameters': {'learning_rate': 0.001, 'dense_units': 128, 'model': 'cnn'},
    'metrics': {
      'accuracy': 0.97,
      'per_class': {'cat': 0.98, 'dog': 0.96},
      'per_slice': {'source = phone': {'accuracy': 0.9, 'examples': 5}},
      'blessed': True,
      'blessing': 'accuracy 0.970, every class predicted',
      'pushed_to': '/o/serving/1',
    },
  }
  facts.update(changes)
  return facts


def _changed(facts: dict, path: str, value) -> dict:
  """A deep copy of facts with facts[k1][k2]… (path 'k1/k2/…') set to value."""
  facts = copy.deepcopy(facts)
  *inner, last = path.split('/')
  target = facts
  for key in inner:
    target = target[key]
  target[last] = value
  return facts


def _names(result_or_list, aspect: str = '') -> list:
  found = result_or_list['differences'] if isinstance(result_or_list, dict) else result_or_list
  return [d['name'] for d in found if not aspect or d['aspect'] == aspect]


def test_a_run_compared_with_itself_has_no_differences():
  a = _facts()
  result = compare.compare(a, copy.deepcopy(a), moved={})
  assert result['differences'] == []
  assert result['metrics']['accuracy'] == {'a': 0.97, 'b': 0.97, 'delta': 0}
  assert result['metrics']['blessed'] == {'a': True, 'b': True}
  assert result['a']['run_id'] == result['b']['run_id']
  lines = compare_page.render(result)
  assert any(line.startswith('no differences') for line in lines)
  json.dumps(result)  # JSON-able as it is


def test_the_data_names_its_source_revision_and_counts_per_split_and_class():
  a = _facts()
  b = _changed(a, 'data/source', '/data/images-v2')
  b = _changed(b, 'data/data_git_commit', 'b' * 40)
  b['data']['data_dvc_md5'] = '7625a6b5.dir'  # present in one run only
  b = _changed(b, 'examples_per_split', {'train': 70, 'eval': 20})
  b = _changed(b, 'examples_per_class/train', {'cat': 30, 'dog': 38, 'bird': 2})
  found = compare.differences(a, b)
  data = [d for d in found if d['aspect'] == 'data']
  assert [d['name'] for d in data] == [
    'source',
    'data_git_commit',
    'data_dvc_md5',
    'train examples',
    'train examples of class cat',  # the largest change of a class first
    'train examples of class bird',
    'train examples of class dog',
  ]
  by_name = {d['name']: d for d in data}
  assert by_name['train examples']['delta'] == -10
  assert by_name['train examples of class cat'] == dict(
    aspect='data', name='train examples of class cat', a=40, b=30, delta=-10
  )
  assert by_name['train examples of class bird']['a'] == 0  # a class new in B
  assert by_name['data_dvc_md5']['a'] is None and by_name['source']['delta'] is None


def test_class_counts_a_run_did_not_record_are_a_dash_not_0():
  a = _facts()
  b = _facts(label=None, examples_per_class={})  # as a run with approximate label counts
  by_name = {d['name']: d for d in compare.differences(a, b) if d['aspect'] == 'data'}
  cat = by_name['train examples of class cat']
  assert (cat['a'], cat['b'], cat['delta']) == (40, None, None)
  shown = '\n'.join(compare_page.render(compare.compare(a, b, moved={})))
  line = next(line for line in shown.splitlines() if 'train examples of class cat' in line)
  assert '–' in line and ' 0 ' not in f'{line} '


def test_statistics_list_the_features_that_moved_most_with_their_comparator():
  a = _facts()
  b = _changed(a, 'statistics/id', 16)
  moved = {
    'height': {'measure': 'jensen_shannon_divergence', 'value': 0.05, 'threshold': 0.3},
    'label_name': {
      'measure': 'infinity_norm',
      'value': 0.2,
      'threshold': 0.1,
      'flagged': True,
    },
    'image': {'measure': 'infinity_norm', 'value': 0.0, 'threshold': 0.1},  # did not move
  }
  moved.update(
    {
      f'f{i}': {'measure': 'jensen_shannon_divergence', 'value': 0.01 + i / 1000}
      for i in range(compare.MAX_FEATURES)
    }
  )
  found = [d for d in compare.differences(a, b, moved) if d['aspect'] == 'statistics']
  assert len(found) == compare.MAX_FEATURES
  assert [d['name'] for d in found[:3]] == ['label_name', 'height', 'f9']
  assert found[0]['delta'] == 0.2 and found[0]['measure'] == 'infinity_norm' and found[0]['flagged']
  assert found[1]['a'] == 'mean 8'  # each run's own summary of the feature
  assert 'image' not in [d['name'] for d in found]
  line = next(
    line for line in compare_page.render(compare.compare(a, b, moved)) if 'label_name' in line
  )
  assert 'L-inf, above the drift threshold' in line and '0.2000' in line


def test_a_distance_below_the_noise_is_not_listed_unless_above_its_drift_threshold():
  """Two runs on the same data once listed image_id's L-infinity of 0.0007 first."""
  a = _facts()
  b = _changed(a, 'statistics/id', 16)
  noise = {'measure': 'infinity_norm', 'value': 0.0007, 'threshold': 0.1}
  result = compare.compare(a, b, {'image_id': noise})
  assert result['differences'] == []
  assert any(line.startswith('no differences') for line in compare_page.render(result))
  flagged = dict(noise, threshold=0.0005, flagged=True)  # a threshold set that low: listed
  assert _names(compare.differences(a, b, {'image_id': flagged})) == ['image_id']


def test_a_model_files_source_is_its_line_count_and_digest_and_no_cell_breaks_a_line():
  execution = metadata_store_pb2.Execution()
  source = 'def build_model(spec, hp):\n  return None\n'
  execution.custom_properties['custom_config'].string_value = json.dumps({'model_source': source})
  shown = run_facts.execution_options(execution)['model_source']
  assert shown.startswith('2 lines, sha256 ') and len(shown) < 34
  a = _facts()
  b = copy.deepcopy(a)
  a['options']['Trainer']['note'] = 'first line\nsecond line'  # not shortened: still one line
  b['options']['Trainer']['note'] = 'other\ntext'
  lines = compare_page.render(compare.compare(a, b, moved={}))
  assert all('\n' not in line for line in lines)
  assert any('first line second' in line for line in lines)


def test_moved_features_is_measured_only_for_two_statistics_artifacts():
  a = _facts()
  asked = []
  distances = lambda x, y, schema: asked.append((x, y, schema)) or {'height': {'value': 0.1}}
  assert compare.moved_features(a, copy.deepcopy(a), distances) == {}  # one artifact
  assert asked == []
  b = _changed(a, 'statistics/uri', '/o/pipeline_root/StatisticsGen/statistics/16')
  b = _changed(b, 'statistics/id', 16)
  b = _changed(b, 'schema/uri', '/o/pipeline_root/SchemaGen/schema/17')
  assert compare.moved_features(a, b, distances) == {'height': {'value': 0.1}}
  assert asked == [(a['statistics']['uri'], b['statistics']['uri'], b['schema']['uri'])]
  assert compare.moved_features(a, b, None) is None
  assert compare.moved_features(a, _facts(statistics=None), distances) is None
  assert compare.compare(a, b, None)['statistics_compared'] is False


def test_schema_changes_are_removed_added_type_and_domain():
  a = _facts()
  b = _changed(a, 'schema/id', 17)
  b['schema']['features'] = {
    'height': 'FLOAT',  # type changed
    'label_name': 'BYTES, 3 values',  # domain changed
    'width': 'INT',  # added; image removed
  }
  found = [d for d in compare.differences(a, b) if d['aspect'] == 'schema']
  assert [(d['name'], d['change']) for d in found] == [
    ('feature image', 'removed'),
    ('feature width', 'added'),
    ('feature height', 'type changed'),
    ('feature label_name', 'domain changed'),
  ]
  assert found[2]['a'] == 'INT' and found[2]['b'] == 'FLOAT'


def test_code_names_each_changed_file_and_the_components_that_run_it():
  a = _facts()
  b = copy.deepcopy(a)
  b['code']['Trainer']['trainer/model.py'] = '9999'
  b['code']['Trainer']['contracts/splits.py'] = '8888'
  b['code']['ImageExampleGen']['contracts/splits.py'] = '8888'
  b['code']['ImageExampleGen']['requirements.lock'] = '7777'
  found = [d for d in compare.differences(a, b) if d['aspect'] == 'code']
  assert [(d['name'], d['where']) for d in found] == [
    ('requirements.lock', ['ImageExampleGen']),  # the environment first: it changes everything
    ('contracts/splits.py', ['ImageExampleGen', 'Trainer']),
    ('trainer/model.py', ['Trainer']),
  ]
  assert found[2]['a'] == '1111' and found[2]['b'] == '9999' and found[2]['delta'] is None


def test_options_are_named_once_per_change_and_hyperparameters_only_when_new():
  a = _facts()
  b = copy.deepcopy(a)
  b['options']['Trainer'].update(train_steps=25, learning_rate=0.01, label_key='y')
  b['options']['Evaluator'].update(min_accuracy='0.8', label_key='y')
  b['hyperparameters'].update(learning_rate=0.01, dense_units=64)
  found = [d for d in compare.differences(a, b) if d['aspect'] == 'options']
  assert [(d['name'], d['where']) for d in found] == [
    ('label_key', ['Evaluator', 'Trainer']),  # one change, two components
    ('learning_rate', ['Trainer']),
    ('min_accuracy', ['Evaluator']),
    ('train_steps', ['Trainer']),
    ('dense_units', ['hyperparameters']),  # learning_rate: said once, as the option
  ]
  by_name = {d['name']: d for d in found}
  assert by_name['train_steps']['delta'] == 5
  assert by_name['min_accuracy']['delta'] == pytest.approx(-0.1)  # a number's text
  assert by_name['label_key']['delta'] is None


def _with_task(task: str, duplicates: str) -> dict:
  facts = _changed(_facts(), 'metrics/task', task)
  facts['options']['CsvExampleGen'] = {'duplicates': duplicates, 'input_base': '/data'}
  return facts


def test_an_option_the_task_chose_is_shown_apart_from_a_users_change():
  classifier = _with_task('classification', 'group')
  regression = _with_task('regression', 'keep-conflicts')  # --duplicates left at its default
  found = compare.compare(classifier, regression, moved={})
  (chosen,) = [d for d in found['differences'] if d['name'] == 'duplicates']
  assert chosen['aspect'] == 'pipeline' and chosen['where'] == ['CsvExampleGen']
  assert 'duplicates' not in _names(found, 'options')
  lines = compare_page.render(found)
  (row,) = [line for line in lines if line.split()[:2] == ['pipeline', 'duplicates']]
  assert "(CsvExampleGen; the task's default)" in row
  assert compare_page.PIPELINE_CHOSEN in lines
  # set by a user: two classifiers, one keeping conflicts; or a regression grouping them
  kept = _with_task('classification', 'keep-conflicts')
  for a, b in ((classifier, kept), (_with_task('regression', 'off'), classifier)):
    (changed,) = [d for d in compare.differences(a, b) if d['name'] == 'duplicates']
    assert changed['aspect'] == 'options'
    assert compare_page.PIPELINE_CHOSEN not in compare_page.render(compare.compare(a, b, moved={}))


def test_execution_options_keep_json_paths_apart_and_the_trainers_own_names():
  execution = metadata_store_pb2.Execution()
  properties = {
    'input_config': json.dumps({'splits': [{'name': 'images', 'pattern': '*/*'}]}),
    'output_config': json.dumps({'splits': [{'name': 'train', 'hash_buckets': 80}]}),
    'custom_config': json.dumps({'train_steps': 20, 'code_fingerprint': '{}', 'tpu': ''}),
    'train_args': json.dumps({'num_steps': 20}),  # train_steps' default, said once
    'input_base': '/data',  # a data fact
    'eval_percent': 20,
    # A component's own fingerprint ({file: digest}): code, not options.
    'code_fingerprint': json.dumps({'components/prediction_csv/executor.py': '3224a99ac386'}),
  }
  for name, value in properties.items():
    field = 'int_value' if isinstance(value, int) else 'string_value'
    setattr(execution.custom_properties[name], field, value)
  assert run_facts.execution_options(execution) == {
    'input_config.splits': [{'name': 'images', 'pattern': '*/*'}],
    'output_config.splits': [{'name': 'train', 'hash_buckets': 80}],
    'train_steps': 20,
    'tpu': '',
    'eval_percent': 20,
  }


def test_metrics_give_b_minus_a_overall_per_class_per_slice_and_the_blessing():
  a = _facts()
  b = _changed(
    a,
    'metrics',
    {
      'accuracy': 0.91,
      'per_class': {'cat': 0.97, 'dog': 0.85, 'bird': None},
      'per_slice': {'source = phone': {'accuracy': 0.7, 'examples': 5}},
      'blessed': False,
      'blessing': 'accuracy 0.910, below the 0.95 needed',
      'pushed_to': None,
    },
  )
  result = compare.compare(a, b, moved={})
  metrics = result['metrics']
  assert metrics['accuracy']['delta'] == pytest.approx(-0.06)
  assert metrics['per_class']['dog'] == {'a': 0.96, 'b': 0.85, 'delta': pytest.approx(-0.11)}
  assert metrics['per_class']['bird'] == {'a': None, 'b': None, 'delta': None}
  assert metrics['per_slice']['source = phone']['delta'] == pytest.approx(-0.2)
  assert metrics['blessed'] == {'a': True, 'b': False}
  assert _names(result, 'metrics') == [
    'accuracy',
    'blessed',
    'recall of class dog',  # the largest change of a class first
    'recall of class cat',
    'accuracy where source = phone',
  ]
  text = '\n'.join(compare_page.render(result))
  assert 'recall of class dog' in text and '-0.11' in text and 'blessing B: accuracy 0.910' in text


def test_differences_come_in_the_order_of_the_aspects():
  a = _facts()
  b = _changed(a, 'examples_per_split/train', 70)
  b = _changed(b, 'statistics/id', 16)
  b = _changed(b, 'schema/id', 17)
  b['schema']['features']['width'] = 'INT'
  b['code']['Trainer']['trainer/model.py'] = '9999'
  b['options']['Trainer']['train_steps'] = 25
  b['metrics']['accuracy'] = 0.9
  a['metrics']['task'], b['metrics']['task'] = 'classification', 'regression'
  a['options']['ImageExampleGen'] = {'duplicates': 'group'}
  b['options']['ImageExampleGen'] = {'duplicates': 'keep-conflicts'}  # the task's, no one's
  moved = {'height': {'measure': 'jensen_shannon_divergence', 'value': 0.4, 'threshold': 0.3}}
  aspects = [d['aspect'] for d in compare.differences(a, b, moved)]
  assert aspects == list(compare.ASPECTS)
  for d in compare.differences(a, b, moved):
    assert set(d) >= {'aspect', 'name', 'a', 'b', 'delta'}


def test_the_page_draws_recall_of_both_runs_and_the_moved_features(tmp_path):
  a = _facts()
  b = _changed(a, 'statistics/id', 16)
  b['metrics'] = dict(b['metrics'], per_class={'cat': 0.9, 'dog': 0.5})
  moved = {'height': {'measure': 'jensen_shannon_divergence', 'value': 0.4, 'threshold': 0.3}}
  page = compare_page.html_page(compare.compare(a, b, moved))
  assert page.startswith('<!DOCTYPE html>') and page.count('<svg') == 2
  assert 'aria-label="recall per class, run A and run B"' in page
  assert '>run A<' in page and '>run B<' in page  # the legend names the runs
  assert 'features whose train distribution moved most' in page


def _store(folder, runs: int) -> str:
  """A tiny ML Metadata store with `runs` pipeline runs of the pipeline and no executions."""
  os.makedirs(folder, exist_ok=True)
  path = os.path.join(folder, 'metadata.sqlite')
  connection = metadata_store_pb2.ConnectionConfig()
  connection.sqlite.filename_uri = path
  store = metadata_store.MetadataStore(connection)
  pipeline_type = store.put_context_type(metadata_store_pb2.ContextType(name='pipeline'))
  run_type = store.put_context_type(metadata_store_pb2.ContextType(name='pipeline_run'))
  [pipeline] = store.put_contexts(
    [metadata_store_pb2.Context(type_id=pipeline_type, name='tfrecord-pipeline')]
  )
  for i in range(runs):
    [run] = store.put_contexts(
      [metadata_store_pb2.Context(type_id=run_type, name=f'2026-01-01T10:0{i}:00.000000')]
    )
    store.put_parent_contexts([metadata_store_pb2.ParentContext(parent_id=pipeline, child_id=run)])
  return path


@pytest.mark.parametrize(
  'argv, said',
  [
    (['no-such-run'], "no run 'no-such-run' in "),
    ([], ': 1 run(s), 2 needed to compare (run the pipeline again, or name an output folder'),
  ],
)
def test_an_unknown_run_or_too_few_runs_is_one_error_line_and_exit_2(tmp_path, capsys, argv, said):
  _store(str(tmp_path / 'out'), runs=1)
  code = cli_main.main(['compare', *argv, '--output', str(tmp_path / 'out')])
  captured = capsys.readouterr()
  assert code == EXIT_BAD_INPUT
  assert captured.err.count('\n') == 1 and captured.err.startswith('error: ')
  assert said in captured.err


@pytest.mark.parametrize(
  'argv', [['2026-01-01T10:00:00.000000'], ['{out}'], ['{out}', '2026-01-01T10:00:00.000000']]
)
def test_a_run_is_not_compared_with_itself(tmp_path, capsys, argv):
  """The hint of a single run ("give a run id") once led to comparing that run with itself."""
  out = str(tmp_path / 'out')
  _store(out, runs=1)
  code = cli_main.main(['compare', *[a.format(out=out) for a in argv], '--output', out])
  err = capsys.readouterr().err
  assert code == EXIT_BAD_INPUT and err.count('\n') == 1
  assert err.startswith('error: ') and 'would be compared with itself' in err


def test_a_missing_store_is_one_error_line_and_exit_2(tmp_path, capsys):
  assert cli_main.main(['compare', '--output', str(tmp_path / 'nothing')]) == EXIT_BAD_INPUT
  err = capsys.readouterr().err
  assert (
    err == f'error: {tmp_path / "nothing"}: no metadata.sqlite (run the pipeline there first)\n'
  )


def test_runs_to_compare_defaults_to_the_last_two_and_takes_output_folders(tmp_path):
  from cli import compare as command

  first = _store(str(tmp_path / 'one'), runs=3)
  other = _store(str(tmp_path / 'two'), runs=1)
  output = str(tmp_path / 'one')
  runs = ['2026-01-01T10:00:00.000000', '2026-01-01T10:01:00.000000', '2026-01-01T10:02:00.000000']
  assert command.runs_to_compare(output, None, None) == ((first, runs[1]), (first, runs[2]))
  assert command.runs_to_compare(output, runs[0], None) == ((first, runs[0]), (first, runs[2]))
  assert command.runs_to_compare(output, runs[0], str(tmp_path / 'two')) == (
    (first, runs[0]),
    (other, runs[0]),
  )


def test_help_names_the_runs_and_options(capsys):
  with pytest.raises(SystemExit) as stopped:
    cli_main.main(['compare', '--help'])
  shown = capsys.readouterr().out
  assert stopped.value.code == 0
  assert '[RUN_A] [RUN_B]' in shown and '--json' in shown and '--html' in shown


def test_two_trainings_that_differ_in_their_metrics_alone_say_it_was_training_s_randomness():
  a = _facts(model_id=6)
  b = _changed(_changed(a, 'metrics/accuracy', 0.95), 'model_id', 16)
  result = compare.compare(a, b, moved={})
  assert result['randomness'].startswith(
    'only the metrics differ: the same data, code and options trained twice without --seed'
  )
  assert result['randomness'] in compare_page.render(result)
  same = compare.compare(a, _changed(a, 'model_id', 16), moved={})['randomness']
  assert same.endswith(
    'the metrics agree, the models need not; --seed N trains the same model every time'
  )
  seeded = [_changed(facts, 'options/Trainer/seed', 7) for facts in (a, b)]
  result = compare.compare(*seeded, moved={})
  assert result['randomness'].startswith('only the metrics differ, both trained with --seed 7')
  assert compare_page.render(result)[:2] == [
    f'A: run {a["run_id"]}, --seed 7',
    f'B: run {b["run_id"]}, --seed 7',
  ]
  assert '--seed 7' in compare_page.html_page(result)
  reproduced = compare.compare(seeded[0], _changed(seeded[0], 'model_id', 16), moved={})
  assert reproduced['randomness'] == 'trained twice with --seed 7: the same metrics, reproduced'
  # Anything else differing, or one model (cached): no such line.
  assert compare.compare(a, _changed(b, 'options/Trainer/seed', 7), moved={})['randomness'] == ''
  assert compare.compare(a, _changed(b, 'data/span', 1), moved={})['randomness'] == ''
  assert compare.compare(a, _changed(b, 'model_id', 6), moved={})['randomness'] == ''


def _regression_facts(mae: float, rmse: float, r2: float, north: float) -> dict:
  """A regression run's facts: its figures overall and per slice."""
  from contracts import evaluation as names

  facts = _facts(label=None, examples_per_class={})
  facts['metrics'] = {
    'task': 'regression',
    'accuracy': None,
    'regression': {
      names.MAE_KEY: mae,
      names.RMSE_KEY: rmse,
      names.R2_KEY: r2,
      names.BASELINE_MAE_KEY: 7.06,
    },
    'per_class': {},
    'per_slice': {'zone = north': {'accuracy': None, 'examples': 5, names.MAE_KEY: north}},
    'blessed': True,
    'blessing': f'MAE {mae}',
    'pushed_to': '/o/serving/1',
  }
  return facts


def test_two_regression_runs_are_compared_by_mae_rmse_r2_side_by_side():
  a, b = _regression_facts(1.5, 2.6, 0.85, 1.2), _regression_facts(1.13, 2.4, 0.88, 1.0)
  result = compare.compare(a, b, moved={})
  regression = result['metrics']['regression']
  assert regression['mean_absolute_error']['delta'] == pytest.approx(-0.37)
  assert regression['r_squared'] == {'a': 0.85, 'b': 0.88, 'delta': pytest.approx(0.03)}
  assert _names(result, 'metrics') == ['MAE', 'RMSE', 'R²', 'MAE where zone = north']
  assert result['tasks_differ'] == '' and result['b']['mae'] == 1.13
  lines = compare_page.render(result)
  table = '\n'.join(lines[lines.index('metrics (eval split):') :])
  for row in ('MAE ', 'RMSE ', 'R² ', 'MAE of the median predictor', 'MAE where zone = north'):
    assert row in table, row
  assert '-0.37' in table and 'accuracy' not in table
  page = compare_page.html_page(result)
  assert '<td>MAE</td><td class="n">1.5</td><td class="n">1.13</td>' in page
  assert '<td>R²</td><td class="n">0.85</td><td class="n">0.88</td>' in page
  assert 'aria-label="MAE, run A and run B"' in page and 'recall per class' not in page


def test_a_regression_run_against_a_classifier_says_the_tasks_differ_and_compares_no_figure():
  a, b = _facts(), _regression_facts(1.13, 2.4, 0.88, 1.0)
  a['metrics']['task'] = 'classification'
  result = compare.compare(a, b, moved={})
  assert result['tasks_differ'].startswith('the tasks differ: A is a classifier, B a regression')
  metrics = [d for d in result['differences'] if d['aspect'] == 'metrics']
  assert [(d['name'], d['a'], d['b'], d['delta']) for d in metrics] == [
    ('task', 'classification', 'regression', None)
  ]
  lines = compare_page.render(result)
  assert result['tasks_differ'] in lines
  assert any(line.split()[:3] == ['task', 'classification', 'regression'] for line in lines)
  page = compare_page.html_page(result)
  assert 'the tasks differ' in page and '<td>task</td><td>classification</td>' in page
  assert 'MAE, run A and run B' not in page and 'recall per class' not in page  # one run each


def test_a_runs_task_is_its_trainings_else_what_its_evaluation_measured():
  from metadata.run_result import Evaluation, RunResult

  assert run_facts.task_of(RunResult(training={'task': 'regression'})) == 'regression'
  figures = Evaluation(figures={'mean_absolute_error': 1.0})
  assert run_facts.task_of(RunResult(evaluation=figures)) == 'regression'
  assert run_facts.task_of(RunResult(evaluation=Evaluation(accuracy=0.9))) == 'classification'
  assert run_facts.task_of(RunResult(training={'model': 'cnn'})) == 'classification'
  assert run_facts.task_of(RunResult()) is None


def test_regression_figures_that_differ_only_by_summation_order_are_the_same():
  a = _regression_facts(6720.4, 8429.0, 0.9765, 7625.0)
  b = _regression_facts(6720.4 * (1 + 2e-8), 8429.0, 0.9765 - 1e-10, 7625.0 + 3e-4)
  result = compare.compare(a, b, moved={})
  assert _names(result, 'metrics') == []
  b['metrics']['regression']['mean_absolute_error'] = 6721.0
  assert _names(compare.compare(a, b, moved={}), 'metrics') == ['MAE']
  lines = compare_page.render(compare.compare(a, b, moved={}))
  assert any(line.split()[:3] == ['MAE', '6720', '6721'] for line in lines)
  assert compare_page.shown(80832.4) == '80,832'
