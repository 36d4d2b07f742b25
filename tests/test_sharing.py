"""The suite's own plumbing: tests that share a module- or session-wide run go to one pytest-xdist
worker (tests/conftest.py), so the run happens once."""

import pytest


@pytest.fixture(scope='module')
def shared():
  return object()


def test_tests_sharing_a_fixture_are_grouped_on_one_worker(request, shared):
  if not request.config.getvalue('loadgroup'):
    pytest.skip('not under pytest-xdist --dist loadgroup')
  assert request.node.nodeid.endswith('@tests/test_sharing.py')


def test_tests_needing_a_whole_pipeline_run_are_slow(request):
  """Under `-m 'not slow'` none is left; under the whole suite each carries the marker."""
  from tests.conftest import shared_runs

  needing = [item for item in request.session.items if shared_runs(item)]
  assert all(item.get_closest_marker('slow') for item in needing), [
    item.nodeid for item in needing if not item.get_closest_marker('slow')
  ]
  if 'not slow' in (request.config.getoption('markexpr') or ''):
    assert needing == []
