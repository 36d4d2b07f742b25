"""requirements-runtime.lock: requirements.lock less the development-only tools, kept current."""

from packaging.requirements import Requirement

from kubeflow import runtime_lock


def test_the_committed_runtime_lock_is_current():
  assert runtime_lock.main(['--check']) == 0


def test_development_lines_and_what_only_they_need_are_left_out():
  pins = {pin.split('==')[0].lower() for pin in runtime_lock.runtime_pins()}
  assert {'tfx', 'tensorflow', 'apache-beam', 'kfp', 'dvc', 'matplotlib'} <= pins
  assert not {'pytest', 'pytest-xdist', 'ruff', 'moto', 'execnet', 'iniconfig'} & pins
  assert len(pins) < len(runtime_lock.lock_lines(runtime_lock.LOCK))


def test_the_closure_follows_extras_and_markers():
  names = runtime_lock.closure([Requirement('apache-beam[gcp]')])
  assert 'google-cloud-bigquery' in names  # only through the gcp extra
  assert 'pytest' not in runtime_lock.closure([Requirement('apache-beam')])


def test_a_marked_line_is_development_only():
  kept = runtime_lock.runtime_requirements(['tfx==1.16.0\n', 'pytest==8  # dev: tests\n', '# x\n'])
  assert [r.name for r in kept] == ['tfx']
