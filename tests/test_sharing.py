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
