"""`bench.gpu_check --smoke` (tiny CNN, 60 images, on whatever device there is): the whole path
runs, the product path (`pipeline.py run` with the cnn) included, and the JSON is complete and
sane (not a speed test); a failed product path is reported; without a GPU the real check refuses
to run."""

import pytest

from bench import gpu_check
from tests.support import bench_runs

# ExampleGen, both pipelines, training steps and a whole pipeline.py run (~55 s on 2 cores)
pytestmark = pytest.mark.slow


@pytest.fixture(scope='module')
def report(tmp_path_factory):
  return bench_runs.figures(gpu_check.main, tmp_path_factory.mktemp('bench'), '--smoke')


def test_both_pipelines_train_and_have_positive_rates(report):
  assert set(report['pipelines']) == {'project', 'seed_000'}
  for name, figures in report['pipelines'].items():
    assert figures['examples_per_s'] > 0 and figures['device_only_examples_per_s'] > 0, name
    assert figures['step_ms'] > 0 and figures['device_only_step_ms'] > 0, name
    assert 0 < figures['busy_share'] <= 1.5, name
    assert figures['busy_share'] == pytest.approx(
      figures['device_only_step_ms'] / figures['step_ms']
    )
    assert figures['examples_per_s'] == pytest.approx(report['batch'] * 1e3 / figures['step_ms'])
  assert report['pipelines']['project']['input_dtype'] == 'uint8'  # the model normalises
  assert report['pipelines']['seed_000']['input_dtype'] == 'float32'  # the recipe did


def test_the_run_records_its_device_and_settings(report):
  assert report['device_kind'] in ('cpu', 'gpu')
  assert report['device'].startswith('GPU' if report['device_kind'] == 'gpu' else 'CPU')
  assert report['smoke'] is True and report['model'] == 'tiny CNN (smoke)'
  assert report['batch'] == 64 and report['steps'] > 0 and report['images'] == 60
  assert report['train_shards'] >= 2  # ExampleGen wrote several shards to interleave
  if report['device_kind'] == 'cpu':
    assert report['mixed_precision'] == 'float32' and report['xla'] is False


def test_the_product_path_reports_the_trainers_input_check_and_phase_rate(report):
  product = report['product_path']
  assert 'error' not in product, product.get('log_tail')
  assert product['exit_code'] == 0 and product['pipeline_wall_seconds'] > 0
  assert product['model'] == 'cnn' and product['train_steps'] == 3
  assert '--max-image-side 224' in product['command'] and '--min-accuracy 0' in product['command']
  assert 40 <= product['batch_size'] < 60  # capped at the train split (~80% of 60 images)
  assert product['replicas'] == 1 and isinstance(product['xla'], bool)
  assert product['input_cache']
  check = product['input_check']
  assert 0 <= check['stall_fraction'] <= 1 and isinstance(check['input_bound'], bool)
  assert check['input_examples_per_s'] > 0 and check['step_ms'] > 0
  assert check['step_examples_per_s'] == pytest.approx(
    product['batch_size'] * 1e3 / check['step_ms']
  )
  assert [p['name'] for p in product['phases']] == ['train']
  assert product['phase_seconds'] == product['phases'][0]['seconds'] > 0
  assert product['phase_examples_per_s'] == pytest.approx(
    3 * product['batch_size'] / product['phase_seconds']
  )


def test_a_failed_product_path_is_reported_with_its_log(tmp_path):
  (tmp_path / 'images').mkdir()  # empty: pipeline.py refuses it in seconds (exit 2)
  result = gpu_check.product_path(
    str(tmp_path / 'images'),
    str(tmp_path / 'product' / 'output'),
    gpu_check.SMOKE | {'smoke': True},
  )
  assert result['exit_code'] == 2 and 'model' not in result
  assert result['error'] == 'pipeline.py run exited 2, no training.json'
  assert 'empty' in result['log_tail']
  assert gpu_check.product_table(result) == [f'product path: {result["error"]}']


def test_the_real_check_refuses_to_run_without_a_gpu(capsys):
  import tensorflow as tf

  if tf.config.list_physical_devices('GPU'):
    pytest.skip('a GPU is visible: the real check would run')
  with pytest.raises(SystemExit) as exited:
    gpu_check.main(['--steps', '1'])
  assert exited.value.code == 2
  error = capsys.readouterr().err.strip()
  assert error.startswith('gpu_check: ') and '--allow-cpu' in error
  assert len(error.splitlines()) == 1  # one line, no traceback
